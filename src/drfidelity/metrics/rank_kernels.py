"""Compiled one-pass row kernels behind the neighbour metrics: k nearest and exact ranks.

Both run once over nearly every distance row of both spaces, which is what trustworthiness and
continuity cost, so they are compiled with numba (single-threaded; comparisons and integer
counts only, so results do not depend on the CPU's kernels).

:func:`nearest` keeps the k + 1 smallest entries of a row in a sorted buffer (a new entry is
inserted after the equal ones, as it has the larger index; most entries fail the first compare).

:func:`count_ranks`: for row i with the point itself keyed to -inf and a query column j of
value v = d_ij, rho_ij = |{c : d_ic < v}| + |{c < j : d_ic = v}| (ties by index, as in
:mod:`.neighbours`). The row's t query values are sorted (padded with +inf to a power of
two); every entry of the row is placed among them by counting the queries <= it (t compares,
which the compiler vectorises; ~5x faster here than a branchy binary search) and counted in
that bucket; the running sum of the bucket counts is then the number of entries below each
query. One pass per row, no sort of the row.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel


@kernel(nogil=True)
def _nearest(keyed, out):
    """out[q] = the out.shape[1] smallest entries of row q, ascending, ties by index."""
    size = out.shape[1]
    values = np.empty(size)
    for q in range(keyed.shape[0]):
        held = 0
        for c in range(keyed.shape[1]):
            x = keyed[q, c]
            if held == size:
                if not x < values[size - 1]:
                    continue
                s = size - 1  # the current last one drops out
            else:
                s = held
                held += 1
            while s > 0 and values[s - 1] > x:
                values[s] = values[s - 1]
                out[q, s] = out[q, s - 1]
                s -= 1
            values[s] = x
            out[q, s] = c


def nearest(keyed: np.ndarray, k: int) -> np.ndarray:
    """The k nearest columns of each keyed row (own point at -inf, excluded), nearest first,
    ties broken by index; int64 (b, k). Needs k < N."""
    keyed = np.ascontiguousarray(keyed, dtype=np.float64)
    if keyed.ndim != 2 or not 0 <= k < keyed.shape[1]:
        raise ValueError(f"keyed must be (b, N) with N > k = {k}; got shape {keyed.shape}")
    out = np.empty((keyed.shape[0], k + 1), dtype=np.int64)
    _nearest(keyed, out)
    return out[:, 1:]


@kernel(nogil=True)
def _count_sorted(keyed, queries, columns, counts):
    """counts[q, s] += rho of column columns[q, s] (value queries[q, s], sorted ascending)."""
    width = queries.shape[1]
    below = np.empty(width, dtype=np.int64)  # below[b]: entries with exactly b queries <= them
    for q in range(keyed.shape[0]):
        if queries[q, 0] == np.inf:  # nothing asked in this row (distances are finite)
            continue
        below[:] = 0
        for c in range(keyed.shape[1]):
            x = keyed[q, c]
            pos = 0
            for s in range(width):  # branch-free count: vectorises, unlike a binary search
                pos += queries[q, s] <= x
            below[pos] += 1
            s = pos - 1
            while s >= 0 and queries[q, s] == x:  # x ties with this query: counts if c < j
                if c < columns[q, s]:
                    counts[q, s] += 1
                s -= 1
        running = 0
        for s in range(width):
            running += below[s]
            counts[q, s] += running


def count_ranks(keyed: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """rho(row q, columns[q, s]) for a block of rows; int64 (b, t), 0 where columns < 0 (skip).

    ``keyed`` is a (b, N) float64 block of finite distance rows with each row's own point
    set to -inf; ``columns`` is (b, t) with entries in [0, N) or negative.
    """
    keyed = np.ascontiguousarray(keyed, dtype=np.float64)
    columns = np.asarray(columns, dtype=np.int64)
    if keyed.ndim != 2 or columns.ndim != 2 or columns.shape[0] != keyed.shape[0]:
        raise ValueError(f"keyed must be (b, N) and columns (b, t); got {keyed.shape} and "
                         f"{columns.shape}")
    if columns.size and columns.max() >= keyed.shape[1]:
        raise ValueError(f"columns must be < N = {keyed.shape[1]}")
    b, t = columns.shape
    valid = columns >= 0
    values = np.take_along_axis(keyed, np.where(valid, columns, 0), axis=1)
    values[~valid] = np.inf
    order = np.argsort(values, axis=1, kind="stable")
    width = 1 << t.bit_length()  # a power of two > t: the last query slot is always +inf
    queries = np.full((b, width), np.inf)
    queries[:, :t] = np.take_along_axis(values, order, axis=1)
    sorted_columns = np.full((b, width), -1, dtype=np.int64)
    sorted_columns[:, :t] = np.take_along_axis(columns, order, axis=1)
    counts = np.zeros((b, width), dtype=np.int64)
    _count_sorted(keyed, queries, sorted_columns, counts)
    ranks = np.empty((b, t), dtype=np.int64)
    np.put_along_axis(ranks, order, counts[:, :t], axis=1)
    ranks[~valid] = 0
    return ranks
