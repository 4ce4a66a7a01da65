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
    """``pdist(X, metric)``, or the upper triangle of X when ``metric='precomputed'``;
    ValueError naming ``name`` and a pair when a distance is not finite."""
    if metric == "precomputed":
        n = X.shape[0]
        out = np.empty(n * (n - 1) // 2)
        for i in range(n - 1):
            start = row_start(i, n)
            out[start:start + n - i - 1] = X[i, i + 1:]
        return out
    return check_finite(pdist(X, metric=metric), name, metric, X.shape[0])


COLUMN_TILE = 2048  # columns per cdist call: their coordinates stay in cache for a row block


def metric_options(X: np.ndarray, metric: str) -> dict:
    """The data-dependent parameters ``pdist(X, metric)`` derives from all of X (seuclidean's
    variances, mahalanobis' inverse covariance), fixed once, so that distance rows computed
    block by block by ``cdist`` (which would derive them from each block) equal pdist's."""
    if metric == "seuclidean":
        return {"V": np.var(X, axis=0, ddof=1)}
    if metric == "mahalanobis":
        return {"VI": np.linalg.inv(np.cov(X.T)).T}
    return {}


def feature_rows(X: np.ndarray, rows: np.ndarray, metric: str, options: dict) -> np.ndarray:
    """``cdist(X[rows], X, metric, **options)``, COLUMN_TILE columns at a time: each pair is
    computed alone, so the values are the same bytes, and at large N (X larger than the cache)
    the tiles are about twice as fast as one call."""
    block = X[rows]
    out = np.empty((block.shape[0], X.shape[0]))
    for start in range(0, X.shape[0], COLUMN_TILE):
        out[:, start:start + COLUMN_TILE] = cdist(block, X[start:start + COLUMN_TILE],
                                                  metric=metric, **options)
    return out


def check_finite(d: np.ndarray, name: str, metric: str, n: int, rows=None) -> np.ndarray:
    """``d`` (condensed, or distance rows ``rows``) if every entry is finite; else ValueError
    naming the first pair, before any compiled kernel reads a NaN (its sort assumes none)."""
    step = ROW_BLOCK_ENTRIES
    flat = d.reshape(-1)
    for start in range(0, flat.shape[0], step):
        if np.isfinite(np.add.reduce(flat[start:start + step])):
            continue  # a finite sum: every term is finite (the fast test, no temporary)
        bad = np.flatnonzero(~np.isfinite(flat[start:start + step]))
        if bad.size:
            position = start + int(bad[0])
            if rows is None:
                i = int(np.searchsorted(row_start(np.arange(n), n), position, side="right")) - 1
                j = position - row_start(i, n) + i + 1
            else:
                i, j = int(rows[position // n]), position % n
            raise ValueError(f"{name}: the {metric} distance between points {i} and {j} is "
                             f"{flat[position]} (not finite); check those rows or choose "
                             "another metric")
    return d


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
