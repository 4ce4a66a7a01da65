"""The compiled neighbour kernels and the chunked rank / stress passes, against plain numpy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform
from scipy.stats import spearmanr

from drfidelity.metrics import shepard, stress
from drfidelity.metrics.distances import distance_rows
from drfidelity.metrics.rank_kernels import count_ranks, nearest
from drfidelity.metrics.shepard import RankedDistances, ShepardPair, inverse_permutation


def test_distance_rows_are_the_square_matrix_rows():
    d = pdist(np.random.default_rng(1).normal(size=(23, 3)))
    rows = np.array([22, 0, 5, 5, 11])
    np.testing.assert_array_equal(distance_rows(d, 23, rows), squareform(d)[rows])
    with pytest.raises(ValueError, match="rows must lie"):
        distance_rows(d, 23, [23])
    with pytest.raises(ValueError, match="pairs"):
        distance_rows(d, 24, [0])


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


@pytest.mark.parametrize("chunk", [5, 64, 1 << 22])
def test_chunked_rho_and_stress_do_not_depend_on_the_chunk(monkeypatch, chunk):
    """Chunk borders inside long tie groups and weighted subsets must not change anything."""
    monkeypatch.setattr(shepard, "CHUNK", chunk)
    monkeypatch.setattr(stress, "CHUNK", chunk)
    rng = np.random.default_rng(3)
    high = np.round(rng.random(600) * 40)
    low = np.round(rng.random(600) * 8)  # groups of ~70 equal values: longer than small chunks
    weights = rng.integers(0, 3, size=600).astype(np.uint8)
    ranked = RankedDistances(high)
    order = ranked.release_order()
    pair = ShepardPair(ranked, inverse_permutation(order), RankedDistances(low))
    expected = spearmanr(np.repeat(high, weights), np.repeat(low, weights)).statistic
    assert pair.rho(weights[order]) == pytest.approx(expected, abs=1e-12)
    band = int(np.count_nonzero(high <= 20))
    keep = high <= 20
    assert pair.rho_band(band) == pytest.approx(spearmanr(high[keep], low[keep]).statistic,
                                                abs=1e-12)
    a, b = high[keep], low[keep]
    residual = a - (a @ b / (b @ b)) * b
    assert stress.band_stress(high, low, 20) == pytest.approx(
        np.sqrt(residual @ residual / (a @ a)), abs=1e-14)
