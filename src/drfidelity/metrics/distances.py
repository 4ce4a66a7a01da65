"""Condensed pair distances and the index arithmetic that maps between pairs and matrix rows.

Every pair metric works on the condensed vector of ``scipy.spatial.distance.pdist`` (pairs i < j,
row-major upper triangle). Square rows are gathered from that one vector
instead of being recomputed, so every metric sees bit-identical distances and no N x N float
matrix is ever held.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist, pdist

from .jit import kernel

ROW_BLOCK_ENTRIES = 1 << 22  # ~32 MB of float64 per row block


def condensed_distances(X: np.ndarray, metric: str, name: str = "X") -> np.ndarray:
    """``pdist(X, metric)``, or the upper triangle of X when ``metric='precomputed'``; pairs
    whose squares left float64's range recomputed exactly (:func:`checked`); ValueError naming
    ``name`` and a pair when a distance is not finite."""
    if metric == "precomputed":
        n = X.shape[0]
        out = np.empty(n * (n - 1) // 2)
        for i in range(n - 1):
            start = row_start(i, n)
            out[start:start + n - i - 1] = X[i, i + 1:]
        return out
    return checked(pdist(X, metric=metric), X, metric, None, name)


COLUMN_TILE = 2048  # columns per cdist call: their coordinates stay in cache for a row block

#: Metrics with d(u, v) = d(u - v, 0) and d(s u, s v) = s**h d(u, v) for s > 0, by their
#: degree h. Only these can be recomputed pair by pair on differences scaled by a power of two.
HOMOGENEOUS_DEGREE = {"euclidean": 1, "seuclidean": 1, "mahalanobis": 1, "minkowski": 1,
                      "cityblock": 1, "chebyshev": 1, "sqeuclidean": 2}
#: Below this a distance may have lost bits: its squares reach float64's subnormal numbers
#: (2**-1022), or underflow to 0, and two points a hair apart tie with duplicates.
RANGE_FLOOR = 2.0 ** -450
FLOAT_MAX = np.finfo(np.float64).max
RESCUE_CHUNK = 4096  # pairs recomputed per step (a (chunk, D) block of differences)


def metric_options(X: np.ndarray, metric: str) -> dict:
    """The data-dependent parameters ``pdist(X, metric)`` derives from all of X (seuclidean's
    variances, mahalanobis' inverse covariance), fixed once, so that distance rows computed
    block by block by ``cdist`` (which would derive them from each block) equal pdist's."""
    if metric == "seuclidean":
        return {"V": np.var(X, axis=0, ddof=1)}
    if metric == "mahalanobis":
        return {"VI": np.linalg.inv(np.cov(X.T)).T}
    return {}


class FeatureRows:
    """Distance rows of the points X under ``metric``, a block of rows at a time, or rows of a
    precomputed matrix: a plain object, so that a Dask cluster can receive it.

    Each pair is computed alone, so a row holds the bytes of the condensed vector
    (:func:`condensed_distances`), finite-checked and rescued the same way (:func:`checked`).
    Euclidean and squared euclidean rows come from :func:`_euclidean_rows`, on X's
    coordinates packed once here (:func:`column_tiles`); other metrics from scipy's ``cdist``,
    COLUMN_TILE columns at a time (at large N, X no longer fits in the cache, and tiles are
    about twice as fast as one call).
    """

    def __init__(self, X: np.ndarray, metric: str, name: str = "X"):
        self.X, self.metric, self.name = X, metric, name
        self.options = {} if metric == "precomputed" else metric_options(X, metric)
        self.tiles = column_tiles(X) if metric in ("euclidean", "sqeuclidean") else None

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """Rows ``rows`` of the square distance matrix: (len(rows), N), float64."""
        if self.metric == "precomputed":
            return self.X[rows]
        X = self.X
        out = np.empty((len(rows), X.shape[0]))
        if self.tiles is not None:
            block = np.ascontiguousarray(X[rows], dtype=np.float64)
            _euclidean_rows(block, self.tiles, X.shape[0], self.metric == "euclidean", out)
        else:
            for start in range(0, X.shape[0], COLUMN_TILE):
                out[:, start:start + COLUMN_TILE] = cdist(
                    X[rows], X[start:start + COLUMN_TILE], metric=self.metric, **self.options)
        return checked(out, X, self.metric, self.options, self.name, rows)


EUCLIDEAN_TILE = 512  # columns per tile: D x 512 coordinates stay in L2, 512 sums in L1


def column_tiles(X: np.ndarray) -> np.ndarray:
    """X's coordinates in tiles of EUCLIDEAN_TILE points, each tile D x EUCLIDEAN_TILE and
    contiguous (the last one padded with zeros): the layout :func:`_euclidean_rows` reads.
    Why not plain X.T: its D rows lie N * 8 bytes apart, and a tile's D pieces of them
    touch D pages at once (twice the time at N = 100,000, D = 50)."""
    n, dims = X.shape
    count = -(-n // EUCLIDEAN_TILE)
    padded = np.zeros((count * EUCLIDEAN_TILE, dims))
    padded[:n] = X
    return np.ascontiguousarray(padded.reshape(count, EUCLIDEAN_TILE, dims).transpose(0, 2, 1))


@kernel(nogil=True)
def _euclidean_rows(block, tiles, n, root, out):
    """out[r, j] = sum over k, in order, of (block[r, k] - X[j, k])**2, then its square root
    when ``root``, for the N points X packed by :func:`column_tiles`: what scipy's cdist
    computes for each pair, so the same bytes.

    Why a kernel: cdist walks one pair at a time along the D coordinates. Here each
    coordinate of a row is taken against a whole tile of points, a loop the compiler
    vectorizes across points, four coordinates per pass over the tile's sums. Each pair's sum
    still runs over k in order (``a + b + c`` is ``(a + b) + c``), with no fused multiply-add
    (numba does not contract without fastmath), so no bit moves.
    """
    dims = tiles.shape[1]
    total = np.empty(EUCLIDEAN_TILE)
    for t in range(tiles.shape[0]):
        start = t * EUCLIDEAN_TILE
        width = min(EUCLIDEAN_TILE, n - start)
        for r in range(block.shape[0]):
            total[:width] = 0.0
            k = 0
            while k + 4 <= dims:
                x0, x1, x2, x3 = block[r, k], block[r, k + 1], block[r, k + 2], block[r, k + 3]
                for j in range(width):
                    d0, d1 = x0 - tiles[t, k, j], x1 - tiles[t, k + 1, j]
                    d2, d3 = x2 - tiles[t, k + 2, j], x3 - tiles[t, k + 3, j]
                    total[j] = total[j] + d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3
                k += 4
            for k in range(k, dims):
                x = block[r, k]
                for j in range(width):
                    diff = x - tiles[t, k, j]
                    total[j] += diff * diff
            if root:  # two loops, not a test per entry: each stays a vector loop
                for j in range(width):
                    out[r, start + j] = np.sqrt(total[j])
            else:
                for j in range(width):
                    out[r, start + j] = total[j]


@kernel(nogil=True)
def _count_outside(values, floor):
    """How many values are not in [floor, FLOAT_MAX]: below the floor, infinite or NaN. One
    pass, the common case of :func:`checked` (nothing to report, nothing to rescue)."""
    count = 0
    for q in range(values.shape[0]):
        v = values[q]
        count += not (v >= floor and v <= FLOAT_MAX)
    return count


def _own_entries(start: int, size: int, n: int, rows) -> int:
    """How many of the entries [start, start + size) of the distance rows ``rows`` (of N
    columns) are a point's distance to itself; a condensed vector (``rows`` None) has none."""
    if rows is None:
        return 0
    own = np.arange(len(rows)) * n + np.asarray(rows)
    return int(np.count_nonzero((own >= start) & (own < start + size)))


def checked(d: np.ndarray, X: np.ndarray, metric: str, options: dict | None, name: str,
            rows: np.ndarray | None = None) -> np.ndarray:
    """Distances ``d`` of the points X (condensed, or the distance rows ``rows``), in place.

    Every entry must be finite: else ValueError naming the first pair, before any compiled
    kernel reads a NaN (its sort assumes none). Under a :data:`HOMOGENEOUS_DEGREE` metric, every
    pair closer than :data:`RANGE_FLOOR` is recomputed from its difference scaled by a power of
    two: exact scaling, so it gets the value float64 would give if its exponent had no limit.
    Two points 1e-170 apart then rank below 2e-170 instead of tying at 0. ``options`` are
    :func:`metric_options` (None: derived here when needed).
    """
    n = X.shape[0]
    flat = d.reshape(-1)
    homogeneous = metric in HOMOGENEOUS_DEGREE
    for start in range(0, flat.shape[0], ROW_BLOCK_ENTRIES):
        block = flat[start:start + ROW_BLOCK_ENTRIES]
        if homogeneous:  # every point's distance to itself is 0, below the floor
            fine = _count_outside(block, RANGE_FLOOR) == _own_entries(start, block.size, n, rows)
        else:
            fine = _count_outside(block, -np.inf) == 0
        if fine:
            continue
        if not np.isfinite(np.add.reduce(block)):  # a finite sum: every term is finite
            bad = np.flatnonzero(~np.isfinite(block))
            if bad.size:
                i, j = _pair_at(start + bad[:1], n, rows)
                raise ValueError(f"{name}: the {metric} distance between points {i[0]} and "
                                 f"{j[0]} is {block[bad[0]]} (not finite); check those rows or "
                                 "choose another metric")
        if homogeneous and block.size and np.minimum.reduce(block) < RANGE_FLOOR:
            low = np.flatnonzero(block < RANGE_FLOOR)
            i, j = _pair_at(start + low, n, rows)
            apart = i != j  # a row's own distance is 0 by definition
            if options is None:
                options = metric_options(X, metric)
            block[low[apart]] = _rescaled_pairs(X, i[apart], j[apart], metric, options, name)
    return flat.reshape(d.shape)  # d itself: its reshape is a view


def _pair_at(positions: np.ndarray, n: int, rows) -> tuple[np.ndarray, np.ndarray]:
    """Points (i, j) of flat positions in a condensed vector (``rows`` None) or in rows."""
    if rows is None:
        i = np.searchsorted(row_start(np.arange(n), n), positions, side="right") - 1
        return i, positions - row_start(i, n) + i + 1
    return np.asarray(rows)[positions // n], positions % n


def _rescaled_pairs(X: np.ndarray, i: np.ndarray, j: np.ndarray, metric: str, options: dict,
                    name: str) -> np.ndarray:
    """d(X[i], X[j]) as d(diff * 2**-e, 0) * 2**(h e), diff = X[i] - X[j], 2**e its top.

    ValueError naming a pair whose distance is below float64's smallest normal number even so:
    its rank next to the others cannot be told."""
    degree = HOMOGENEOUS_DEGREE[metric]
    origin = np.zeros((1, X.shape[1]))
    out = np.empty(i.shape[0])
    for start in range(0, i.shape[0], RESCUE_CHUNK):
        part = slice(start, start + RESCUE_CHUNK)
        diff = X[i[part]] - X[j[part]]
        top = np.abs(diff).max(axis=1)
        exponent = np.frexp(top)[1]
        unit = np.ldexp(diff, -exponent[:, None])
        value = np.ldexp(cdist(unit, origin, metric=metric, **options)[:, 0], degree * exponent)
        lost = np.flatnonzero((value < np.finfo(np.float64).tiny) & (top > 0))
        if lost.size:
            q = start + lost[0]
            raise ValueError(f"{name}: points {i[q]} and {j[q]} are closer than float64 can "
                             f"tell apart at this scale (their {metric} distance is below "
                             "2**-1022 once the largest coordinate is below 1); rescale those "
                             "rows or drop one of them")
        out[part] = value
    return out


def row_start(i, n: int):
    """Condensed position of pair (i, i + 1)."""
    return i * n - i * (i + 1) // 2


def pair_positions(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """Condensed positions of pairs (i, j), i != j, in either order."""
    lo = np.minimum(i, j).astype(np.int64)
    hi = np.maximum(i, j).astype(np.int64)
    return row_start(lo, n) + (hi - lo - 1)


@kernel(nogil=True)
def _gather_rows(d, n, rows, out):
    for q in range(rows.shape[0]):
        i = rows[q]
        position = i - 1  # pair (0, i)
        for j in range(i):
            out[q, j] = d[position]
            position += n - j - 2  # on to pair (j + 1, i)
        out[q, i] = 0.0
        start = i * n - i * (i + 1) // 2
        for j in range(i + 1, n):
            out[q, j] = d[start + j - i - 1]


def distance_rows(d: np.ndarray, n: int, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` of the square matrix behind condensed ``d`` (diagonal 0): (len(rows), n).

    Row i is the column of pairs (j, i), j < i (condensed positions row_start(j) + i - j - 1,
    a stride that shrinks by one per j), then 0, then the contiguous run of pairs (i, j), j > i.
    Gathered by a small compiled loop: every row of both spaces is read this way, and numpy's
    ``take`` would first build an index vector per row (about twice the time).
    """
    rows = np.asarray(rows, dtype=np.int64)
    if d.shape[0] != n * (n - 1) // 2:
        raise ValueError(f"d must hold n (n - 1) / 2 = {n * (n - 1) // 2} pairs, got {d.shape[0]}")
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"rows must lie in [0, {n})")
    out = np.empty((rows.shape[0], n))
    _gather_rows(np.ascontiguousarray(d, dtype=np.float64), n, rows, out)
    return out


def row_blocks(count: int, n: int):
    """Consecutive ranges over ``count`` rows; (rows x n) blocks stay near ROW_BLOCK_ENTRIES."""
    size = max(1, min(count, ROW_BLOCK_ENTRIES // max(n, 1)))
    for start in range(0, count, size):
        yield np.arange(start, min(count, start + size))


def within_group_positions(members: np.ndarray, n: int) -> np.ndarray:
    """Condensed positions of all pairs inside ``members`` (ascending), in condensed order."""
    members = np.sort(np.asarray(members, dtype=np.int64))
    a, b = np.triu_indices(members.shape[0], 1)
    return pair_positions(members[a], members[b], n)


def pair_class(groups: np.ndarray) -> np.ndarray:
    """Per condensed pair, ``groups[i] + groups[j]`` (uint8) for a 0/1 membership vector."""
    groups = np.asarray(groups, dtype=np.uint8)
    n = groups.shape[0]
    out = np.empty(n * (n - 1) // 2, dtype=np.uint8)
    for i in range(n - 1):
        start = row_start(i, n)
        np.add(groups[i], groups[i + 1:], out=out[start:start + n - i - 1])
    return out
