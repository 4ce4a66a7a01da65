"""``outliers``: a clustered bulk plus paired outliers off the bulk's subspace.

The bulk is the ``clusters`` construction (K clusters, dynamic range 10) in ``latent_dim``
axes. Each of ``n_directions`` outlier directions gets its own extra latent axis, so outliers
are displaced orthogonally to everything the bulk spans: member k of direction j sits at
centre + (outlier_factor + k pair_offset) Rg e_{latent_dim + j}, Rg the bulk radius of gyration.
Outlier rows get label -1.

The out-of-sample ("addplot") test uses two extras: in-sample added points drawn after all
fit draws (so the fit data is bit-identical with or without them), and
:func:`make_anchored_addplot`, anomalies anchored at each cluster along random directions
orthogonal to the bulk's span in D-space.
"""

from __future__ import annotations

import numpy as np

from drfidelity.core.validation import integer, real

from . import _checks
from ._common import (Dataset, intra_cluster_nn, offset_clusters, project, radius_of_gyration,
                      split_counts)
from .spec import DatasetSpec, Knobs, ScoredColumn

OUTLIER_LABEL = -1
ANCHORED_SEED_KEY = 424242


def _displaced(center: np.ndarray, axes: np.ndarray, factors: np.ndarray,
               scale: float) -> np.ndarray:
    """Rows center + factors[i] * scale * e_{axes[i]}."""
    rows = np.tile(center, (len(axes), 1))
    rows[np.arange(len(axes)), axes] += factors * scale
    return rows


def make_outliers(n: int = 1000, d: int = 768, seed: int = 0, *, latent_dim: int = 8,
                  n_clusters: int = 5, dynamic_range: float = 10.0, cluster_sigma: float = 1.0,
                  n_directions: int = 3, per_direction: int = 2, pair_offset: float = 0.1,
                  outlier_factor: float = 3.0, n_add_bulk: int = 0, add_per_direction: int = 0,
                  add_offset: float = 0.05) -> Dataset:
    """Bulk of n - m points (m = n_directions * per_direction) plus m deterministic outliers.

    Draw order: bulk offsets per cluster, permutation, projection (latent_dim + n_directions
    axes), then the optional added points (cluster ids, offsets), projected with the same Q.
    Extras: ``outlier_idx`` (ascending), ``outlier_dir``, ``outlier_factors``, ``bulk_scale``
    (Rg), ``centroids_latent``, ``intra_nn``; with ``n_add_bulk`` or ``add_per_direction`` also
    ``addplot_clean`` (added bulk first, then anomalies at (outlier_factor + (k+1) add_offset)
    Rg), ``addplot_labels``, ``addplot_dir``, ``addplot_factors``.
    """
    params = dict(n=n, d=d, seed=seed, latent_dim=latent_dim, n_clusters=n_clusters,
                  dynamic_range=dynamic_range, cluster_sigma=cluster_sigma,
                  n_directions=n_directions, per_direction=per_direction,
                  pair_offset=pair_offset, outlier_factor=outlier_factor, n_add_bulk=n_add_bulk,
                  add_per_direction=add_per_direction, add_offset=add_offset)
    k, latent_dim = _checks.axes_per_cluster(n_clusters, latent_dim)
    n_dir = integer("n_directions", n_directions, 1)
    per_dir = integer("per_direction", per_direction, 1)
    real("dynamic_range", dynamic_range, low=0.0, low_open=True)
    real("cluster_sigma", cluster_sigma, low=0.0, low_open=True)
    real("pair_offset", pair_offset, low=0.0)
    real("outlier_factor", outlier_factor, low=0.0, low_open=True)
    real("add_offset", add_offset, low=0.0)
    n_add_bulk = integer("n_add_bulk", n_add_bulk, 0)
    add_per_dir = integer("add_per_direction", add_per_direction, 0)
    total_dim = latent_dim + n_dir
    m = n_dir * per_dir
    n, d, seed = _checks.shape(n, d, seed, min_d=total_dim,
                               latent="total latent (latent_dim + n_directions)")
    if not 0 < m < n // 10:
        raise ValueError(f"n={n} too small: the {m} outliers (n_directions * per_direction) "
                         f"must be fewer than n // 10 = {n // 10}")
    n_bulk = n - m
    if n_bulk < 2 * k:
        raise ValueError(f"n={n} too small: each of the {k} clusters needs 2 bulk points")
    params["total_latent_dim"] = total_dim

    rng = np.random.default_rng(seed)
    blocks, bulk_labels = offset_clusters(rng, split_counts(n_bulk, k), latent_dim,
                                          cluster_sigma)
    intra_nn = intra_cluster_nn(blocks)
    centroids = dynamic_range * intra_nn / np.sqrt(2) * np.eye(k, latent_dim)
    bulk = np.vstack(blocks) + centroids[bulk_labels]
    rg = radius_of_gyration(bulk)
    bulk = np.hstack([bulk, np.zeros((n_bulk, n_dir))])
    center = bulk.mean(axis=0)

    out_dir = np.repeat(np.arange(n_dir, dtype=np.int64), per_dir)
    out_factor = outlier_factor + np.tile(np.arange(per_dir), n_dir) * pair_offset
    latent = np.vstack([bulk, _displaced(center, latent_dim + out_dir, out_factor, rg)])
    labels = np.concatenate([bulk_labels, np.full(m, OUTLIER_LABEL, dtype=np.int64)])
    direction = np.concatenate([np.full(n_bulk, -1, dtype=np.int64), out_dir])
    factor = np.concatenate([np.full(n_bulk, np.nan), out_factor])

    order = rng.permutation(n)
    latent, labels, direction, factor = (latent[order], labels[order], direction[order],
                                         factor[order])
    clean, q = project(latent, rng, d)
    outlier_idx = np.flatnonzero(labels == OUTLIER_LABEL)
    extras = {"outlier_idx": outlier_idx, "outlier_dir": direction[outlier_idx],
              "outlier_factors": factor[outlier_idx], "bulk_scale": np.float64(rg),
              "centroids_latent": centroids, "intra_nn": np.float64(intra_nn)}

    if n_add_bulk or add_per_dir:
        assign = rng.integers(0, k, n_add_bulk)
        added = centroids[assign] + rng.normal(0.0, cluster_sigma, (n_add_bulk, latent_dim))
        add_dir = np.repeat(np.arange(n_dir, dtype=np.int64), add_per_dir)
        add_factor = outlier_factor + (np.tile(np.arange(add_per_dir), n_dir) + 1) * add_offset
        added = np.vstack([np.hstack([added, np.zeros((n_add_bulk, n_dir))]),
                           _displaced(center, latent_dim + add_dir, add_factor, rg)])
        extras.update(
            addplot_clean=np.ascontiguousarray(added @ q.T),
            addplot_labels=np.concatenate([assign.astype(np.int64),
                                           np.full(len(add_dir), OUTLIER_LABEL, np.int64)]),
            addplot_dir=np.concatenate([np.full(n_add_bulk, -1, np.int64), add_dir]),
            addplot_factors=np.concatenate([np.full(n_add_bulk, np.nan), add_factor]))
    return Dataset("outliers", clean, clean, labels, extras=extras, params=params)


def make_anchored_addplot(base: Dataset, deviation: float = 3.0, pair_offset: float = 0.1,
                          extra_dims: int = 8, seed: int = 0) -> dict[str, np.ndarray]:
    """Two anomalies per cluster of ``base``, displaced from its centroid orthogonally to the bulk.

    U (D x extra_dims) is an orthonormal basis drawn from SeedSequence([seed, 424242]) with the
    bulk's span (right singular vectors above 1e-8 of the largest) projected out; cluster k gets
    the unit direction u_k = U dirs_k and rows cent_k + r Rg u_k for r = deviation and
    deviation + pair_offset. Returns ``clean`` (2K x D, pairs adjacent), ``anchor``, ``radii``,
    ``extra_basis`` (U).
    """
    real("deviation", deviation, low=0.0, low_open=True)
    real("pair_offset", pair_offset, low=0.0)
    extra_dims = integer("extra_dims", extra_dims, 1)
    seed = integer("seed", seed, 0)
    in_bulk = base.labels != OUTLIER_LABEL
    bulk, bulk_labels = base.clean[in_bulk], base.labels[in_bulk]
    if extra_dims > bulk.shape[1]:
        raise ValueError(f"extra_dims={extra_dims} exceeds the data dimension {bulk.shape[1]}")
    rg = radius_of_gyration(bulk)
    _, singular, vt = np.linalg.svd(bulk - bulk.mean(axis=0), full_matrices=False)
    span = vt[singular > 1e-8 * singular[0]]
    if span.shape[0] + extra_dims > bulk.shape[1]:
        raise ValueError(f"extra_dims={extra_dims} does not fit beside the bulk's "
                         f"{span.shape[0]}-dimensional span in D={bulk.shape[1]}")

    rng = np.random.default_rng(np.random.SeedSequence([seed, ANCHORED_SEED_KEY]))
    g = rng.normal(size=(bulk.shape[1], extra_dims))
    basis, _ = np.linalg.qr(g - span.T @ (span @ g))
    k = int(bulk_labels.max()) + 1
    directions = rng.normal(size=(k, extra_dims))
    directions = directions / np.linalg.norm(directions, axis=1, keepdims=True)

    radii = np.tile([deviation, deviation + pair_offset], k)
    anchor = np.repeat(np.arange(k, dtype=np.int64), 2)
    rows = [bulk[bulk_labels == c].mean(axis=0) + r * rg * (basis @ directions[c])
            for c, r in zip(anchor, radii)]
    return {"clean": np.vstack(rows), "anchor": anchor, "radii": radii, "extra_basis": basis}


def _blurb(knobs: Knobs) -> str:
    return ("A clustered bulk plus pairs of outliers displaced off the bulk's subspace "
            f"({knobs['outlier_factor']:g}× the bulk radius of gyration); the third "
            "scored column ranks Spearman ρ over the outlier-involving pairs.")


SPEC = DatasetSpec(
    name="outliers", generator=make_outliers, title="Off-subspace outliers", blurb=_blurb,
    extras=("outlier_idx", "outlier_dir", "outlier_factors"), gallery="outlier_stars",
    scored=(ScoredColumn("outlier_shepard__vs_ambient", "outlier pts", "outlier ρ",
                         "Outlier pairs (Shepard ρ over anomaly-involving pairs)", "outl.",
                         r"outlier $\rho$"),),
    scatter=("outlier_shepard__vs_ambient", "outlier-pair Shepard ρ (median)"),
    figure_stems={"gallery": "outlier_gallery", "score_scatter": "outlier_score_scatter"},
    paper_figures=("gallery", "score_scatter"))
