"""Checks that only the generators need (cluster axes, the (n, d, seed) triple); the scalar
checks they build on are in :mod:`drfidelity.core.validation`."""

from __future__ import annotations

from drfidelity.core.validation import integer


def axes_per_cluster(n_clusters: object, dim: object, *, dim_name: str = "latent_dim",
                     min_clusters: int = 1) -> tuple[int, int]:
    """Validate ``n_clusters`` and the latent dimension that gives each centre its own axis."""
    k = integer("n_clusters", n_clusters, min_clusters)
    dim = integer(dim_name, dim, 1)
    if dim < k:
        raise ValueError(f"{dim_name} must be >= n_clusters={k} (one axis per centre), "
                         f"got {dim}")
    return k, dim


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
