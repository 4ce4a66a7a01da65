"""Trustworthiness, continuity and recall@k against scikit-learn and quality.md's hand example."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.manifold import trustworthiness as sklearn_trustworthiness

from drfidelity.metrics import continuity, neighbourhood_scores, recall_at_k, trustworthiness
from drfidelity.metrics.ranks import rank_matrix
from scipy.spatial.distance import pdist, squareform


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    return X, X[:, :2] + 0.7 * rng.normal(size=(n, 2))


@pytest.mark.parametrize("k", [1, 5, 15, 30, 77, 149])
def test_matches_sklearn_on_tie_free_data(k):
    X, Y = _data()
    assert abs(trustworthiness(X, Y, k) - sklearn_trustworthiness(X, Y, n_neighbors=k)) <= 1e-12
    assert abs(continuity(X, Y, k) - sklearn_trustworthiness(Y, X, n_neighbors=k)) <= 1e-12


def _brute(X, Y, k):
    """T, C and recall straight from the rank definition (ties by index)."""
    n = len(X)
    rx, ry = rank_matrix(squareform(pdist(X))), rank_matrix(squareform(pdist(Y)))
    scale = 2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))
    near_x, near_y = (rx >= 1) & (rx <= k), (ry >= 1) & (ry <= k)
    t = 1 - scale * (rx - k)[near_y & ~near_x].sum()
    c = 1 - scale * (ry - k)[near_x & ~near_y].sum()
    return t, c, (near_x & near_y).sum(axis=1).mean() / k


@pytest.mark.parametrize("k", [2, 5, 12])
def test_ties_follow_the_index_rule(k):
    rng = np.random.default_rng(4)
    X = rng.integers(0, 4, size=(40, 3)).astype(float)  # many exact ties (and duplicates)
    Y = rng.integers(0, 3, size=(40, 2)).astype(float)
    t, c, r = _brute(X, Y, k)
    assert trustworthiness(X, Y, k) == pytest.approx(t, abs=1e-15)
    assert continuity(X, Y, k) == pytest.approx(c, abs=1e-15)
    assert recall_at_k(X, Y, k) == pytest.approx(r, abs=1e-15)


def test_six_point_example():
    line = np.array([0.0, 1.0, 2.5, 4.5, 7.0, 10.0])
    X = np.column_stack([line, np.zeros(6)])
    Y = X.copy()
    Y[5, 0] = -1.2
    assert trustworthiness(X, Y, 2) == pytest.approx(0.70, abs=1e-15)
    assert continuity(X, Y, 2) == pytest.approx(0.70, abs=1e-15)
    assert recall_at_k(X, Y, 2) == 8 / 12


def test_identity_and_precomputed():
    X, Y = _data(120)
    assert trustworthiness(Y, Y, 10) == continuity(Y, Y, 10) == recall_at_k(Y, Y, 10) == 1.0
    D = squareform(pdist(X))
    assert trustworthiness(D, Y, 10, metric="precomputed") == trustworthiness(X, Y, 10)


@pytest.mark.parametrize("function, k, match", [
    (trustworthiness, 50, "N/2"),
    (continuity, 60, "N/2"),
    (recall_at_k, 100, "< N"),
    (trustworthiness, 0, "positive integer"),
    (recall_at_k, 2.0, "positive integer"),
])
def test_k_out_of_range(function, k, match):
    X, Y = _data(100)
    with pytest.raises(ValueError, match=match):
        function(X, Y, k)


def test_sequences_of_k_equal_single_calls_and_sklearn():
    X, Y = _data(200, seed=3)
    ks = (1, 5, 15, 30, 99)
    both = neighbourhood_scores(X, Y, k=ks)
    assert list(both) == [f"{family}_k{k}" for family in ("recall", "trust", "cont") for k in ks]
    for name, function in (("trust", trustworthiness), ("cont", continuity),
                           ("recall", recall_at_k)):
        values = function(X, Y, list(ks))
        assert isinstance(values, np.ndarray) and values.dtype == np.float64
        assert values.shape == (len(ks),)
        assert list(values) == [both[f"{name}_k{k}"] for k in ks]
        assert [function(X, Y, k) for k in ks] == list(values)
    for k in ks:
        assert abs(both[f"trust_k{k}"] - sklearn_trustworthiness(X, Y, n_neighbors=k)) <= 1e-12
        assert abs(both[f"cont_k{k}"] - sklearn_trustworthiness(Y, X, n_neighbors=k)) <= 1e-12


def test_one_int_gives_floats_and_numpy_ints_are_accepted():
    X, Y = _data(100)
    single = neighbourhood_scores(X, Y, k=np.int64(7))
    assert list(single) == ["recall_k7", "trust_k7", "cont_k7"]
    assert all(isinstance(v, float) for v in single.values())
    assert single["recall_k7"] == recall_at_k(X, Y, 7)
    assert trustworthiness(X, Y, np.array([7, 8]))[0] == single["trust_k7"]


@pytest.mark.parametrize("k, match", [((), "non-empty"), ((5, 0), "positive integer"),
                                      ((5, 50), "N/2"), ([5, 2.5], "positive integer"),
                                      (True, "positive integer")])
def test_bad_k_sequences(k, match):
    X, Y = _data(100)
    with pytest.raises(ValueError, match=match):
        neighbourhood_scores(X, Y, k=k)


@pytest.mark.parametrize("which", ["X", "Y"])
def test_constant_space_gives_nan_with_a_warning(which):
    X, Y = _data(60)
    if which == "X":
        X = np.ones_like(X)
    else:
        Y = np.full_like(Y, 3.0)
    with pytest.warns(RuntimeWarning, match=f"every point of {which} is at the same place"):
        values = neighbourhood_scores(X, Y, k=(3, 5))
    assert np.isnan(list(values.values())).all()
    with pytest.warns(RuntimeWarning):
        assert np.isnan(trustworthiness(X, Y, 3))


def test_precomputed_from_sklearn_pairwise_distances_is_accepted():
    from sklearn.metrics import pairwise_distances

    X, Y = _data(150, seed=5)
    D = pairwise_distances(X)
    assert not np.array_equal(D, D.T)  # the dot-product formula is symmetric only to rounding
    scores = neighbourhood_scores(D, Y, k=(5, 10), metric="precomputed")
    np.testing.assert_allclose([scores["trust_k5"], scores["trust_k10"]],
                               [sklearn_trustworthiness(X, Y, n_neighbors=k) for k in (5, 10)],
                               rtol=0, atol=1e-12)


def test_precomputed_that_is_not_symmetric_is_refused():
    X, _ = _data(50)
    D = squareform(pdist(X))
    D[3, 7] *= 1.001
    with pytest.raises(ValueError, match="must be symmetric.*largest asymmetry"):
        trustworthiness(D, X[:, :2], 5, metric="precomputed")


def test_every_listed_metric_is_one_scipy_accepts():
    from scipy.spatial.distance import cdist

    from drfidelity.core.validation import PDIST_METRICS, check_metric

    X = np.random.default_rng(0).random((12, 3))
    for metric in PDIST_METRICS:
        assert check_metric(metric) == metric
        assert pdist(X, metric=metric).shape == (66,)
        assert cdist(X[:2], X, metric=metric).shape == (2, 12)
    with pytest.raises(ValueError, match="did you mean 'euclidean'"):
        check_metric("euclidian")
