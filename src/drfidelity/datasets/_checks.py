"""Argument validation shared by the generators: fail before any work, name the parameter.

Booleans are rejected wherever a number is expected (``True`` is an ``int`` in Python, and a
flag passed as a count is always a mistake).
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def integer(name: str, value: object, minimum: int | None = None) -> int:
    """``value`` as an ``int``; ValueError unless it is a (non-bool) integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def real(name: str, value: object, *, low: float | None = None, high: float | None = None,
         low_open: bool = False) -> float:
    """``value`` as a finite ``float`` in [low, high] (or (low, high] with ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value <= low if low_open else value < low):
        bound = f"> {low}" if low_open else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return value


def axes_per_cluster(n_clusters: object, dim: object, *, dim_name: str = "latent_dim",
                     min_clusters: int = 1) -> tuple[int, int]:
    """Validate ``n_clusters`` and the latent dimension that gives each centre its own axis."""
    k = integer("n_clusters", n_clusters, min_clusters)
    dim = integer(dim_name, dim, 1)
    if dim < k:
        raise ValueError(f"{dim_name} must be >= n_clusters={k} (one axis per centre), "
                         f"got {dim}")
    return k, dim


def flag(name: str, value: object) -> bool:
    """``value`` if it is a ``bool`` (numpy bools included); anything else is an error."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def shape(n: object, d: object, seed: object, *, min_d: int, latent: str = "latent",
          min_n: int = 1, why_n: str = "") -> tuple[int, int, int]:
    """Validate the common ``(n, d, seed)`` triple of a generator.

    ``min_d`` is the generator's latent dimension (the projection needs ``d >= min_d``);
    ``min_n`` the smallest usable sample size, ``why_n`` the reason shown when it is too small.
    """
    n = integer("n", n, 1)
    d = integer("d", d, 1)
    seed = integer("seed", seed, 0)
    if d < min_d:
        raise ValueError(f"d must be >= the {latent} dimension {min_d}, got d={d}")
    if n < min_n:
        raise ValueError(f"n must be >= {min_n}{' (' + why_n + ')' if why_n else ''}, got n={n}")
    return n, d, seed
