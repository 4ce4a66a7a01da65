"""The compiled neighbour and pair kernels (sort, ties, pools, rank sums, stress), against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist, squareform
from scipy.stats import spearmanr

from drfidelity.metrics import bands, stress
from drfidelity.metrics.distances import (EUCLIDEAN_TILE, _euclidean_rows,
                                           FeatureRows, column_tiles, condensed_distances,
                                           distance_rows)
from drfidelity.metrics.pair_kernels import pack_pools, sort_in_place, tie_groups
from drfidelity.metrics.rank_kernels import count_ranks, nearest
from drfidelity.metrics.shepard import (PairSubsets, RankedDistances, ShepardPair,
                                        inverse_permutation)


def test_distance_rows_are_the_square_matrix_rows():
    d = pdist(np.random.default_rng(1).normal(size=(23, 3)))
    rows = np.array([22, 0, 5, 5, 11])
    np.testing.assert_array_equal(distance_rows(d, 23, rows), squareform(d)[rows])
    with pytest.raises(ValueError, match="rows must lie"):
        distance_rows(d, 23, [23])
    with pytest.raises(ValueError, match="pairs"):
        distance_rows(d, 24, [0])


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
@pytest.mark.parametrize("dims", [1, 2, 3, 8, 17, 50])
def test_euclidean_rows_are_cdists_bytes(metric, dims):
    """The compiled rows equal scipy's cdist to the bit: columns on both sides of a tile edge,
    coordinates of mixed scales (the order of the sum shows), squares that overflow to inf or
    fall to float64's subnormals, duplicates; then rows of a Fortran-ordered X."""
    rng = np.random.default_rng(dims)
    n = 2 * EUCLIDEAN_TILE + 37
    X = rng.normal(size=(n, dims)) * np.exp(rng.normal(scale=4.0, size=(1, dims)))
    X[7] = X[3]
    X[9] = 1e160 * X[9]
    X[12:14] *= 1e-160
    rows = np.array([0, 3, 9, 12, n - 1, EUCLIDEAN_TILE])
    with np.errstate(over="ignore"):
        expected = cdist(X[rows], X, metric)
        out = np.empty_like(expected)
        _euclidean_rows(X[rows], column_tiles(X), n, metric == "euclidean", out)
    assert out.tobytes() == expected.tobytes()
    X[9] /= 1e160  # finite again: checked rows, the condensed vector's bytes
    if metric == "sqeuclidean":
        X[12:14] *= 1e60  # a squared distance of 1e-320 cannot be told (refused): 1e-200
    rescued = squareform(condensed_distances(X, metric))[rows]
    assert FeatureRows(np.asfortranarray(X), metric)(rows).tobytes() == rescued.tobytes()


def _keyed_rows(seed, b=6, n=50, levels=5):
    """Rows with many exact ties; row q's own point (column 3 q) at -inf."""
    rng = np.random.default_rng(seed)
    keyed = rng.integers(0, levels, size=(b, n)).astype(np.float64)
    keyed[np.arange(b), 3 * np.arange(b)] = -np.inf
    return keyed


def _rank(row, j):
    """rho = |{c : row[c] < row[j]}| + |{c < j : row[c] == row[j]}| (own point at -inf)."""
    return int(np.sum(row < row[j]) + np.sum(row[:j] == row[j]))


@pytest.mark.parametrize("seed", range(3))
def test_nearest_is_the_stable_order(seed):
    keyed = _keyed_rows(seed)
    for k in (1, 7, 30):
        expected = np.argsort(keyed, axis=1, kind="stable")[:, 1:k + 1]
        np.testing.assert_array_equal(nearest(keyed, k), expected)


@pytest.mark.parametrize("seed", range(3))
def test_count_ranks_follows_the_index_rule(seed):
    keyed = _keyed_rows(seed)
    rng = np.random.default_rng(seed + 10)
    columns = rng.integers(0, keyed.shape[1], size=(keyed.shape[0], 9))
    columns[0, :4] = -1  # skipped slots
    columns[1, :] = columns[1, 0]  # one column asked several times
    ranks = count_ranks(keyed, columns)
    for q, row in enumerate(keyed):
        expected = [_rank(row, j) if j >= 0 else 0 for j in columns[q]]
        np.testing.assert_array_equal(ranks[q], expected)


def test_kernel_inputs_are_checked():
    keyed = _keyed_rows(0)
    with pytest.raises(ValueError, match="N > k"):
        nearest(keyed, keyed.shape[1])
    with pytest.raises(ValueError, match="columns must be < N"):
        count_ranks(keyed, np.full((keyed.shape[0], 2), keyed.shape[1]))
    with pytest.raises(ValueError, match=r"\(b, t\)"):
        count_ranks(keyed, np.zeros((1, 2), dtype=np.int64))


def _numpy_band_stress(a, b, radius, min_pairs, chunk):
    """The chunked numpy form the engine must reproduce bit for bit: per chunk of condensed
    positions np.dot of the band's pairs, added in chunk order."""
    count, aa, bb, ab = 0, 0.0, 0.0, 0.0
    for lo in range(0, a.shape[0], chunk):
        keep = a[lo:lo + chunk] <= radius
        x, y = a[lo:lo + chunk][keep], b[lo:lo + chunk][keep]
        count += x.shape[0]
        aa += np.dot(x, x)
        bb += np.dot(y, y)
        ab += np.dot(x, y)
    if count < min_pairs or bb <= 0 or aa <= 0:
        return float("nan")
    alpha = ab / bb
    squares = 0.0
    for lo in range(0, a.shape[0], chunk):
        keep = a[lo:lo + chunk] <= radius
        residual = a[lo:lo + chunk][keep] - alpha * b[lo:lo + chunk][keep]
        squares += np.dot(residual, residual)
    return float(np.sqrt(squares / aa))


@pytest.mark.parametrize("chunk", [5, 37, 1000, 1 << 22])
def test_band_stress_is_bit_identical_to_chunked_numpy(monkeypatch, chunk):
    """All bands in one pass give the very bits of the masked np.dot calls (exact numerics)."""
    monkeypatch.setattr(stress, "CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    a = pdist(rng.normal(size=(70, 4)) * 10 ** rng.uniform(-2, 2))
    b = pdist(rng.normal(size=(70, 2)))
    radii = list(np.percentile(a, [0.5, 5, 10, 33, 50, 75])) + [np.inf, float(a[7])]
    minimum = [2] * 7 + [3]
    ours = stress.BandStress(a, radii, minimum).stress(b)
    for value, radius, least in zip(ours, radii, minimum):
        expected = _numpy_band_stress(a, b, radius, least, chunk)
        assert value == expected or (np.isnan(value) and np.isnan(expected))


def test_stable_order_and_tie_groups():
    rng = np.random.default_rng(5)
    cases = [rng.random(5000), np.round(rng.random(5000) * 30),  # crowded, tied buckets
             np.zeros(300), np.concatenate([np.zeros(200), rng.random(100) * 1e-300]),
             np.concatenate([np.zeros(200), np.full(100, 5e-324), rng.random(300) * 1e-310]),
             np.concatenate([rng.random(3000), np.full(2000, 0.5)]) ** 8,
             np.array([2.0]), np.array([1.0, 1.0])]
    for values in cases:
        keys = values.copy()
        order = sort_in_place(keys)
        expected = np.argsort(values, kind="stable")
        np.testing.assert_array_equal(order, expected)
        ordered = values[expected]
        np.testing.assert_array_equal(keys, ordered)
        starts, ends = tie_groups(keys)
        links = np.flatnonzero(ordered[1:] == ordered[:-1])
        covered = np.zeros(values.shape[0], dtype=bool)
        for s, e in zip(starts, ends):
            assert np.all(ordered[s:e + 1] == ordered[s]) and e > s
            covered[s:e + 1] = True
        assert np.array_equal(np.flatnonzero(covered[:-1] & covered[1:]
                                             & (ordered[1:] == ordered[:-1])), links)


@pytest.mark.parametrize("levels", [4, 1000])
def test_pools_follow_the_stable_row_ranks(levels):
    """Pool bits from one walk along the global order = ranks of a stable sort of each row."""
    n = 37
    rng = np.random.default_rng(levels)
    d = pdist(rng.integers(0, levels, size=(n, 2)).astype(float))  # heavy ties for levels=4
    sizes = np.array([1, 3, 9, 20, 36])
    square = squareform(d)
    np.fill_diagonal(square, -np.inf)
    ranks = np.empty(square.shape, dtype=np.int64)
    np.put_along_axis(ranks, np.argsort(square, axis=1, kind="stable"),
                      np.arange(n)[None, :], axis=1)
    order = np.argsort(d, kind="stable")
    bits, _ = pack_pools(order.astype(np.int32), n, sizes)
    i, j = np.triu_indices(n, 1)
    for q, size in enumerate(sizes):
        flags = np.unpackbits(bits[:, q, :].T.copy().view(np.uint8), axis=1,
                              bitorder="little")[:, :d.shape[0]].astype(bool)
        np.testing.assert_array_equal(flags[0], (ranks[i, j] <= size)[order])
        np.testing.assert_array_equal(flags[1], (ranks[j, i] <= size)[order])


@pytest.mark.parametrize("seed", range(3))
def test_one_pass_serves_bands_and_weighted_subsets(seed):
    """Ties on both sides, bands and 0/1/2 weights: every rho as scipy on repeated pairs."""
    rng = np.random.default_rng(seed)
    high = np.round(rng.random(600) * 40)
    low = np.round(rng.random(600) * 8)  # groups of ~70 equal values
    weights = [rng.integers(0, 3, size=600).astype(np.uint8),
               (rng.random(600) < 0.3).view(np.uint8)]
    ranked = RankedDistances(high)
    order = ranked.release_order()
    pair = ShepardPair(ranked, inverse_permutation(order), RankedDistances(low))
    sizes = [int(np.count_nonzero(high <= r)) for r in (5, 20, 40)]
    subsets = PairSubsets.from_weights([w[order] for w in weights])
    band_rho, subset_rho = pair.rhos(sizes, subsets)
    for size, value in zip(sizes, band_rho):
        keep = order[:size]
        assert value == pytest.approx(spearmanr(high[keep], low[keep]).statistic, abs=1e-12)
    for w, value in zip(weights, subset_rho):
        expected = spearmanr(np.repeat(high, w), np.repeat(low, w)).statistic
        assert value == pytest.approx(expected, abs=1e-12)


def test_percentiles_and_median_read_off_the_order_are_numpys():
    rng = np.random.default_rng(11)
    for size in (5, 6, 999, 1000, 4097):
        for values in (rng.random(size) * 10 ** rng.uniform(-3, 3),
                       np.round(rng.random(size) * 7)):
            order = np.argsort(values, kind="stable")
            q = [0, 1, 5, 10, 20, 30, 33.3, 50, 75, 99.9, 100]
            np.testing.assert_array_equal(bands.sorted_percentile(values, order, q),
                                          np.percentile(values, q))
            assert bands.median(values, order) == np.median(values)
            assert bands.percentile_thresholds(values, order) == bands.percentile_thresholds(values)
            assert (bands.first_mode_threshold(values, order)
                    == bands.first_mode_threshold(values))


def test_strict_maxima_are_scipys_relative_maxima():
    from scipy.signal import argrelmax

    rng = np.random.default_rng(4)
    cases = [rng.normal(size=300), np.round(rng.normal(size=300)),  # plateaus: no strict max
             np.array([3.0, 1, 2, 1, 0, 5]), np.array([1.0]), np.zeros(7), np.arange(9.0)]
    for values in cases:
        for order in (1, 4, 10):
            np.testing.assert_array_equal(bands.strict_maxima(values, order),
                                          argrelmax(values, order=order)[0])


def test_threads_do_not_change_the_passes(monkeypatch):
    """The sort, the subset sums and the band dots give the same bytes on 1 to 5 threads."""
    from drfidelity.metrics import pair_kernels

    rng = np.random.default_rng(11)
    values = np.round(rng.random(200_000) * 500) ** 2  # ties, crowded buckets
    sorted_keys = []
    for workers in (1, 2, 3, 5):
        keys = values.copy()
        np.testing.assert_array_equal(sort_in_place(keys, workers=workers),
                                      np.argsort(values, kind="stable"))
        sorted_keys.append(keys)
    assert all(np.array_equal(keys, sorted_keys[0]) for keys in sorted_keys)

    monkeypatch.setattr(pair_kernels, "PARALLEL_PAIRS", 0)
    d_high = pdist(np.round(rng.normal(size=(120, 4)), 1))
    d_low = pdist(np.round(rng.normal(size=(120, 2)), 1))  # 2-D tie groups at the cuts
    high, low = RankedDistances(d_high), RankedDistances(d_low)
    weights = [rng.integers(0, 3, d_high.shape[0]), rng.integers(0, 2, d_high.shape[0])]
    subsets = PairSubsets.from_weights(weights)
    to_high = inverse_permutation(high.order)[low.order]
    sizes = np.array([50, 700, d_high.shape[0]])
    runs = [pair_kernels.subset_sums(to_high, (low.tie_starts, low.tie_ends), sizes,
                                     subsets.table, subsets.count,
                                     (high.tie_starts, high.tie_ends), high.tied, workers)
            for workers in (1, 2, 3, 7)]
    assert all(run == runs[0] for run in runs)

    radii = np.quantile(d_high, [0.1, 0.5, 1.0])
    counts = pair_kernels.band_counts(d_high, radii, 1000)
    for alphas in (None, np.array([0.5, 1.5, 2.0])):
        dots = [pair_kernels.band_dots(d_high, d_low, radii, counts, 1000, alphas, workers)
                for workers in (1, 2, 3)]
        assert all(dot.tobytes() == dots[0].tobytes() for dot in dots)


def test_score_is_the_same_on_any_number_of_threads(monkeypatch):
    from drfidelity.metrics import Reference, pair_kernels

    monkeypatch.setattr(pair_kernels, "PARALLEL_PAIRS", 0)
    rng = np.random.default_rng(12)
    X = np.round(rng.normal(size=(150, 5)), 1)
    Y = np.round(X[:, :2] + rng.normal(size=(150, 2)), 1)
    rows = []
    for workers in ("1", "2", "3"):
        monkeypatch.setenv("DRFIDELITY_METRIC_THREADS", workers)
        rows.append(Reference(X, truth=X + 0.1, labels=np.arange(150) % 4,
                              outlier_idx=[3, 77]).score(Y))
    assert all(np.array(list(row.values())).tobytes()
               == np.array(list(rows[0].values())).tobytes() for row in rows)


@pytest.mark.parametrize("value", ["abc", "0", "-3", "2.5"])
def test_a_bad_thread_count_is_refused_naming_the_variable(monkeypatch, value):
    from drfidelity.metrics import pair_kernels

    monkeypatch.setenv("DRFIDELITY_METRIC_THREADS", value)
    with pytest.raises(ValueError, match=rf"^DRFIDELITY_METRIC_THREADS .*{value!r}"):
        pair_kernels.threads()
    monkeypatch.setenv("DRFIDELITY_METRIC_THREADS", " 3 ")
    assert pair_kernels.threads() == 3
