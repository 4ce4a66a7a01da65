"""Datasets: the geometric promises of §1 and the cheap checks of §6.8 (synth, clusters,
outliers, populations, noise_dims), on small instances."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from drfidelity.datasets import make_anchored_addplot, make_dataset
from drfidelity.datasets import generate
from drfidelity.datasets._common import (haar_orthogonal, intra_cluster_nn, project,
                                         radius_of_gyration, split_counts)
from drfidelity.datasets.noise_dims import ROTATION_STREAM


def test_split_counts_gives_the_remainder_to_the_first_groups():
    assert split_counts(1000, 7).tolist() == [143] * 6 + [142]
    assert split_counts(400, 7).tolist() == [58] + [57] * 6
    assert split_counts(3, 5).tolist() == [1, 1, 1, 0, 0]


def test_projection_is_an_isometry():
    latent = np.random.default_rng(0).normal(size=(50, 6))
    clean, q = project(latent, np.random.default_rng(1), 40)
    np.testing.assert_allclose(q.T @ q, np.eye(6), atol=1e-14)
    np.testing.assert_allclose(pdist(clean), pdist(latent), rtol=1e-12)


def test_radius_of_gyration_and_spacing_helpers():
    square = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]]) + 5.0
    assert radius_of_gyration(square) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    line = np.array([[0.0], [1.0], [3.0]])
    # nearest-other distances 1, 1, 2 in one block and 4, 4 in another: median of (1,1,2,4,4)
    assert intra_cluster_nn([line, np.array([[0.0], [4.0]])]) == 2.0


def test_density_regions():
    ds = make_dataset("density", n=1000, d=30, seed=0)
    assert np.bincount(ds.labels).tolist() == [400, 450, 150]
    assert ds.truth is ds.clean
    centred = np.linalg.norm(ds.clean - ds.clean[ds.labels == 1].mean(axis=0), axis=1)
    assert np.median(centred[ds.labels == 2]) == pytest.approx(6.0, abs=0.1)
    density = ds.extras["log_local_density"]
    assert density[ds.labels == 1].min() > density[ds.labels == 0].max()


def test_clusters_dynamic_range_and_spread():
    for dynamic_range in (20.0, 5.0):
        ds = make_dataset("clusters", n=700, d=30, seed=2, dynamic_range=dynamic_range)
        centroid_distances = pdist(ds.extras["centroids_latent"])
        np.testing.assert_allclose(centroid_distances / ds.extras["intra_nn"], dynamic_range,
                                   rtol=1e-12)
    assert sorted(set(ds.labels.tolist())) == list(range(7))
    eigenvalues = np.linalg.eigvalsh(np.cov(ds.clean.T))
    assert eigenvalues.sum() ** 2 / (eigenvalues**2).sum() > 4  # participation ratio


def test_transition_states_bridges_and_time():
    ds = make_dataset("transition", n=1000, d=30, seed=0)
    labels, t = ds.labels, ds.extras["t"]
    assert np.bincount(labels[labels >= 0]).tolist() == [86] * 5 + [85] * 2
    assert (labels == -1).sum() == 400
    assert t.min() >= 0.0 and t.max() < 1.0
    np.testing.assert_array_equal(t[labels >= 0], labels[labels >= 0] / 7)
    assert ds.extras["centroids_latent"].shape == (7, 9)
    assert ds.extras["centroids_D"].shape == (7, 30)
    spacing = intra_cluster_nn([ds.clean[labels == k] for k in range(7)])
    assert spacing == pytest.approx(0.297, abs=0.01)
    open_chain = make_dataset("transition", n=1000, d=30, seed=0, closed_loop=False)
    bridge_t = open_chain.extras["t"][open_chain.labels == -1]
    assert bridge_t.max() < 6 / 7 and open_chain.params["closed_loop"] is False


@pytest.fixture(scope="module")
def outliers():
    return make_dataset("outliers", n=400, d=40, seed=1, outlier_factor=4.0)


def bulk_span(clean, labels):
    bulk = clean[labels != -1]
    _, singular, vt = np.linalg.svd(bulk - bulk.mean(axis=0), full_matrices=False)
    return bulk.mean(axis=0), vt[singular > 1e-8 * singular[0]]


def test_outliers_geometry(outliers):
    clean, labels, extras = outliers.clean, outliers.labels, outliers.extras
    idx, direction, factor = extras["outlier_idx"], extras["outlier_dir"], extras["outlier_factors"]
    assert np.array_equal(idx, np.flatnonzero(labels == -1)) and np.all(np.diff(idx) > 0)
    rg = radius_of_gyration(clean[labels != -1])
    assert extras["bulk_scale"] == pytest.approx(rg, rel=1e-12)
    center, span = bulk_span(clean, labels)
    assert span.shape[0] == 8
    displacement = clean[idx] - center
    np.testing.assert_allclose(np.linalg.norm(displacement, axis=1), factor * rg, rtol=1e-12)
    assert np.abs(displacement @ span.T).max() < 1e-9 * rg
    unit = displacement / np.linalg.norm(displacement, axis=1, keepdims=True)
    cosines = unit @ unit.T
    same = direction[:, None] == direction[None, :]
    np.testing.assert_allclose(cosines[same], 1.0, atol=1e-12)
    np.testing.assert_allclose(cosines[~same], 0.0, atol=1e-12)
    for j in range(3):
        pair = clean[idx[direction == j]]
        assert np.linalg.norm(pair[0] - pair[1]) == pytest.approx(0.1 * rg, rel=1e-9)
    assert sorted(factor.tolist()) == [4.0, 4.0, 4.0, 4.1, 4.1, 4.1]


def test_outliers_addplot_extras_leave_fit_data_unchanged(outliers):
    extended = make_dataset("outliers", n=400, d=40, seed=1, outlier_factor=4.0,
                            n_add_bulk=20, add_per_direction=1)
    assert np.array_equal(extended.clean, outliers.clean)
    assert np.array_equal(extended.labels, outliers.labels)
    added, added_labels = extended.extras["addplot_clean"], extended.extras["addplot_labels"]
    assert added.shape == (23, 40) and np.all(added_labels[:20] >= 0)
    center, _ = bulk_span(outliers.clean, outliers.labels)
    rg = outliers.extras["bulk_scale"]
    idx, direction = outliers.extras["outlier_idx"], outliers.extras["outlier_dir"]
    for row, j in zip(added[20:], extended.extras["addplot_dir"][20:]):
        assert np.linalg.norm(row - center) == pytest.approx(4.05 * rg, rel=1e-12)
        partner = outliers.clean[idx[direction == j][0]]
        cosine = (row - center) @ (partner - center) / (
            np.linalg.norm(row - center) * np.linalg.norm(partner - center))
        assert cosine == pytest.approx(1.0, abs=1e-12)


def test_anchored_addplot_geometry(outliers):
    anchored = make_anchored_addplot(outliers, deviation=3.0, pair_offset=0.1, seed=4)
    again = make_anchored_addplot(outliers, deviation=3.0, pair_offset=0.1, seed=4)
    assert all(np.array_equal(anchored[k], again[k]) for k in anchored)
    assert anchored["anchor"].tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert anchored["radii"].tolist() == [3.0, 3.1] * 5
    bulk_mask = outliers.labels != -1
    rg = radius_of_gyration(outliers.clean[bulk_mask])
    _, span = bulk_span(outliers.clean, outliers.labels)
    basis = anchored["extra_basis"]
    np.testing.assert_allclose(basis.T @ basis, np.eye(8), atol=1e-13)
    assert np.abs(span @ basis).max() < 1e-12
    for row, cluster, radius in zip(anchored["clean"], anchored["anchor"], anchored["radii"]):
        deviation = row - outliers.clean[outliers.labels == cluster].mean(axis=0)
        assert np.linalg.norm(deviation) == pytest.approx(radius * rg, rel=1e-12)
        assert np.abs(span @ deviation).max() < 1e-9 * rg


def test_populations_split_and_labels():
    ds = make_dataset("populations", n=1000, d=40, seed=0)
    population = ds.extras["population"]
    assert np.bincount(population).tolist() == [950, 50]
    assert np.bincount(ds.labels).tolist() == [190] * 5 + [10] * 5
    assert np.array_equal(ds.labels >= 5, population == 1)
    assert ds.params["n_majority"] == 950 and ds.params["total_latent_dim"] == 17


def test_populations_centre_geometry():
    """Cluster means sit at the designed centres: within sqrt(2) c, across group_range sqrt(2) c."""
    ds = make_dataset("populations", n=1000, d=40, seed=0, group_range=3.0)
    means = np.array([ds.clean[ds.labels == k].mean(axis=0) for k in range(10)])
    c = ds.extras["center_scale"]
    distances = np.linalg.norm(means[:, None] - means[None, :], axis=2)
    within = np.concatenate([distances[:5, :5][np.triu_indices(5, 1)],
                             distances[5:, 5:][np.triu_indices(5, 1)]])
    across = distances[:5, 5:].ravel()
    np.testing.assert_allclose(within, np.sqrt(2) * c, rtol=0.1)
    np.testing.assert_allclose(across, 3.0 * np.sqrt(2) * c, rtol=0.05)


def test_random_walk_is_a_cumulative_sum_per_series():
    ds = make_dataset("random_walk", n=300, d=7, seed=0, n_series=3, step=0.01)
    series, t = ds.extras["series"], ds.extras["t"]
    assert np.array_equal(series, np.repeat([0, 1, 2], 100))
    assert np.array_equal(t, np.tile(np.arange(100), 3))
    steps = np.diff(ds.clean, axis=0)[np.diff(series) == 0]
    assert np.abs(steps).max() <= 0.01 and np.abs(ds.clean[t == 0]).max() <= 0.01
    alone = make_dataset("random_walk", n=100, d=7, seed=0, n_series=1, step=0.01)
    assert np.array_equal(alone.clean, ds.clean[:100])  # series s uses SeedSequence([seed, s])


def test_noise_dims_contract():
    small = make_dataset("noise_dims", n=300, d=10, seed=42)
    large = make_dataset("noise_dims", n=300, d=50, seed=42)
    assert small.truth.shape == (300, 3) and large.clean.shape == (300, 50)
    assert np.array_equal(small.clean[:, :3], large.clean[:, :3])
    np.testing.assert_allclose(large.clean.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(large.clean.std(axis=0), 1.0, rtol=1e-12)
    assert np.bincount(small.labels).tolist() == [100, 100, 100]
    raw = make_dataset("noise_dims", n=300, d=10, seed=42, standardize=False)
    assert np.abs(raw.clean[:, :3] - np.eye(3)[raw.labels]).max() < 0.05


def test_haar_draw_is_orthogonal_with_the_sign_fix():
    """Q is orthogonal and Q^T G upper triangular with a positive diagonal: the unique QR
    factor that makes Q Haar, whatever sign convention LAPACK picked."""
    g = np.random.default_rng(np.random.SeedSequence([7, 30, ROTATION_STREAM])).standard_normal(
        (30, 30))
    q = haar_orthogonal(np.random.default_rng(np.random.SeedSequence([7, 30, ROTATION_STREAM])),
                        30)
    np.testing.assert_allclose(q.T @ q, np.eye(30), atol=1e-12)
    r = q.T @ g
    np.testing.assert_allclose(np.tril(r, -1), 0.0, atol=1e-12)
    assert (np.diag(r) > 0).all()


def test_noise_dims_rotation_keeps_distances_truth_and_labels():
    plain = make_dataset("noise_dims", n=300, d=12, seed=42)
    turned = make_dataset("noise_dims", n=300, d=12, seed=42, rotation_seed=5)
    q = haar_orthogonal(np.random.default_rng(np.random.SeedSequence([5, 12, ROTATION_STREAM])),
                        12)
    assert np.array_equal(turned.clean, plain.clean @ q)  # the draw the docstring states
    np.testing.assert_allclose(pdist(turned.clean), pdist(plain.clean), rtol=1e-12)
    assert np.array_equal(turned.truth, plain.truth) and np.array_equal(turned.labels,
                                                                        plain.labels)
    # the signal no longer sits in the first columns: no column is a z-scored blob column
    assert np.abs(turned.clean[:, :3] - plain.clean[:, :3]).max() > 0.5
    assert turned.clean.flags.c_contiguous
    other = make_dataset("noise_dims", n=300, d=12, seed=42, rotation_seed=6)
    assert not np.allclose(other.clean, turned.clean)


#: sha256 over (key, dtype, bytes) of the sorted arrays of ``generate("noise_dims", ...)``,
#: computed before the rotation existed: the option off must leave every byte as it was
NOISE_DIMS_HASHES = {
    (200, 10, 42): "ddf38a661bdb2ee816e15fb92b4c4849d623cc841db74f5cd0bb7a95c5ea7c93",
    (150, 40, 7): "8b1543efd84e656d8ac3f52ee37ecd1ed53a33067d4e4b35456a823dcf60530d",
}


@pytest.mark.parametrize("shape, rotation", [(s, r) for s in NOISE_DIMS_HASHES
                                             for r in ({}, {"rotation_seed": None})])
def test_noise_dims_without_rotation_is_byte_identical(shape, rotation):
    n, d, seed = shape
    arrays = generate("noise_dims", n=n, d=d, data_seed=seed, snr="inf",
                      params={"n_principal": 3, "cluster_std": 0.005, **rotation})
    digest = hashlib.sha256()
    for key in sorted(arrays):
        digest.update(key.encode())
        digest.update(str(arrays[key].dtype).encode())
        digest.update(arrays[key].tobytes())
    assert digest.hexdigest() == NOISE_DIMS_HASHES[shape]
