"""Co-ranking family: hand-checkable cases, identities, and brute-force cross-checks."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist, squareform
from sklearn.manifold import trustworthiness
from sklearn.neighbors import NearestNeighbors

from drfidelity.metrics.coranking import (
                                          auc_log_rnx,
                                          b_nx,
                                          coranking_matrix,
                                          lcmc,
                                          local_global_quality,
                                          pointwise_quality,
                                          q_nx,
                                          r_nx,
                                          rank_error_quality,
                                          rank_error_quality_from_coranking,
                                          )
from drfidelity.metrics.labels import knn_classification_accuracy
from drfidelity.metrics.ranks import rank_matrix

SIX_DATA = np.array([0.0, 1.0, 2.5, 4.5, 7.0, 10.0])[:, None]
SIX_MAP = np.array([0.0, 1.0, 2.5, 4.5, 7.0, -1.2])[:, None]


def _tie_free(n: int, d: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d))


def _ranks(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return rank_matrix(cdist(X, X)), rank_matrix(cdist(Y, Y))


def test_six_point_example_trust_continuity_and_share_kept():
    Q = coranking_matrix(SIX_DATA, SIX_MAP)
    n, k = 6, 2
    rho, r = np.indices(Q.shape) + 1  # data rank (rows), map rank (columns)
    intruder_cost = np.sum(((rho > k) & (r <= k)) * (rho - k) * Q)
    lost_cost = np.sum(((r > k) & (rho <= k)) * (r - k) * Q)
    assert (intruder_cost, lost_cost) == (9, 9)
    scale = 2.0 / (n * k * (2 * n - 3 * k - 1))
    assert 1 - scale * intruder_cost == pytest.approx(0.70, abs=1e-15)
    assert 1 - scale * lost_cost == pytest.approx(0.70, abs=1e-15)
    assert 1 - scale * intruder_cost == pytest.approx(trustworthiness(SIX_DATA, SIX_MAP,
                                                                      n_neighbors=k), abs=1e-15)
    assert q_nx(Q)[k - 1] == 8 / 12


def test_coranking_sums_and_margins():
    X, Y = _tie_free(60, 5, 0), _tie_free(60, 2, 1)
    Q = coranking_matrix(X, Y)
    assert Q.shape == (59, 59) and Q.dtype == np.int64
    assert Q.sum() == 60 * 59
    # every point has exactly one j at each rank, in either space
    np.testing.assert_array_equal(Q.sum(axis=0), np.full(59, 60))
    np.testing.assert_array_equal(Q.sum(axis=1), np.full(59, 60))


def test_coranking_matches_pair_loop_and_precomputed_and_blocks(monkeypatch):
    X, Y = _tie_free(40, 6, 2), _tie_free(40, 2, 3)
    rho, r = _ranks(X, Y)
    expected = np.zeros((39, 39), dtype=np.int64)
    for i in range(40):
        for j in range(40):
            if i != j:
                expected[rho[i, j] - 1, r[i, j] - 1] += 1
    np.testing.assert_array_equal(coranking_matrix(X, Y), expected)
    np.testing.assert_array_equal(
        coranking_matrix(squareform(pdist(X)), Y, metric="precomputed"), expected)
    monkeypatch.setattr("drfidelity.metrics.coranking._BLOCK_ELEMENTS", 7 * 40)  # 7-row blocks
    np.testing.assert_array_equal(coranking_matrix(X, Y), expected)


def test_coranking_other_metric_uses_that_metric_for_the_data():
    X, Y = np.abs(_tie_free(30, 4, 4)), _tie_free(30, 2, 5)
    np.testing.assert_array_equal(
        coranking_matrix(X, Y, metric="cityblock"),
        coranking_matrix(cdist(X, X, metric="cityblock"), Y, metric="precomputed"))


def test_q_nx_equals_recall_at_k_without_ties():
    X, Y = _tie_free(120, 8, 6), _tie_free(120, 2, 7)
    q = q_nx(coranking_matrix(X, Y))
    for k in (1, 5, 15, 30, 119):
        nx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X, return_distance=False)
        ny = NearestNeighbors(n_neighbors=k + 1).fit(Y).kneighbors(Y, return_distance=False)
        overlap = [len(set(a[1:]) & set(b[1:])) for a, b in zip(nx, ny)]
        assert q[k - 1] == pytest.approx(np.mean(overlap) / k, abs=1e-15)


def test_identity_map_is_perfect_everywhere():
    X = _tie_free(50, 2, 8)
    Q = coranking_matrix(X, X)
    np.testing.assert_array_equal(Q, np.diag(np.full(49, 50)))
    np.testing.assert_array_equal(q_nx(Q), 1.0)
    np.testing.assert_array_equal(r_nx(Q), 1.0)
    np.testing.assert_array_equal(b_nx(Q), 0.0)
    assert auc_log_rnx(Q) == 1.0
    assert local_global_quality(Q) == (1, 1.0, 1.0)
    kappas = np.arange(1, 50)
    np.testing.assert_array_equal(rank_error_quality_from_coranking(Q, kappas, np.arange(0, 49)), 1.0)
    np.testing.assert_array_equal(pointwise_quality(X, X, 5, 0), 1.0)


def test_random_map_has_r_nx_near_zero():
    X, Y = _tie_free(400, 10, 9), _tie_free(400, 2, 10)
    r = r_nx(coranking_matrix(X, Y))
    assert r.shape == (398,)
    assert abs(r.mean()) < 0.01
    assert np.abs(r[10:]).max() < 0.05  # small K are noisy: K=1 keeps 0 or 1 of 1 per point


def test_b_nx_sign_on_a_hand_built_map():
    # Data: a chain 0-1-2 and a far point at 10. The map draws the far point at 1.4, between
    # points 1 and 2, so it becomes their nearest neighbour.
    data = np.array([0.0, 1.0, 2.0, 10.0])[:, None]
    drawn = np.array([0.0, 1.0, 2.0, 1.4])[:, None]
    Q = coranking_matrix(data, drawn)
    np.testing.assert_array_equal(Q, [[1, 3, 0], [1, 0, 3], [2, 1, 1]])
    # K = 2 block: one intrusion (3 -> 1 is drawn nearest, rho=2 r=1) and three extrusions
    # (the true nearest neighbours of 0, 1, 2 pushed to rank 2 by the inserted point).
    assert b_nx(Q)[1] == (1 - 3) / (2 * 4)
    np.testing.assert_array_equal(b_nx(coranking_matrix(drawn, data)), -b_nx(Q))


def test_lcmc_and_local_global_split():
    Q = coranking_matrix(SIX_DATA, SIX_MAP)
    q = q_nx(Q)
    np.testing.assert_allclose(lcmc(Q), q - np.arange(1, 6) / 5, atol=1e-15)
    k_max, q_local, q_global = local_global_quality(Q)
    assert k_max == int(np.argmax(q[:-1] - np.arange(1, 5) / 5)) + 1
    assert q_local == pytest.approx(q[:k_max].mean())
    assert q_global == pytest.approx(q[k_max - 1:].mean())
    weights = 1 / np.arange(1, 5)
    assert auc_log_rnx(Q) == pytest.approx(np.sum(r_nx(Q) * weights) / weights.sum())


def _brute_force_weights(rho, r, kappa_s, kappa_t):
    off_diagonal = ~np.eye(rho.shape[0], dtype=bool)
    region = ((rho <= kappa_s) | (r <= kappa_s)) & off_diagonal
    return region, region & (np.abs(rho - r) <= kappa_t)


def test_rank_error_quality_matches_pairwise_definition():
    X, Y = _tie_free(30, 5, 11), _tie_free(30, 2, 12)
    rho, r = _ranks(X, Y)
    kappa_s, kappa_t = np.array([1, 3, 10, 29]), np.array([0, 2, 7, 28])
    got = rank_error_quality_from_coranking(coranking_matrix(X, Y), kappa_s, kappa_t)
    assert got.shape == (4, 4)  # one row per tolerance
    for a, kt in enumerate(kappa_t):
        for b, ks in enumerate(kappa_s):
            region, ok = _brute_force_weights(rho, r, ks, kt)
            assert got[a, b] == pytest.approx(ok.sum() / region.sum(), abs=1e-15)
    assert isinstance(rank_error_quality_from_coranking(coranking_matrix(X, Y), 3, 2), float)
    assert rank_error_quality(X, Y, 3, 2) == rank_error_quality_from_coranking(
        coranking_matrix(X, Y), 3, 2)


def test_rank_error_normalisation_stays_within_one():
    # Lueks et al. divide by kappa_s N; the region is larger when the map has intruders, so with
    # every error tolerated their value would exceed 1. Ours is the share of the region: 1.
    Q = coranking_matrix(SIX_DATA, SIX_MAP)
    rho, r = _ranks(SIX_DATA, SIX_MAP)
    region, _ = _brute_force_weights(rho, r, 2, 4)
    assert region.sum() > 2 * 6
    np.testing.assert_array_equal(rank_error_quality_from_coranking(Q, np.arange(1, 6), 4), 1.0)
    grid = rank_error_quality_from_coranking(Q, np.arange(1, 6), np.arange(0, 5))
    assert ((grid >= 0) & (grid <= 1)).all()
    assert (np.diff(grid, axis=0) >= 0).all()  # more tolerance never lowers quality


def test_pointwise_quality_matches_symmetrised_definition():
    X, Y = _tie_free(25, 4, 13), _tie_free(25, 2, 14)
    rho, r = _ranks(X, Y)
    region, ok = _brute_force_weights(rho, r, 4, 2)
    expected = (ok.sum(axis=1) + ok.sum(axis=0)) / (region.sum(axis=1) + region.sum(axis=0))
    np.testing.assert_allclose(pointwise_quality(X, Y, 4, 2), expected, atol=1e-15)


def test_pointwise_quality_flags_the_moved_point():
    q = pointwise_quality(SIX_DATA, SIX_MAP, 2, 0)
    assert np.argmin(q) == 5 and q[5] == 0.0


@pytest.mark.parametrize("call, message", [
    (lambda: coranking_matrix(np.zeros((5, 3)), np.zeros((4, 2))), "Y has shape \\(4, 2\\), expected \\(5, d\\)"),
    (lambda: coranking_matrix(np.zeros((5, 4)), np.zeros((5, 2)), metric="precomputed"),
     "square distance matrix"),
    (lambda: coranking_matrix(np.ones((5, 5)), np.zeros((5, 2)), metric="precomputed"),
     "zero on the diagonal"),
    (lambda: coranking_matrix(np.zeros((5, 3)), np.zeros((5, 2)), metric="cosinus"), "metric"),
    (lambda: coranking_matrix(np.full((5, 3), np.nan), np.zeros((5, 2))), "NaN"),
    (lambda: coranking_matrix(np.zeros((3, 3)), np.zeros((3, 2))), "at least"),
    (lambda: q_nx(np.zeros((3, 4), dtype=int)), "square"),
    (lambda: q_nx(np.zeros((3, 3))), "integer"),
    (lambda: rank_error_quality_from_coranking(np.eye(5, dtype=int), 0, 1), "kappa_s"),
    (lambda: rank_error_quality_from_coranking(np.eye(5, dtype=int), 2, 5), "kappa_t"),
    (lambda: rank_error_quality_from_coranking(np.eye(5, dtype=int), 2.5, 1), "kappa_s"),
    (lambda: pointwise_quality(SIX_DATA, SIX_MAP, 6, 1), "kappa_s"),
])
def test_invalid_inputs_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_knn_classification_accuracy_is_deterministic_and_sane():
    rng = np.random.default_rng(15)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    labels = np.repeat(np.arange(3), 40)
    Y = centres[labels] + rng.normal(scale=0.5, size=(120, 2))
    assert knn_classification_accuracy(Y, labels) == 1.0
    shuffled = rng.permutation(labels)
    first = knn_classification_accuracy(Y, shuffled, k=5, folds=5, seed=3)
    assert first == knn_classification_accuracy(Y, shuffled, k=5, folds=5, seed=3)
    assert first < 0.6  # labels unrelated to position: near chance (1/3)
    with pytest.raises(ValueError, match="at least folds"):
        knn_classification_accuracy(Y[:42], labels[:42], folds=5)


def test_too_large_a_coranking_matrix_is_refused_before_allocating(monkeypatch):
    from drfidelity.core import validation

    monkeypatch.setattr(validation, "available_memory", lambda: 2**20)
    rng = np.random.default_rng(0)
    with pytest.raises(MemoryError, match=r"co-ranking matrix for N = 400 points needs about"):
        coranking_matrix(rng.normal(size=(400, 3)), rng.normal(size=(400, 2)))


def test_kappas_out_of_range_are_refused_before_the_coranking_matrix(monkeypatch):
    """The O(N^2 log N) matrix is never built for a question that has no answer."""
    from drfidelity.metrics import coranking

    def never(*_):
        raise AssertionError("the co-ranking matrix was built")

    monkeypatch.setattr(coranking, "_coranking", never)
    X = np.random.default_rng(1).normal(size=(30, 4))
    for kappas, words in (((0, 5), "kappa_s must lie in [1, 29]"),
                          ((5, 29), "kappa_t must lie in [0, 28]"),
                          (([3, 40], 2), "kappa_s must lie in [1, 29]")):
        with pytest.raises(ValueError, match=re.escape(words)):
            coranking.rank_error_quality(X, X[:, :2], *kappas)
