"""``populations``: a majority and a minority population, each with K clusters.

Both populations use one centre scale c = dynamic_range * intra_nn / sqrt(2), intra_nn taken
from the majority only. The majority lives in latent block 0..L-1, the minority in block
L..2L-1 shifted by delta = sqrt(2) c sqrt(group_range^2 - 1) along one more axis, so every
within-population centre distance is sqrt(2) c and every cross-population one is
group_range * sqrt(2) c.
"""

from __future__ import annotations

import numpy as np

from drfidelity.core.validation import real

from . import _checks
from ._common import Dataset, intra_cluster_nn, offset_clusters, project, split_counts
from .spec import DatasetSpec, Knobs, ScoredColumn


def make_populations(n: int = 1000, d: int = 768, seed: int = 0, *, latent_block: int = 8,
                     n_clusters: int = 5, dynamic_range: float = 10.0,
                     cluster_sigma: float = 1.0, group_range: float = 2.0,
                     minority_frac: float = 0.05) -> Dataset:
    """round(minority_frac n) minority points, the rest majority, each split over K clusters.

    Labels 0..K-1 (majority clusters) and K..2K-1 (minority clusters); ``population`` is 0 for
    the majority and 1 for the minority. Draw order: majority offsets, minority offsets,
    permutation, projection (2 latent_block + 1 axes).
    """
    params = dict(n=n, d=d, seed=seed, latent_block=latent_block, n_clusters=n_clusters,
                  dynamic_range=dynamic_range, cluster_sigma=cluster_sigma,
                  group_range=group_range, minority_frac=minority_frac)
    k, block = _checks.axes_per_cluster(n_clusters, latent_block, dim_name="latent_block")
    real("dynamic_range", dynamic_range, low=0.0, low_open=True)
    real("cluster_sigma", cluster_sigma, low=0.0, low_open=True)
    real("group_range", group_range, low=1.0)
    real("minority_frac", minority_frac, low=0.0, high=0.5, low_open=True)
    total_dim = 2 * block + 1
    n, d, seed = _checks.shape(n, d, seed, min_d=total_dim,
                               latent="total latent (2 * latent_block + 1)")
    n_minor = int(round(minority_frac * n))
    n_major = n - n_minor
    if n_minor < k or n_major < 2 * k:
        raise ValueError(f"n={n} too small for minority_frac={minority_frac}: the minority "
                         f"({n_minor}) needs >= 1 point per cluster and the majority "
                         f"({n_major}) >= 2 per cluster ({k} clusters)")
    params.update(n_majority=n_major, n_minority=n_minor, total_latent_dim=total_dim)

    rng = np.random.default_rng(seed)
    major, major_labels = offset_clusters(rng, split_counts(n_major, k), block, cluster_sigma)
    minor, minor_labels = offset_clusters(rng, split_counts(n_minor, k), block, cluster_sigma)
    intra_nn = intra_cluster_nn(major)
    scale = dynamic_range * intra_nn / np.sqrt(2)
    delta = np.sqrt(2) * scale * np.sqrt(group_range**2 - 1)
    centres = scale * np.eye(k, block)

    latent = np.zeros((n, total_dim))
    latent[:n_major, :block] = np.vstack(major) + centres[major_labels]
    latent[n_major:, block:2 * block] = np.vstack(minor) + centres[minor_labels]
    latent[n_major:, -1] = delta
    labels = np.concatenate([major_labels, minor_labels + k])
    population = np.repeat(np.array([0, 1], dtype=np.int64), [n_major, n_minor])

    order = rng.permutation(n)
    latent, labels, population = latent[order], labels[order], population[order]
    clean, _ = project(latent, rng, d)
    extras = {"population": population, "center_scale": np.float64(scale),
              "group_delta": np.float64(delta), "intra_nn": np.float64(intra_nn)}
    return Dataset("populations", clean, clean, labels, extras=extras, params=params)


def _shares(knobs: Knobs) -> tuple[float, float]:
    """Percent of the points in the majority and in the minority."""
    return 100 * (1 - knobs["minority_frac"]), 100 * knobs["minority_frac"]


def _blurb(knobs: Knobs) -> str:
    major, minor = _shares(knobs)
    return (f"A {major:g}% majority and a {minor:g}% minority, each with its own clusters, in "
            "orthogonal subspaces: is the minority's structure kept?")


SPEC = DatasetSpec(
    name="populations", generator=make_populations, title="Imbalanced two populations",
    blurb=_blurb, extras=("population",), gallery="minority_triangles",
    rankable=(ScoredColumn("minority_shepard__vs_ambient", "minority pts", "minority ρ",
                           "Minority pairs (Shepard ρ over minority-involving pairs)", "min.",
                           r"minority $\rho$"),),
    scatter=("minority_shepard__vs_ambient", "minority-pair Shepard ρ (median)"),
    figure_stems={"gallery": "population_gallery", "score_scatter": "population_score_scatter"},
    shares=_shares, paper_figures=("gallery",))
