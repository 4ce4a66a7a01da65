"""The method interface: a seeded function from an (N, D) matrix to an (N, 2) embedding.

Every method is registered as a :class:`Method`. The runners :func:`embed` and
:func:`embed_extend` seed numpy's global RNG before the call (Isomap's ARPACK start vector and
PCC's reference sampling read it), reject unknown hyper-parameters and check the result, so a
wrapper only has to call its library with the benchmark's settings. Wrappers built on torch
seed torch themselves (:mod:`drfidelity.methods.torch_setup`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np


class SkipMethod(Exception):
    """The method cannot run here (e.g. toorPIA without cache and API key).

    Drivers report the reason and carry on with the other methods; it is not a failure.
    """


class NotOperable(SkipMethod):
    """The method has no out-of-sample operation; the message is the reason reported."""


@dataclass(frozen=True)
class EmbedContext:
    """Where a method may find precomputed coordinates for this input (see ``external``)."""

    root: Path
    dataset: str
    tag: str


@dataclass(frozen=True)
class Method:
    """A registered DR method.

    ``fit`` is called as ``fit(X, seed, context, **params)`` and returns an (N, 2) array.
    ``defaults`` are the benchmark's settings; ``params.yaml`` may override them by name.
    Stochastic methods run seeds 0..R-1, deterministic ones seed 0 only.

    Out-of-sample ("addplot"): ``extend`` is called as
    ``extend(X_fit, X_add, seed, context, **params)`` and returns ``(Y_fit, Y_add)``, the map
    fitted on ``X_fit`` and the rows of ``X_add`` placed on it. A method without one gives
    ``not_operable``, the reason reported instead of a result.
    """

    name: str
    stochastic: bool
    fit: Callable[..., np.ndarray]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    extend: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    not_operable: str = ""

    def __post_init__(self):
        if (self.extend is None) == (not self.not_operable):
            raise ValueError(f"method {self.name!r}: give exactly one of `extend` (an "
                             "out-of-sample operation) and `not_operable` (why there is none)")

    def seeds(self, n_seeds: int) -> list[int]:
        return list(range(n_seeds)) if self.stochastic else [0]


def embed(method: Method, X: np.ndarray, seed: int, context: EmbedContext | None = None,
          **params: Any) -> np.ndarray:
    """Run ``method`` on ``X`` with ``seed`` and return a validated float64 (N, 2) array."""
    settings = _settings(method, params)
    X = _check_data("X", X)
    np.random.seed(seed)
    return _check_embedding(method, method.fit(X, seed, context, **settings), len(X), seed)


def embed_extend(method: Method, X_fit: np.ndarray, X_add: np.ndarray, seed: int,
                 context: EmbedContext | None = None,
                 **params: Any) -> tuple[np.ndarray, np.ndarray]:
    """Fit ``method`` on ``X_fit``, place the rows of ``X_add`` on that map: ``(Y_fit, Y_add)``.

    Raises :class:`NotOperable` (a :class:`SkipMethod`) with the method's reason when it has
    no out-of-sample operation.
    """
    if method.extend is None:
        raise NotOperable(method.not_operable)
    settings = _settings(method, params)
    X_fit = _check_data("X_fit", X_fit)
    X_add = _check_data("X_add", X_add)
    if X_add.shape[1] != X_fit.shape[1]:
        raise ValueError(f"X_add has {X_add.shape[1]} columns but X_fit has {X_fit.shape[1]}")
    np.random.seed(seed)
    Y_fit, Y_add = method.extend(X_fit, X_add, seed, context, **settings)
    return (_check_embedding(method, Y_fit, len(X_fit), seed),
            _check_embedding(method, Y_add, len(X_add), seed))


def _settings(method: Method, params: Mapping[str, Any]) -> dict[str, Any]:
    """The method's defaults overridden by ``params``; unknown names are an error."""
    unknown = set(params) - set(method.defaults)
    if unknown:
        known = ", ".join(sorted(method.defaults)) or "none"
        raise ValueError(f"{method.name}: unknown parameter(s) {sorted(unknown)}; "
                         f"known: {known}")
    return {**method.defaults, **params}


def _check_data(name: str, X: np.ndarray) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"{name} must be an (N, D) matrix with N >= 2, got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number) or not np.all(np.isfinite(X)):
        raise ValueError(f"{name} must hold finite numbers")
    return X


def _check_embedding(method: Method, Y: np.ndarray, n: int, seed: int) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    if Y.shape != (n, 2):
        raise ValueError(f"{method.name} returned shape {Y.shape}, expected ({n}, 2)")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{method.name} returned non-finite coordinates (seed {seed})")
    return np.ascontiguousarray(Y)


def check_number(name: str, value: Any, *, integer: bool = False, low: float = 0.0,
                 low_open: bool = True, high: float | None = None) -> Any:
    """``value`` if it is a finite number (an int when ``integer``) with ``value > low``
    (``>= low`` when not ``low_open``) and ``value <= high``; otherwise a ValueError."""
    kind = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    valid = (not isinstance(value, bool) and isinstance(value, kind) and np.isfinite(value)
             and (value > low if low_open else value >= low)
             and (high is None or value <= high))
    if not valid:
        bound = f"{'>' if low_open else '>='} {low:g}"
        if high is not None:
            bound = f"in {'(' if low_open else '['}{low:g}, {high:g}]"
        raise ValueError(f"{name} must be {'an integer' if integer else 'a number'} {bound}, "
                         f"got {value!r}")
    return value


def check_positive(name: str, value: Any, *, integer: bool = False) -> Any:
    """``value`` if it is a finite number > 0 (an int when ``integer``); else a ValueError."""
    return check_number(name, value, integer=integer)
