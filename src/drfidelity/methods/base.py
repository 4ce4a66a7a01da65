"""The method interface: a seeded function from an (N, D) matrix to an (N, 2) embedding.

Every method is registered as a :class:`~.registry.Method`. The runners :func:`embed` and
:func:`embed_extend` seed numpy's global RNG before the call (Isomap's ARPACK start vector and
PCC's reference sampling read it), check every hyper-parameter (:meth:`Method.settings`) and
check the result, so a wrapper only has to call its library with the benchmark's settings.
Wrappers built on torch seed torch themselves (:mod:`drfidelity.methods.torch_setup`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from drfidelity.core.validation import check_map, check_matrix

from drfidelity.core.registry import Method


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


def embed(method: Method, X: np.ndarray, seed: int, context: EmbedContext | None = None,
          **params: Any) -> np.ndarray:
    """Run ``method`` on ``X`` with ``seed`` and return a validated float64 (N, 2) array
    (injected coordinates instead, when ``context`` holds them: see :func:`run_method`)."""
    return run_method(method, X, seed, context, **params)[0]


def injection_key(method: Method, settings: Mapping[str, Any]) -> tuple[str, str]:
    """(method folder, mode) under which coordinates injected for ``method`` are looked up."""
    return method.name.lower(), settings.get("mode", "embedding")


def run_method(method: Method, X: np.ndarray, seed: int, context: EmbedContext | None = None,
               **params: Any) -> tuple[np.ndarray, Path | None]:
    """The method's map of ``X``, or the coordinates injected for it.

    Parameters
    ----------
    method : Method
        A registered method (:data:`drfidelity.methods.METHODS`).
    X : array_like, shape (N, D)
        Finite data, N >= 2.
    seed : int
        Seeds numpy's global RNG before the call (and the method's own ``random_state``).
    context : EmbedContext, optional
        Where injected coordinates may be found (root, dataset, tag).
    **params
        Hyper-parameters overriding ``method.defaults``; unknown names and bad values raise
        ValueError before anything runs.

    Returns
    -------
    (numpy.ndarray, pathlib.Path or None)
        The float64 (N, 2) map and the injected file it came from (None when computed).

    Notes
    -----
    Injected files live at ``external_embeddings/<dataset>/<method>/<mode>/<tag>/seed<s>.npy``
    (method name in lower case, mode ``embedding`` unless the method has a ``mode`` setting)
    and are validated like toorPIA's cache (:func:`drfidelity.methods.external.load_cached`:
    the recorded input fingerprint must be that of ``X``).
    """
    from . import external  # it imports this module

    settings = method.settings(params)
    X = check_matrix("X", X, min_rows=2)
    if context is not None:
        directory, mode = injection_key(method, settings)
        Y = external.load_cached(context, directory, mode, seed, X)
        if Y is not None:
            return Y, external.cache_path(context, directory, mode, seed)
    np.random.seed(seed)
    return _check_embedding(method, method.fit(X, seed, context, **settings), len(X), seed), None


def embed_extend(method: Method, X_fit: np.ndarray, X_add: np.ndarray, seed: int,
                 context: EmbedContext | None = None,
                 **params: Any) -> tuple[np.ndarray, np.ndarray]:
    """Fit ``method`` on ``X_fit``, place the rows of ``X_add`` on that map: ``(Y_fit, Y_add)``.

    Raises :class:`NotOperable` (a :class:`SkipMethod`) with the method's reason when it has
    no out-of-sample operation.
    """
    if method.extend is None:
        raise NotOperable(method.not_operable)
    settings = method.settings(params)
    X_fit = check_matrix("X_fit", X_fit, min_rows=2)
    X_add = check_matrix("X_add", X_add)
    if X_add.shape[1] != X_fit.shape[1]:
        raise ValueError(f"X_add has {X_add.shape[1]} columns but X_fit has {X_fit.shape[1]}")
    np.random.seed(seed)
    Y_fit, Y_add = method.extend(X_fit, X_add, seed, context, **settings)
    return (_check_embedding(method, Y_fit, len(X_fit), seed),
            _check_embedding(method, Y_add, len(X_add), seed))


def _check_embedding(method: Method, Y: np.ndarray, n: int, seed: int) -> np.ndarray:
    return check_map(f"the map of {method.name} (seed {seed})", Y, n)
