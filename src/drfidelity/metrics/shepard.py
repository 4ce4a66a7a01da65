"""Shepard rho: Spearman correlation of high-D and 2-D distances over a (weighted) set of pairs.

Spearman rho = Pearson correlation of average ranks (ties share the mean of their ranks), as in
``scipy.stats.spearmanr``. Every Shepard variant (bands, per-point pools, outlier and population
pair families) is a pair subset with integer weights: 0/1 for a band or a pair family, 0/1/2
for the per-point pools (a mutual pair sits in the pool twice). Each distance vector is sorted
once (:class:`RankedDistances`). All subsets of one (reference, map) pair are then served by
one compiled pass along the 2-D order (:func:`~.pair_kernels.subset_sums`): a running count per
subset gives every pair's 2-D rank inside each subset; its high-D rank inside a subset is its
high-D sorted position for a band (a band is a prefix of that order) and a popcount of the
subset's bit plane below that position otherwise. The sums of products of doubled ranks are
exact integers, so rho is the correctly rounded value of the exact rank correlation.
"""

from __future__ import annotations

from decimal import Context

import numpy as np

from .pair_kernels import (gather, group_bits, high_squares, invert, pack_pools, pack_subsets,
                           sort_in_place, split_table, subset_sums, subset_table, tie_groups)

MIN_PAIRS = 3
_EXACT = Context(prec=60)  # ample for sums below 2^100


def index_dtype(size: int):
    """int32 positions while they fit (halves the memory of the N^2/2-long index vectors)."""
    return np.int32 if size < 2**31 - 1 else np.int64


def rank_correlation(ab: int, aa: int, bb: int, total: int) -> float:
    """rho from exact sums of doubled ranks a, b over ``total`` copies (both means total + 1)."""
    if total < MIN_PAIRS:
        return float("nan")
    shift = total * (total + 1) ** 2  # sum of w a = sum of w b = total (total + 1)
    sab, saa, sbb = ab - shift, aa - shift, bb - shift
    if saa <= 0 or sbb <= 0:
        return float("nan")
    value = _EXACT.divide(_EXACT.create_decimal(sab),
                          _EXACT.sqrt(_EXACT.multiply(_EXACT.create_decimal(saa),
                                                      _EXACT.create_decimal(sbb))))
    return float(value)


def _sorted_median(ordered: np.ndarray) -> float:
    """``np.median`` of a sorted vector: the mean of its one or two middle values."""
    size = ordered.shape[0]
    return float(np.mean(ordered[size // 2 - 1 + size % 2:size // 2 + 1]))


class RankedDistances:
    """A condensed distance vector with its stable sort order and its tie groups.

    Only groups of two or more equal values are kept (``tie_starts`` / ``tie_ends``, inclusive
    sorted positions), so a tie-free vector costs nothing beyond its order.
    """

    def __init__(self, values: np.ndarray, consume: bool = False):
        """``consume``: sort ``values`` itself (it ends up sorted and is not kept here);
        otherwise a copy is sorted and dropped."""
        keys = values if consume else values.copy()
        self.size = values.shape[0]
        self.order = sort_in_place(keys, index_dtype(self.size))
        self.tie_starts, self.tie_ends = tie_groups(keys)
        self._median = _sorted_median(keys)
        self.largest = float(keys[-1]) if self.size else 0.0
        self._tied = None

    def release_order(self) -> np.ndarray:
        """Hand over the sort order and drop it here (N^2/2 entries; ranks no longer need it)."""
        order, self.order = self.order, None
        return order

    def median(self) -> float:
        """``np.median(values)``."""
        return self._median

    def squares(self, band_sizes, subsets: "PairSubsets") -> list[int]:
        """Exact sums of w a^2 over each band (in the order given) and each subset, a the
        doubled average high-D rank inside it."""
        sizes = np.asarray(band_sizes, dtype=np.int64)
        ascending = np.argsort(sizes, kind="stable")
        sums = high_squares(self.size, sizes[ascending], subsets.table, subsets.count,
                            (self.tie_starts, self.tie_ends))
        out = sums[:]
        for r, b in enumerate(ascending):
            out[b] = sums[r]
        return out

    @property
    def tied(self) -> np.ndarray:
        """Bit plane of the sorted positions inside a tie group (empty when there are none)."""
        if self._tied is None:
            if self.tie_starts.shape[0] == 0:
                self._tied = np.empty(0, dtype=np.uint64)
            else:
                self._tied = group_bits(self.tie_starts, self.tie_ends, self.size)
        return self._tied


class PairSubsets:
    """Weighted pair subsets in a high-D sorted order, as bit planes (see ``pack_subsets``)."""

    def __init__(self, halves: list, length: int):
        self.count = len(halves)
        self.table = subset_table(*pack_subsets(halves, length))

    @classmethod
    def of(cls, bits: np.ndarray, prefix: np.ndarray) -> "PairSubsets":
        """Subsets from packed bit planes (words, S, 2) and prefix counts (words, S)."""
        subsets = cls.__new__(cls)
        subsets.count = prefix.shape[1]
        subsets.table = subset_table(bits, prefix)
        return subsets

    def __add__(self, other: "PairSubsets") -> "PairSubsets":
        (bits, prefix), (more_bits, more_prefix) = (split_table(self.table, self.count),
                                                    split_table(other.table, other.count))
        return PairSubsets.of(np.concatenate([bits, more_bits], axis=1),
                              np.concatenate([prefix, more_prefix], axis=1))

    @classmethod
    def from_weights(cls, weights: list[np.ndarray]) -> "PairSubsets":
        """Subsets from weight vectors (0, 1 or 2 per sorted position)."""
        length = weights[0].shape[0] if weights else 0
        return cls([(w >= 1, w >= 2 if np.any(w >= 2) else None) for w in weights], length)


def _no_subsets() -> PairSubsets:
    return PairSubsets([], 0)


class ShepardPair:
    """Spearman rho of high-D vs 2-D distances over pair subsets, for one (reference, map) pair.

    Subsets are given in the high-D sorted order; ``_to_high[q]`` is the high-D sorted position
    of the q-th smallest 2-D distance (one gather per embedding). All bands and weighted
    subsets of one call cost one pass along the 2-D order.
    """

    def __init__(self, high: RankedDistances, high_inverse: np.ndarray, low: RankedDistances):
        self.high, self.low = high, low
        self._to_high = gather(high_inverse, low.order)

    def rhos(self, band_sizes, subsets: PairSubsets | None = None,
             squares: list | None = None) -> tuple[list, list]:
        """(rho of each band, rho of each subset); a band of size m is the m smallest high-D.

        ``squares``: :meth:`RankedDistances.squares` of these bands and subsets, when the caller
        keeps them (they do not depend on the map).
        """
        subsets = subsets or _no_subsets()
        if squares is None:
            squares = self.high.squares(band_sizes, subsets)
        sizes = np.asarray(band_sizes, dtype=np.int64)
        ascending = np.argsort(sizes, kind="stable")
        sums, totals = subset_sums(self._to_high, (self.low.tie_starts, self.low.tie_ends),
                                   sizes[ascending], subsets.table, subsets.count,
                                   (self.high.tie_starts, self.high.tie_ends), self.high.tied)
        squares = [squares[b] for b in ascending] + squares[sizes.shape[0]:]
        values = [rank_correlation(ab, aa, bb, total)
                  for (ab, bb), aa, total in zip(sums, squares, totals)]
        bands = [0.0] * sizes.shape[0]
        for r, b in enumerate(ascending):
            bands[b] = values[r]
        return bands, values[sizes.shape[0]:]

    def rho(self, weights_sorted: np.ndarray) -> float:
        """rho over the pairs with non-zero weight (weights in high-D sorted order)."""
        return self.rhos([], PairSubsets.from_weights([weights_sorted]))[1][0]


def inverse_permutation(order: np.ndarray) -> np.ndarray:
    """inverse[order[q]] = q (compiled: no N^2/2-long temporaries)."""
    return invert(order)


def per_point_sizes(n: int, percentiles) -> list[int]:
    """Neighbours kept per point for each percentile: min(N-1, max(1, round(p/100 (N-1))))."""
    return [min(n - 1, max(1, round(p / 100 * (n - 1)))) for p in percentiles]


def per_point_subsets(order: np.ndarray, n: int, sizes: list[int]) -> PairSubsets:
    """The per-point pools (sizes[q] nearest neighbours of every point, ties by index) as
    weighted subsets in the stable sort ``order`` of the distances.

    A pair's weight in pool q is [j in i's pool] + [i in j's pool]: a mutual pair counts twice.
    """
    return PairSubsets.of(*pack_pools(order, n, sizes))
