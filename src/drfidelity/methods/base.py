"""The method interface: a seeded function from an (N, D) matrix to an (N, 2) embedding.

Every method is registered as a :class:`Method`. The runner :func:`embed` seeds numpy's global
RNG before the call (Isomap's ARPACK start vector and PCC's reference sampling read it) and
checks the result, so a wrapper only has to call its library with the benchmark's settings.
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


@dataclass(frozen=True)
class EmbedContext:
    """Where a method may find precomputed coordinates for this input (see ``external``)."""

    root: Path
    dataset: str
    tag: str
    fingerprint: str = ""


@dataclass(frozen=True)
class Method:
    """A registered DR method.

    ``fit`` is called as ``fit(X, seed, context, **params)`` and returns an (N, 2) array.
    ``defaults`` are the benchmark's settings; ``params.yaml`` may override them by name.
    Stochastic methods run seeds 0..R-1, deterministic ones seed 0 only.
    """

    name: str
    stochastic: bool
    fit: Callable[..., np.ndarray]
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def seeds(self, n_seeds: int) -> list[int]:
        return list(range(n_seeds)) if self.stochastic else [0]


def embed(method: Method, X: np.ndarray, seed: int, context: EmbedContext | None = None,
          **params: Any) -> np.ndarray:
    """Run ``method`` on ``X`` with ``seed`` and return a validated float64 (N, 2) array."""
    unknown = set(params) - set(method.defaults)
    if unknown:
        raise ValueError(f"{method.name}: unknown parameter(s) {sorted(unknown)}; "
                         f"known: {sorted(method.defaults)}")
    settings = {**method.defaults, **params}
    np.random.seed(seed)
    Y = np.asarray(method.fit(X, seed, context, **settings), dtype=np.float64)
    if Y.shape != (X.shape[0], 2):
        raise ValueError(f"{method.name} returned shape {Y.shape}, expected ({X.shape[0]}, 2)")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{method.name} returned non-finite coordinates (seed {seed})")
    return np.ascontiguousarray(Y)
