"""``clusters``: K Gaussian clusters on orthogonal axes at a set dynamic range.

Centroids sit at s * e_i with s = dynamic_range * intra_nn / sqrt(2), so every inter-centroid
distance is exactly ``dynamic_range`` times the median within-cluster nearest-neighbour spacing.
"""

from __future__ import annotations

import numpy as np

from drfidelity.core.validation import real

from . import _checks
from ._common import Dataset, intra_cluster_nn, offset_clusters, project, split_counts
from .spec import DatasetSpec, Knobs


def make_clusters(n: int = 1000, d: int = 768, seed: int = 0, *, latent_dim: int = 8,
                  n_clusters: int = 7, dynamic_range: float = 20.0,
                  cluster_sigma: float = 1.0) -> Dataset:
    """Equal-split clusters of N(0, sigma^2) offsets around orthogonal centroids.

    Draw order: offsets cluster by cluster, permutation, projection.
    """
    params = dict(n=n, d=d, seed=seed, latent_dim=latent_dim, n_clusters=n_clusters,
                  dynamic_range=dynamic_range, cluster_sigma=cluster_sigma)
    k, latent_dim = _checks.axes_per_cluster(n_clusters, latent_dim)
    real("dynamic_range", dynamic_range, low=0.0, low_open=True)
    real("cluster_sigma", cluster_sigma, low=0.0, low_open=True)
    n, d, seed = _checks.shape(n, d, seed, min_d=latent_dim, min_n=2 * k,
                               why_n=f"each of the {k} clusters needs 2 points for its spacing")

    rng = np.random.default_rng(seed)
    blocks, labels = offset_clusters(rng, split_counts(n, k), latent_dim, cluster_sigma)
    intra_nn = intra_cluster_nn(blocks)
    centroids = dynamic_range * intra_nn / np.sqrt(2) * np.eye(k, latent_dim)
    latent = np.vstack(blocks) + centroids[labels]

    order = rng.permutation(n)
    latent, labels = latent[order], labels[order]
    clean, _ = project(latent, rng, d)
    extras = {"centroids_latent": centroids, "intra_nn": np.float64(intra_nn)}
    return Dataset("clusters", clean, clean, labels, extras=extras, params=params)


def _blurb(knobs: Knobs) -> str:
    return (f"Gaussian clusters on orthogonal axes; every inter-centroid distance is "
            f"{knobs['dynamic_range']:g}× the median within-cluster nearest-neighbour "
            "spacing, so the first-mode near band is the within-cluster pairs.")


SPEC = DatasetSpec(
    name="clusters", generator=make_clusters, title="Distinct dense clusters", blurb=_blurb,
    guide=("distance_distribution",),
    paper_figures=("distance_distribution", "gallery", "shepard", "rnx", "rank_error_quality",
                   "local_quality"))
