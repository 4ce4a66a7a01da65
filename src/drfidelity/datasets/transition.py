"""``transition``: K dense states joined by bridges of sparse points.

States are Gaussian blobs at c_i = centroid_scale * e_i; the bridge from state a to state b
holds points c_a + u (c_b - c_a) + spread, u ~ U(0, 1), whose spread is Gaussian in latent
axes 0..spread_dims-1 (for every bridge, as upstream does, not perpendicular to it) with
width path_sigma * (1 + spread_amp * sin(pi u)), widest mid-bridge. Bridge points get label
-1. ``t`` is the cyclic position along the chain: i/K for state i, (e + u)/K on bridge e.
"""

from __future__ import annotations

import numpy as np

from drfidelity.core.validation import flag, integer, real

from . import _checks
from ._common import Dataset, project, split_counts
from .spec import DatasetSpec, Knobs

BRIDGE_LABEL = -1


def make_transition(n: int = 1000, d: int = 768, seed: int = 0, *, latent_dim: int = 9,
                    n_clusters: int = 7, cluster_frac: float = 0.6,
                    centroid_scale: float = 5.0, cluster_sigma: float = 0.138,
                    path_sigma: float = 0.22, spread_amp: float = 3.0, spread_dims: int = 3,
                    closed_loop: bool = True) -> Dataset:
    """States then bridges (edges (i, i+1), plus (K-1, 0) when ``closed_loop``).

    Counts: round(cluster_frac n) state points split over the states, the rest over the
    bridges. Draw order: state blobs, then per bridge u and its spread normals, permutation,
    projection. ``centroids_D`` uses a separate generator ``default_rng(seed + 1)`` and is thus
    NOT in the frame of ``clean`` (upstream quirk, kept; no metric uses it).
    """
    params = dict(n=n, d=d, seed=seed, latent_dim=latent_dim, n_clusters=n_clusters,
                  cluster_frac=cluster_frac, centroid_scale=centroid_scale,
                  cluster_sigma=cluster_sigma, path_sigma=path_sigma, spread_amp=spread_amp,
                  spread_dims=spread_dims, closed_loop=closed_loop)
    k, latent_dim = _checks.axes_per_cluster(n_clusters, latent_dim, min_clusters=2)
    real("cluster_frac", cluster_frac, low=0.0, high=1.0)
    real("centroid_scale", centroid_scale, low=0.0, low_open=True)
    for name in ("cluster_sigma", "path_sigma", "spread_amp"):
        real(name, params[name], low=0.0)
    spread_dims = min(integer("spread_dims", spread_dims, 0), latent_dim)
    closed_loop = flag("closed_loop", closed_loop)
    edges = np.array([(i, (i + 1) % k) for i in range(k if closed_loop else k - 1)])
    n, d, seed = _checks.shape(n, d, seed, min_d=latent_dim, min_n=k + len(edges),
                               why_n="every state and every bridge needs a point")

    n_states = int(round(cluster_frac * n))
    state_counts = split_counts(n_states, k)
    edge_counts = split_counts(n - n_states, len(edges))
    if state_counts.min() < 1 or edge_counts.min() < 1:
        raise ValueError(f"cluster_frac={cluster_frac} leaves a state or a bridge without "
                         f"points at n={n}")
    centroids = centroid_scale * np.eye(k, latent_dim)

    rng = np.random.default_rng(seed)
    states = [centroids[i] + rng.normal(0.0, cluster_sigma, (int(c), latent_dim))
              for i, c in enumerate(state_counts)]
    bridges, positions = [], []
    for (a, b), count in zip(edges, edge_counts):
        u = rng.uniform(0.0, 1.0, int(count))
        spread = np.zeros((int(count), latent_dim))
        spread[:, :spread_dims] = (rng.standard_normal((int(count), spread_dims))
                                   * (path_sigma * (1.0 + spread_amp * np.sin(np.pi * u)))[:, None])
        bridges.append(centroids[a] + u[:, None] * (centroids[b] - centroids[a]) + spread)
        positions.append(u)
    latent = np.vstack(states + bridges)
    labels = np.concatenate([np.repeat(np.arange(k, dtype=np.int64), state_counts),
                             np.full(n - n_states, BRIDGE_LABEL, dtype=np.int64)])
    t = np.concatenate([np.repeat(np.arange(k) / k, state_counts),
                        (np.repeat(np.arange(len(edges)), edge_counts)
                         + np.concatenate(positions)) / k])

    order = rng.permutation(n)
    latent, labels, t = latent[order], labels[order], t[order]
    clean, _ = project(latent, rng, d)
    centroids_d, _ = project(centroids, np.random.default_rng(seed + 1), d)
    extras = {"t": t, "centroids_latent": centroids, "centroids_D": centroids_d}
    return Dataset("transition", clean, clean, labels, extras=extras, params=params)


def _blurb(knobs: Knobs) -> str:
    loop = "a closed loop" if knobs["closed_loop"] else "a chain"
    return f"Dense states joined by {loop} of sparse bridges; colour = position along it."


SPEC = DatasetSpec(
    name="transition", generator=make_transition, title="Continuous closed-loop transition",
    blurb=_blurb, extras=("t",), gallery="cyclic_position",
    paper_figures=("gallery", "rnx"))
