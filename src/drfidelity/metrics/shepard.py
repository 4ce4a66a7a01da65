"""Shepard rho: Spearman correlation of high-D and 2-D distances over a (weighted) set of pairs.

Spearman rho = Pearson correlation of average ranks (ties share the mean of their ranks), as in
``scipy.stats.spearmanr``. Every Shepard variant (bands, per-point pools, outlier and population
pair families) is one call of :meth:`ShepardPair.rho` with integer pair weights over the pairs:
0/1 for a band or a pair family, 0/1/2 for the per-point pools (a mutual pair sits in the pool
twice). Each distance vector is sorted once (:class:`RankedDistances`); ranks inside any pair
subset then follow in linear time from a running count of the subset along that sorted order,
so no per-band sort and no ``spearmanr`` call is needed. The passes run in chunks, so a subset
costs one int32 rank per pair on top of the sorted orders (N = 20 000 has 2e8 pairs).
"""

from __future__ import annotations

import numpy as np

from .distances import distance_rows, row_blocks, row_start
from .ranks import row_ranks

MIN_PAIRS = 3
CHUNK = 1 << 22  # sorted positions per pass step (a few 10 MB of temporaries)


def index_dtype(size: int):
    """int32 positions while they fit (halves the memory of the N^2/2-long index vectors)."""
    return np.int32 if size < 2**31 - 1 else np.int64


class RankedDistances:
    """A condensed distance vector with its stable sort order and its tie groups.

    Only groups of two or more equal values are kept (``tie_starts`` / ``tie_ends``, inclusive
    sorted positions), so a tie-free vector costs nothing beyond its order.
    """

    def __init__(self, values: np.ndarray):
        self.values = values
        size = values.shape[0]
        self.order = np.argsort(values, kind="stable").astype(index_dtype(size))
        links = []  # sorted positions p with sorted[p] == sorted[p + 1]
        for lo in range(0, max(size - 1, 0), CHUNK):
            ordered = values[self.order[lo:min(size, lo + CHUNK + 1)]]
            links.append(np.flatnonzero(ordered[1:] == ordered[:-1]) + lo)
        links = np.concatenate(links) if links else np.empty(0, dtype=np.int64)
        breaks = links[1:] != links[:-1] + 1  # consecutive links belong to one group
        first = np.ones(links.shape[0], dtype=bool)
        first[1:] = breaks
        last = np.ones(links.shape[0], dtype=bool)
        last[:-1] = breaks
        self.tie_starts = links[first]
        self.tie_ends = links[last] + 1

    def release_order(self) -> np.ndarray:
        """Hand over the sort order and drop it here (N^2/2 entries; ranks no longer need it)."""
        order, self.order = self.order, None
        return order

    def count_at_most(self, radius: float) -> int:
        """Number of pairs with distance <= radius (the size of that band)."""
        return int(np.count_nonzero(self.values <= radius))

    def doubled_ranks(self, weights, length: int):
        """Twice the average ranks inside a weighted subset, chunk by chunk along the order.

        ``weights(lo, hi)`` returns the multiplicities (0 = not in the subset) of sorted
        positions lo..hi-1; a pair of weight w counts as w tied copies, and equal values share
        the mean rank of all their copies. Yields ``(lo, hi, w, r2)`` with r2 = 2 x average
        rank (an integer: before + through + 1 copies) for positions lo..hi-1 (meaningful where
        w > 0). Chunks never split a tie group, and the running count carries across them.
        """
        carry = 0
        lo = 0
        while lo < length:
            hi = min(length, lo + CHUNK)
            g = np.searchsorted(self.tie_starts, hi - 1, side="right") - 1
            if g >= 0 and self.tie_ends[g] >= hi:
                hi = min(length, int(self.tie_ends[g]) + 1)
            w = weights(lo, hi)
            r2 = np.cumsum(w, dtype=np.int64)  # copies up to and including each position
            r2 += carry
            carry = int(r2[-1])
            first, last = np.searchsorted(self.tie_starts, [lo, hi])
            if last > first:
                starts = self.tie_starts[first:last] - lo
                ends = np.minimum(self.tie_ends[first:last], hi - 1) - lo
                shared = r2[starts] - w[starts] + r2[ends] + 1
            r2 *= 2
            r2 -= w
            r2 += 1  # before + through + 1 of a pair's own copies
            if last > first:
                edges = np.zeros(hi - lo + 1, dtype=np.int64)
                np.add.at(edges, starts, 1)
                np.add.at(edges, ends + 1, -1)
                r2[np.cumsum(edges[:-1]) > 0] = np.repeat(shared, ends - starts + 1)
            yield lo, hi, w, r2
            lo = hi


class ShepardPair:
    """Spearman rho of high-D vs 2-D distances over pair subsets, for one (reference, map) pair.

    Subsets are given in the high-D sorted order; ``_to_high[q]`` is the high-D sorted position
    of the q-th smallest 2-D distance (one gather per embedding). A subset costs one pass along
    the 2-D order (its 2-D ranks, scattered to high-D positions as doubled integer ranks) and
    one along the high-D order that accumulates the weighted Pearson sums: no sort per subset
    and, besides the scattered ranks, only chunk-sized temporaries.
    """

    def __init__(self, high: RankedDistances, high_inverse: np.ndarray, low: RankedDistances):
        self.high, self.low = high, low
        self._to_high = high_inverse[low.order]

    def rho(self, weights_sorted: np.ndarray) -> float:
        """rho over the pairs with non-zero weight (weights in high-D sorted order)."""
        if weights_sorted.min() > 0 and weights_sorted.min() == weights_sorted.max():
            # every pair with one common multiplicity: ranks map affinely, rho is unchanged
            return self.rho_band(weights_sorted.shape[0])
        to_high = self._to_high
        return self._rho(lambda lo, hi: weights_sorted[lo:hi],
                         lambda lo, hi: weights_sorted[to_high[lo:hi]],
                         weights_sorted.shape[0], int(weights_sorted.sum(dtype=np.int64)))

    def rho_band(self, size: int) -> float:
        """rho over the ``size`` pairs with the smallest high-D distances (a band)."""
        to_high = self._to_high
        return self._rho(lambda lo, hi: np.ones(hi - lo, dtype=np.uint8),
                         lambda lo, hi: (to_high[lo:hi] < size).view(np.uint8), size, size)

    def _rho(self, high_weights, low_weights, length: int, total: int) -> float:
        """Weighted Pearson correlation of the doubled ranks; both have mean total + 1.

        Pairs outside the subset (weight 0) get a rank too but add nothing to the sums.
        """
        if total < MIN_PAIRS:
            return float("nan")
        to_high = self._to_high
        rank_type = np.int32 if 2 * total + 1 < 2**31 else np.int64
        low_ranks = np.zeros(to_high.shape[0], dtype=rank_type)  # at high-D sorted positions
        for lo, hi, _, r2 in self.low.doubled_ranks(low_weights, to_high.shape[0]):
            low_ranks[to_high[lo:hi]] = r2
        centre = total + 1
        sab = saa = sbb = 0.0
        for lo, hi, w, r2 in self.high.doubled_ranks(high_weights, length):
            r2 -= centre
            a = r2.astype(np.float64)
            b = low_ranks[lo:hi] - float(centre)
            wa = w * a
            sab += np.dot(wa, b)
            saa += np.dot(wa, a)
            sbb += np.dot(w * b, b)
        if saa <= 0.0 or sbb <= 0.0:
            return float("nan")
        return float(sab / np.sqrt(saa * sbb))


def inverse_permutation(order: np.ndarray) -> np.ndarray:
    """inverse[order[q]] = q."""
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.shape[0], dtype=order.dtype)
    return inverse


def per_point_sizes(n: int, percentiles) -> list[int]:
    """Neighbours kept per point for each percentile: min(N-1, max(1, round(p/100 (N-1))))."""
    return [min(n - 1, max(1, round(p / 100 * (n - 1)))) for p in percentiles]


def per_point_levels(d: np.ndarray, n: int, sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """For every pair (i<j): the first pool containing j as a neighbour of i, and i of j.

    Pool q holds the ordered pair (i, j) when j is among the ``sizes[q]`` nearest high-D
    neighbours of i (ties by index). Returned as two uint8 condensed vectors (i->j, j->i).
    """
    bounds = np.asarray(sizes)
    forward = np.empty(d.shape[0], dtype=np.uint8)
    backward = np.empty(d.shape[0], dtype=np.uint8)
    starts = row_start(np.arange(n, dtype=np.int64), n)
    for rows in row_blocks(n, n):
        ranks = row_ranks(distance_rows(d, n, rows), rows)
        levels = np.searchsorted(bounds, ranks).astype(np.uint8)
        for q, i in enumerate(rows):
            forward[starts[i]:starts[i] + n - i - 1] = levels[q, i + 1:]
            backward[starts[:i] + (i - 1 - np.arange(i))] = levels[q, :i]
    return forward, backward


def per_point_weights(levels: tuple[np.ndarray, np.ndarray], pool: int) -> np.ndarray:
    """Multiplicity (0, 1, 2) of every pair in per-point pool number ``pool``."""
    forward, backward = levels
    return (forward <= pool).view(np.uint8) + (backward <= pool).view(np.uint8)
