"""Behaviour of the metric engine on small hand-built cases (benchmark.md §3, §6.8)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform
from scipy.stats import spearmanr

from drfidelity.metrics import Reference, score
from drfidelity.metrics.bands import PERCENTILES, first_mode_threshold, percentile_thresholds
from drfidelity.metrics.cluster_scale import MIN_CLUSTER_POINTS
from drfidelity.metrics.shepard import RankedDistances, ShepardPair, inverse_permutation

RNG = np.random.default_rng(7)


def _blobs(n_per=40, k=3, dim=5, spread=0.3, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=5.0, size=(k, dim))
    X = np.concatenate([c + spread * rng.normal(size=(n_per, dim)) for c in centres])
    return X, np.repeat(np.arange(k), n_per)


def test_identity_map_is_perfect():
    Y = RNG.normal(size=(120, 2))
    row = score(Y, Y, truth=Y)
    assert row["full_shepard"] == pytest.approx(1.0, abs=1e-15)
    assert row["shepard_p5__vs_ambient"] == pytest.approx(1.0, abs=1e-15)
    assert row["full_stress"] == pytest.approx(0.0, abs=1e-15)
    for k in (5, 15, 30):
        assert row[f"recall_k{k}"] == 1.0
        assert row[f"trust_k{k}"] == 1.0
        assert row[f"cont_k{k}"] == 1.0
    for p in PERCENTILES:
        assert row[f"pp_shepard_p{p}__vs_truth"] == pytest.approx(1.0, abs=1e-15)


def test_stress_is_scale_free():
    Y = RNG.normal(size=(80, 2))
    row = score(Y, 3.5 * Y, per_point=False)
    for p in PERCENTILES:
        assert row[f"stress_p{p}__vs_ambient"] == pytest.approx(0.0, abs=1e-14)
        assert row[f"stress_fidelity_p{p}__vs_ambient"] == pytest.approx(1.0, abs=1e-14)


def test_band_radii_are_cumulative_and_p100_takes_all():
    d = pdist(RNG.normal(size=(60, 4)))
    radii = percentile_thresholds(d)
    sizes = [np.count_nonzero(d <= radii[p]) for p in PERCENTILES]
    assert sizes == sorted(sizes) and sizes[-1] == d.shape[0]
    assert abs(sizes[0] / d.shape[0] - 0.05) < 0.01


def test_band_rho_matches_spearmanr_with_heavy_ties():
    """Average ranks over tied 2-D distances (crushed maps) must match scipy exactly."""
    X = RNG.normal(size=(90, 6))
    Y = np.round(X[:, :2] + 0.5 * RNG.normal(size=(90, 2)))  # integer grid: many tied distances
    Y[:30] = 0.0  # a crushed third
    row = score(X, Y, per_point=False)
    d, d2 = pdist(X), pdist(Y)
    radii = percentile_thresholds(d)
    for p in PERCENTILES:
        mask = d <= radii[p]
        expected = spearmanr(d[mask], d2[mask]).statistic
        assert row[f"shepard_p{p}__vs_ambient"] == pytest.approx(expected, abs=1e-12)
    near = d <= first_mode_threshold(d)[0]
    assert row["shepard_near__vs_ambient"] == pytest.approx(spearmanr(d[near], d2[near]).statistic,
                                                             abs=1e-12)


@pytest.mark.parametrize("lowest", [0, 1])
def test_weighted_rho_equals_spearmanr_of_repeated_pairs(lowest):
    """A pair of weight w counts as w tied copies (per-point pools hold mutual pairs twice)."""
    rng = np.random.default_rng(lowest)
    high = rng.random(400)
    low = np.round(rng.random(400) * 20)  # heavy ties on the 2-D side
    weights = rng.integers(lowest, 3, size=400).astype(np.uint8)
    ranked_high = RankedDistances(high)
    order = ranked_high.release_order()
    pair = ShepardPair(ranked_high, inverse_permutation(order), RankedDistances(low))
    expected = spearmanr(np.repeat(high, weights), np.repeat(low, weights)).statistic
    assert pair.rho(weights[order]) == pytest.approx(expected, abs=1e-12)


def test_per_point_rho_matches_pooled_spearmanr():
    X = RNG.normal(size=(70, 5))
    Y = np.round(2 * X[:, :2]) / 2  # ties on the 2-D side
    row = score(X, Y)
    D, D2 = squareform(pdist(X)), squareform(pdist(Y))
    np.fill_diagonal(D, np.inf)
    n = X.shape[0]
    for p in PERCENTILES:
        k = min(n - 1, max(1, round(p / 100 * (n - 1))))
        cols = np.argpartition(D, k - 1, axis=1)[:, :k]  # no ties in D: the set is unique
        rows = np.repeat(np.arange(n), k)
        expected = spearmanr(D[rows, cols.ravel()], D2[rows, cols.ravel()]).statistic
        assert row[f"pp_shepard_p{p}__vs_ambient"] == pytest.approx(expected, abs=1e-12)


def test_first_mode_threshold_bimodal_and_unimodal():
    rng = np.random.default_rng(0)
    bimodal = np.concatenate([rng.normal(3.0, 0.6, 2000), rng.normal(15.0, 2.0, 8000)])
    radius, fallback = first_mode_threshold(bimodal)
    assert not fallback and 1.5 < radius < 8
    assert 0.15 < np.mean(bimodal <= radius) < 0.30
    unimodal = rng.normal(10.0, 1.0, 10000)
    radius, fallback = first_mode_threshold(unimodal)
    assert fallback and np.mean(unimodal <= radius) == pytest.approx(0.05, abs=1e-3)


def test_key_blocks_follow_the_inputs():
    X, labels = _blobs()
    Y = X[:, :2]
    base = score(X, Y, per_point=False)
    assert not any(k.endswith("__vs_truth") or k.startswith(("tight", "pp_")) for k in base)
    full = score(X, Y, truth=X + 0.01, labels=labels, outlier_idx=[0, 1],
                 population=(labels == 2).astype(int))
    assert any(k.endswith("__vs_truth") for k in full)
    assert "tight_over_compression" in full and "outlier_shepard__vs_ambient" in full
    assert "minority_shepard__vs_ambient" in full
    tail = [f"{m}_k{k}" for m in ("recall", "trust", "cont") for k in (5, 15, 30)]
    assert list(full)[-9:] == tail
    assert "tight_cluster" not in score(X, Y, labels=-np.ones(len(X), int), per_point=False)
    assert "outlier_shepard__vs_ambient" not in score(X, Y, outlier_idx=[], per_point=False)
    assert not any("osp" in k and "vs_truth" in k for k in full)


def test_reference_reuse_equals_score():
    X, labels = _blobs()
    reference = Reference(X, truth=X, labels=labels)
    for seed in range(2):
        Y = np.random.default_rng(seed).normal(size=(len(X), 2))
        assert reference.score(Y) == score(X, Y, truth=X, labels=labels)


def test_precomputed_and_named_metrics():
    X, _ = _blobs()
    Y = X[:, :2] + 0.1 * RNG.normal(size=(len(X), 2))
    assert score(squareform(pdist(X)), Y, metric="precomputed") == score(X, Y)
    row = score(X, Y, metric="cityblock", per_point=False)
    d = pdist(X, "cityblock")
    assert row["full_shepard"] == pytest.approx(spearmanr(d, pdist(Y)).statistic, abs=1e-12)


def test_tightest_cluster_scale():
    X, labels = _blobs(n_per=30, k=3)
    labels[:MIN_CLUSTER_POINTS - 5] = 9  # a tiny (<20 points), very tight cluster...
    X[:MIN_CLUSTER_POINTS - 5] = X[0] + 1e-3 * RNG.normal(size=(MIN_CLUSTER_POINTS - 5, 5))
    Y = X[:, :2] * 1.0
    Y3 = np.hstack([X[:, :2], np.zeros((len(X), 3))])
    row = score(Y3, Y, labels=labels, per_point=False)
    assert row["tight_cluster"] != 9  # ...is not eligible
    assert row["tight_over_compression"] == pytest.approx(1.0, abs=1e-12)
    chosen = labels == row["tight_cluster"]
    crushed = Y.copy()
    crushed[chosen] = crushed[chosen].mean(0) + (crushed[chosen] - crushed[chosen].mean(0)) / 10
    assert 5 < score(Y3, crushed, labels=labels, per_point=False)["tight_over_compression"] < 15


def _outlier_data():
    rng = np.random.default_rng(3)
    bulk = rng.normal(size=(200, 2))
    directions = np.array([[1.0, 0.0], [0.0, 1.0], [-np.sqrt(0.5), -np.sqrt(0.5)]])
    outliers = np.concatenate([[8 * d, 8.6 * d] for d in directions])
    return np.concatenate([bulk, outliers]), np.arange(200, 206), np.repeat([0, 1, 2], 2)


def test_outlier_metrics_identity_and_similarity():
    X, idx, dirs = _outlier_data()
    row = score(X, X, outlier_idx=idx, outlier_dir=dirs, per_point=False)
    assert row["outlier_shepard__vs_ambient"] == pytest.approx(1.0, abs=1e-15)
    for j in range(6):
        assert row[f"osp_o{j}__vs_ambient"] == pytest.approx(1.0, abs=1e-12)
        assert row[f"iso_rank_delta_o{j}__vs_ambient"] == 0
    for j in range(3):
        assert row[f"pair_cohesion_dir{j}__vs_ambient"] == pytest.approx(1.0, abs=1e-12)
        hd_angle = row[f"pair_angle_hd_dir{j}__vs_ambient"]
        assert row[f"pair_angle_2d_dir{j}"] == pytest.approx(hd_angle)
    angle = np.radians(35)
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    moved = score(X, 4 * X @ rotation + 2, outlier_idx=idx, outlier_dir=dirs, per_point=False)
    for j in range(6):
        assert moved[f"osp_o{j}__vs_ambient"] == pytest.approx(1.0, abs=1e-12)


def test_outlier_metrics_detect_damage():
    X, idx, dirs = _outlier_data()
    collapsed = X.copy()
    collapsed[idx] = 0.05 * X[idx]  # outliers buried in the bulk
    row = score(X, collapsed, outlier_idx=idx, outlier_dir=dirs, per_point=False)
    assert all(row[f"osp_o{j}__vs_ambient"] < 0.2 for j in range(6))
    assert row["iso_rank_delta_mean__vs_ambient"] > 0
    assert row["outlier_shepard__vs_ambient"] < 0.5
    touches = np.zeros(len(X), bool)
    touches[idx] = True
    i, j = np.triu_indices(len(X), 1)
    mask = touches[i] | touches[j]
    expected = spearmanr(pdist(X)[mask], pdist(collapsed)[mask]).statistic
    assert row["outlier_shepard__vs_ambient"] == pytest.approx(expected, abs=1e-12)
    torn = X.copy()
    torn[idx[1]] = -X[idx[1]]  # one member of pair 0 thrown to the opposite side
    row = score(X, torn, outlier_idx=idx, outlier_dir=dirs, per_point=False)
    assert row["pair_cohesion_dir0__vs_ambient"] > 5 and row["pair_angle_2d_dir0"] > 60


def test_population_metrics():
    X, labels = _blobs(n_per=40, k=4, dim=2)
    population = (labels == 3).astype(int)
    row = score(X, X, population=population, per_point=False)
    for key in ("within_majority", "within_minority", "cross_population", "minority"):
        assert row[f"{key}_shepard__vs_ambient"] == pytest.approx(1.0, abs=1e-15)
    shuffled = X.copy()
    minority = np.flatnonzero(population)
    shuffled[minority] = X[np.random.default_rng(0).permutation(minority)]
    row = score(X, shuffled, population=population, per_point=False)
    assert row["within_minority_shepard__vs_ambient"] < 0.3
    assert row["within_majority_shepard__vs_ambient"] == pytest.approx(1.0, abs=1e-15)


def test_constant_embedding_warns_and_gives_nan():
    X = RNG.normal(size=(50, 3))
    with pytest.warns(RuntimeWarning, match="same place"):
        row = score(X, np.zeros((50, 2)), per_point=False)
    assert np.isnan(row["full_shepard"]) and np.isnan(row["full_stress"])
    assert np.isnan(row["shepard_near__vs_ambient"])
    for family in ("recall", "trust", "cont"):  # ranks would only be the row order
        assert np.isnan(row[f"{family}_k5"]) and np.isnan(row[f"{family}_k15"])


def test_constant_data_gives_nan_neighbour_columns():
    with pytest.warns(RuntimeWarning, match="every point of X is at the same place"):
        reference = Reference(np.ones((50, 3)), per_point=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # Spearman on constant data
        row = reference.score(RNG.normal(size=(50, 2)))
    assert all(np.isnan(row[f"{family}_k5"]) for family in ("recall", "trust", "cont"))


def test_no_warning_for_regular_input():
    X = RNG.normal(size=(50, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        score(X, X[:, :2], per_point=False)


GOOD_X = np.random.default_rng(1).normal(size=(20, 3))
GOOD_Y = GOOD_X[:, :2]


@pytest.mark.parametrize("kwargs, match", [
    (dict(X=np.where(np.eye(20, 3) > 0, np.nan, GOOD_X)), "X contains NaN"),
    (dict(Y=np.full((20, 2), np.inf)), "Y contains non-finite coordinates"),
    (dict(truth=np.full((20, 3), np.nan)), "truth contains NaN"),
    (dict(Y=GOOD_Y[:10]), r"Y has shape \(10, 2\), expected \(20, d\)"),
    (dict(Y=np.zeros((20, 0))), r"Y has shape \(20, 0\), expected \(20, d\) with d >= 1"),
    (dict(Y=GOOD_Y.astype(complex)), "Y must hold real numbers"),
    (dict(X=GOOD_X[:3], Y=GOOD_Y[:3]), "at least 4 points"),
    (dict(truth=GOOD_X[:19]), "truth has 19 rows"),
    (dict(labels=np.zeros(19, int)), "labels must have shape"),
    (dict(population=np.zeros(19, int)), "population must have shape"),
    (dict(population=np.full(20, 2)), "population must hold 0"),
    (dict(outlier_idx=[3, 20]), "outlier_idx must index"),
    (dict(outlier_idx=[3, 3]), "outlier_idx must not repeat"),
    (dict(outlier_idx=[1.5]), "outlier_idx must hold integer"),
    (dict(outlier_idx=[1, 2], outlier_dir=[0]), "outlier_dir must have shape"),
    (dict(metric="nope"), "metric must be"),
    (dict(metric="precomputed"), "square distance matrix"),
])
def test_bad_input_raises(kwargs, match):
    args = dict(X=GOOD_X, Y=GOOD_Y)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        score(args.pop("X"), args.pop("Y"), **args)
