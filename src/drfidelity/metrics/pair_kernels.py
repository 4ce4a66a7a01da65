"""Compiled passes over all N(N-1)/2 pairs: the stable sort, tie groups and the subset sums.

Every pass here reads an N^2/2-long vector once or twice, so each is one numba loop instead of
a sequence of numpy calls with N^2/2-long temporaries. The sort, the subset sums and the band
dots split their work over :func:`threads` Python threads (the kernels release the GIL) such that
the result is the same, to the bit, for any number of threads.

* :func:`sort_in_place`: the stable ascending order (ties by position) as int32, by an in-place
  bucket sort (no N^2/2-long buffer besides the keys and the order); its buckets are sorted on
  several threads.
* :func:`tie_groups`: the runs of equal values of a sorted vector.
* :func:`subset_sums`: exact integer Spearman sums for many pair subsets in one pass along the
  2-D order (see :mod:`.shepard`).
* :func:`pack_pools`: the per-point pools, by one pass along the stable order.
* :func:`band_dots`: the chunked ``np.dot`` sums of the band stress, all bands at once.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .jit import kernel

SPILL = 1 << 62  # integer sums are kept as hi * SPILL + lo with 0 <= lo < SPILL
FANOUT = 2048  # buckets per level of the sort: its write heads stay in cache
SHORT_RUN = 48  # runs up to this size are sorted by insertion
BLOCK = 4096  # 2-D positions whose subset table rows are gathered before they are used
PARALLEL_PAIRS = 1 << 20  # shorter walks along the 2-D order are not cut into pieces
THREADS_VARIABLE = "DRFIDELITY_METRIC_THREADS"  # the pair passes' threads (speed only)


@kernel(nogil=True)
def _insertion_sort(keys, index, lo, hi):
    """Sort the pairs (keys, index)[lo:hi] by key, then index, in place (short runs)."""
    for s in range(lo + 1, hi):
        v = keys[s]
        j = index[s]
        t = s
        while t > lo and (keys[t - 1] > v or (keys[t - 1] == v and index[t - 1] > j)):
            keys[t] = keys[t - 1]
            index[t] = index[t - 1]
            t -= 1
        keys[t] = v
        index[t] = j


@kernel(inline="always")
def _bucket(v, vmin, scale, spread, buckets):
    """floor((v - vmin) / spread * buckets), capped: never decreases as v grows."""
    if scale > 0:
        return min(int((v - vmin) * scale), buckets - 1)
    return min(int((v - vmin) / spread * buckets), buckets - 1)


@kernel(nogil=True)
def _partition(keys, order, lo, hi, fanout, short_run, counts, heads):
    """Split the run (keys, order)[lo:hi] into buckets in place; return their number.

    The run is split into up to ``fanout`` buckets by ``floor((v - min) * scale)``, which never
    decreases as v grows (IEEE operations round monotonically), and the pairs are permuted into
    their buckets in place (cycle leader); bucket b is then [counts[b], counts[b + 1]). A short
    run is sorted by insertion and a run of one value by index instead (0 buckets).
    """
    if hi - lo <= short_run:
        _insertion_sort(keys, order, lo, hi)
        return 0
    vmin = keys[lo]
    vmax = keys[lo]
    for t in range(lo, hi):
        vmin = min(vmin, keys[t])
        vmax = max(vmax, keys[t])
    if vmin == vmax:  # one value: order by index
        order[lo:hi] = np.sort(order[lo:hi])
        return 0
    buckets = max(2, min(fanout, (hi - lo) // 16))
    spread = vmax - vmin
    scale = buckets / spread
    if not np.isfinite(scale):  # a subnormal spread: scale by division instead
        scale = -1.0
    counts[:buckets + 1] = 0
    for t in range(lo, hi):
        counts[_bucket(keys[t], vmin, scale, spread, buckets) + 1] += 1
    counts[0] = lo
    for b in range(buckets):
        counts[b + 1] += counts[b]
        heads[b] = counts[b]
    for b in range(buckets):
        while heads[b] < counts[b + 1]:
            v = keys[heads[b]]
            j = order[heads[b]]
            c = _bucket(v, vmin, scale, spread, buckets)
            while c != b:  # carry the pair to its bucket, pick up the one there
                p = heads[c]
                heads[c] += 1
                v, keys[p] = keys[p], v
                j, order[p] = order[p], j
                c = _bucket(v, vmin, scale, spread, buckets)
            keys[heads[b]] = v
            order[heads[b]] = j
            heads[b] += 1
    return buckets


@kernel(inline="always")
def _push(stack, top, lo, hi):
    """Put the run [lo, hi) on the stack at ``top`` (grown when full); return the stack."""
    if top == stack.shape[0]:
        grown = np.empty((2 * top, 2), dtype=np.int64)
        grown[:top] = stack
        stack = grown
    stack[top, 0] = lo
    stack[top, 1] = hi
    return stack


@kernel(nogil=True)
def _sort_runs(keys, order, bounds, fanout, short_run):
    """Sort (keys, order) by key, then order, in place inside each run [bounds[r],
    bounds[r + 1]): most-significant-bucket first, each bucket a new run."""
    stack = np.empty((1024, 2), dtype=np.int64)
    top = 0
    for r in range(bounds.shape[0] - 1):
        if bounds[r + 1] - bounds[r] > 1:
            stack = _push(stack, top, bounds[r], bounds[r + 1])
            top += 1
    counts = np.empty(fanout + 1, dtype=np.int64)
    heads = np.empty(fanout, dtype=np.int64)
    while top:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        buckets = _partition(keys, order, lo, hi, fanout, short_run, counts, heads)
        for b in range(buckets):
            if counts[b + 1] - counts[b] > 1:
                stack = _push(stack, top, counts[b], counts[b + 1])
                top += 1


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system reports one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def threads() -> int:
    """Threads of the pair passes: ``$DRFIDELITY_METRIC_THREADS``, else the usable cores.

    Every pass splits its work so that the result does not depend on this number (a sort's
    output is unique, integer sums are exact, float sums are added in one fixed order)."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return usable_cores()
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a whole number of threads >= 1, "
                         f"got {value[:40]!r}")
    return int(value)


def run_parallel(tasks: list, workers: int) -> list:
    """``[task() for task in tasks]``, on up to ``workers`` threads (the kernels release the
    GIL)."""
    if workers <= 1 or len(tasks) <= 1:
        return [task() for task in tasks]
    with ThreadPoolExecutor(min(workers, len(tasks))) as pool:
        return list(pool.map(lambda task: task(), tasks))


def balanced_cuts(bounds: np.ndarray, parts: int) -> list[int]:
    """Indices into the ascending ``bounds`` that cut [bounds[0], bounds[-1]) into ``parts``
    pieces of about equal length, at bounds only (first 0, last len(bounds) - 1)."""
    total = bounds[-1] - bounds[0]
    targets = bounds[0] + total * np.arange(1, parts) // parts
    inner = np.searchsorted(bounds, targets).tolist()
    return sorted({0, *inner, bounds.shape[0] - 1})


def sort_in_place(keys: np.ndarray, dtype=np.int32, workers: int | None = None) -> np.ndarray:
    """Sort the finite float64 ``keys`` in place; return the stable order (``np.argsort(keys,
    kind="stable")`` of the input) as ``dtype``.

    About twice as fast as numpy's stable argsort on distance vectors, and beside the keys it
    needs only the order itself (int32: half of numpy's int64 order, and no merge buffer).
    After the first split into buckets, the buckets are sorted on ``workers`` threads
    (default :func:`threads`), in groups of about equal length; the order is unique, so it
    does not depend on the threads.
    """
    order = np.arange(keys.shape[0], dtype=dtype)
    if keys.shape[0] <= 1:
        return order
    counts = np.empty(FANOUT + 1, dtype=np.int64)
    heads = np.empty(FANOUT, dtype=np.int64)
    buckets = _partition(keys, order, 0, keys.shape[0], FANOUT, SHORT_RUN, counts, heads)
    bounds = counts[:buckets + 1].copy()
    if buckets:
        workers = threads() if workers is None else workers
        cuts = balanced_cuts(bounds, workers)
        run_parallel([lambda a=a, b=b: _sort_runs(keys, order, bounds[a:b + 1], FANOUT,
                                                  SHORT_RUN)
                      for a, b in zip(cuts, cuts[1:])], workers)
    return order


@kernel(nogil=True)
def _gather(values, index, out):
    for q in range(index.shape[0]):
        out[q] = values[index[q]]


@kernel(nogil=True)
def _scatter(values, index, out):
    for q in range(index.shape[0]):
        out[index[q]] = values[q]


@kernel(nogil=True)
def _invert(order, inverse):
    for q in range(order.shape[0]):
        inverse[order[q]] = q


@kernel(nogil=True)
def _mark_groups(starts, ends, bits):
    for g in range(starts.shape[0]):
        for p in range(starts[g], ends[g] + 1):
            bits[p >> 6] |= np.uint64(1) << np.uint64(p & 63)


def group_bits(starts: np.ndarray, ends: np.ndarray, length: int) -> np.ndarray:
    """Bit plane (uint64 words) of the positions inside the groups [starts, ends]."""
    bits = np.zeros(length // 64 + 1, dtype=np.uint64)
    _mark_groups(starts, ends, bits)
    return bits


def gather(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index]`` without numpy's intp copy of an int32 index (8 bytes per pair)."""
    out = np.empty(index.shape[0], dtype=values.dtype)
    _gather(values, index, out)
    return out


def scatter(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``out[index] = values`` for a permutation ``index``, without an intp copy of it."""
    out = np.empty_like(values)
    _scatter(values, index, out)
    return out


def invert(order: np.ndarray) -> np.ndarray:
    """The inverse permutation (inverse[order[q]] = q), in the dtype of ``order``."""
    inverse = np.empty_like(order)
    _invert(order, inverse)
    return inverse


@kernel(nogil=True)
def _tie_groups(ordered, starts, ends):
    """Fill starts/ends (when long enough) and return the number of groups."""
    groups = 0
    previous = False
    for q in range(ordered.shape[0] - 1):
        tied = ordered[q] == ordered[q + 1]
        if tied and not previous:
            if groups < starts.shape[0]:
                starts[groups] = q
            groups += 1
        if tied and groups <= ends.shape[0]:
            ends[groups - 1] = q + 1
        previous = tied
    return groups


def tie_groups(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends): inclusive positions of every run of >= 2 equal values in the sorted
    vector ``ordered``. Counted first, then filled: the arrays hold exactly the groups."""
    none = np.empty(0, dtype=np.int64)
    groups = _tie_groups(ordered, none, none)
    starts = np.empty(groups, dtype=np.int64)
    ends = np.empty(groups, dtype=np.int64)
    if groups:
        _tie_groups(ordered, starts, ends)
    return starts, ends


@kernel(inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@kernel(inline="always")
def _weight(row, s, shift):
    """Copies (0, 1, 2) of subset s at bit ``shift`` of a table row."""
    return np.int64(((row[2 * s] >> shift) & np.uint64(1))
                    + ((row[2 * s + 1] >> shift) & np.uint64(1)))


@kernel(inline="always")
def _below(row, s, subsets, p):
    """Copies of subset s at positions < p, from the table row of p's word."""
    mask = (np.uint64(1) << np.uint64(p & 63)) - np.uint64(1)
    count = (row[2 * subsets + (s >> 1)] >> np.uint64(32 * (s & 1))) & np.uint64(0xFFFFFFFF)
    return (np.int64(count) + _popcount(row[2 * s] & mask)
            + _popcount(row[2 * s + 1] & mask))


@kernel(inline="always")
def _add(sums, row, col, value):
    lo = sums[row, col, 1] + value
    if lo >= SPILL:
        lo -= SPILL
        sums[row, col, 0] += 1
    sums[row, col, 1] = lo


@kernel(nogil=True)
def _subset_sums(to_high, low_starts, low_ends, band_sizes, table, subsets, tied, high_starts,
                 high_ends, block, start, stop, g, sums, totals):
    """The sums of :func:`subset_sums` over the 2-D positions [start, stop), counting copies
    from 0 at ``start`` (``g``: the first 2-D tie group at or after it); columns 2 and 3 of
    ``sums`` add up w a and w b, which shift the sums when earlier copies are counted."""
    bands = band_sizes.shape[0]
    width = table.shape[1]
    before = np.zeros(bands + subsets, dtype=np.int64)
    group = np.zeros(bands + subsets, dtype=np.int64)
    length = stop
    has_ties = tied.shape[0] > 0
    rows = np.empty((block, width), dtype=np.uint64)
    q0 = start
    while q0 < length:
        q1 = min(length, q0 + block)
        k = g  # a block never splits a 2-D tie group
        while k < low_starts.shape[0] and low_starts[k] < q1:
            if low_ends[k] >= q1:
                q1 = low_ends[k] + 1
            k += 1
        if q1 - q0 > rows.shape[0]:
            rows = np.empty((q1 - q0, width), dtype=np.uint64)
        if subsets:  # gather first: independent loads overlap their cache misses
            for t in range(q0, q1):
                w = to_high[t] >> 6
                for c in range(width):
                    rows[t - q0, c] = table[w, c]
        q = q0
        while q < q1:
            e = q
            if g < low_starts.shape[0] and low_starts[g] == q:
                e = low_ends[g]
                g += 1
            h = np.int64(to_high[q])
            if e == q and not (has_ties and (tied[h >> 6] >> np.uint64(h & 63)) & np.uint64(1)):
                # no tie on either side (the common case): ranks follow from the counts
                for r in range(bands - 1, -1, -1):
                    if h >= band_sizes[r]:
                        break
                    b = 2 * before[r] + 2
                    before[r] += 1
                    _add(sums, r, 0, (2 * h + 2) * b)
                    _add(sums, r, 1, b * b)
                    _add(sums, r, 2, 2 * h + 2)
                    _add(sums, r, 3, b)
                shift = np.uint64(h & 63)
                for s in range(subsets):
                    w = _weight(rows[q - q0], s, shift)
                    if w:
                        a = 2 * _below(rows[q - q0], s, subsets, h) + w + 1
                        r = bands + s
                        b = 2 * before[r] + w + 1
                        before[r] += w
                        _add(sums, r, 0, w * a * b)
                        _add(sums, r, 1, w * b * b)
                        _add(sums, r, 2, w * a)
                        _add(sums, r, 3, w * b)
                q += 1
                continue
            group[:] = 0
            for t in range(q, e + 1):  # copies of each subset inside this 2-D tie group
                h = np.int64(to_high[t])
                for r in range(bands - 1, -1, -1):
                    if h >= band_sizes[r]:
                        break
                    group[r] += 1
                shift = np.uint64(h & 63)
                for s in range(subsets):
                    group[bands + s] += _weight(rows[t - q0], s, shift)
            for t in range(q, e + 1):
                h = np.int64(to_high[t])
                hs = h
                he = h
                if has_ties and (tied[h >> 6] >> np.uint64(h & 63)) & np.uint64(1):
                    k = np.searchsorted(high_starts, h, side="right") - 1
                    hs = high_starts[k]
                    he = high_ends[k]
                for r in range(bands - 1, -1, -1):
                    if h >= band_sizes[r]:
                        break
                    b = 2 * before[r] + group[r] + 1
                    _add(sums, r, 0, (hs + he + 2) * b)
                    _add(sums, r, 1, b * b)
                    _add(sums, r, 2, hs + he + 2)
                    _add(sums, r, 3, b)
                shift = np.uint64(h & 63)
                for s in range(subsets):
                    w = _weight(rows[t - q0], s, shift)
                    if w == 0:
                        continue
                    if he == hs:
                        a = 2 * _below(rows[t - q0], s, subsets, h) + w + 1
                    else:  # a high-D tie group: its copies share their mean rank
                        a = (_below(table[hs >> 6], s, subsets, hs)
                             + _below(table[(he + 1) >> 6], s, subsets, he + 1) + 1)
                    r = bands + s
                    b = 2 * before[r] + group[r] + 1
                    _add(sums, r, 0, w * a * b)
                    _add(sums, r, 1, w * b * b)
                    _add(sums, r, 2, w * a)
                    _add(sums, r, 3, w * b)
            for r in range(bands + subsets):
                before[r] += group[r]
            q = e + 1
        q0 = q1
    totals[:] = before


@kernel(nogil=True)
def _high_squares(start, stop, band_sizes, table, subsets, high_starts, high_ends, sums):
    """The sums of :func:`high_squares` over the high-D positions [start, stop)."""
    bands = band_sizes.shape[0]
    g = np.searchsorted(high_ends, start)  # the first tie group that does not end before it
    for h in range(start, stop):
        hs = h
        he = h
        while g < high_starts.shape[0] and high_ends[g] < h:
            g += 1
        if g < high_starts.shape[0] and high_starts[g] <= h:
            hs = high_starts[g]
            he = high_ends[g]
        for r in range(bands - 1, -1, -1):
            if h >= band_sizes[r]:
                break
            _add(sums, r, 0, (hs + he + 2) * (hs + he + 2))
        shift = np.uint64(h & 63)
        for s in range(subsets):
            w = _weight(table[h >> 6], s, shift)
            if w:
                first = _below(table[hs >> 6], s, subsets, hs)
                if he == hs:
                    a = 2 * first + w + 1
                else:
                    a = first + _below(table[(he + 1) >> 6], s, subsets, he + 1) + 1
                _add(sums, bands + s, 0, w * a * a)


def high_squares(length, band_sizes, table, subsets, high_ties) -> list[int]:
    """Exact sums of w a^2 (doubled high-D average ranks) per band and subset: they depend on
    the reference only, so they are computed once, by one walk along the high-D order, cut
    into pieces on :func:`threads` threads (every term depends on its position alone, and
    integer sums are exact)."""
    rows = band_sizes.shape[0] + subsets
    workers = threads()
    cuts = [length * part // workers for part in range(workers + 1)]

    def walk(start, stop):
        sums = np.zeros((rows, 1, 2), dtype=np.int64)
        _high_squares(start, stop, band_sizes, table, subsets, high_ties[0], high_ties[1], sums)
        return [int(hi) * SPILL + int(lo) for hi, lo in sums[:, 0]]

    pieces = run_parallel([lambda a=a, b=b: walk(a, b) for a, b in zip(cuts, cuts[1:]) if b > a],
                          workers)
    return [sum(piece[r] for piece in pieces) for r in range(rows)]


def _split_points(length: int, low_starts: np.ndarray, low_ends: np.ndarray, parts: int):
    """About equal pieces of [0, length) as (start, stop, first 2-D tie group) that never
    split a 2-D tie group."""
    cuts = [0]
    for part in range(1, parts):
        cut = max(cuts[-1], length * part // parts)
        k = int(np.searchsorted(low_starts, cut, side="right")) - 1
        if k >= 0 and low_ends[k] >= cut:
            cut = int(low_ends[k]) + 1
        cuts.append(cut)
    cuts.append(length)
    return [(a, b, int(np.searchsorted(low_starts, a))) for a, b in zip(cuts, cuts[1:]) if b > a]


def subset_sums(to_high, low_groups, band_sizes, table, subsets, high_ties, tied,
                workers: int | None = None):
    """Exact sums of a*b and b*b (doubled average ranks) and the copy count per subset.

    Rows of the result: first the bands (prefixes of the high-D order of the given sizes,
    ascending), then the ``subsets`` weighted subsets of ``table`` (see :func:`subset_table`).
    The walk goes along the 2-D order, so the subsets' words are read at random high-D
    positions: they are gathered block by block before use, so that the cache misses overlap.
    The 2-D order is cut into pieces walked on ``workers`` threads (default :func:`threads`),
    each counting its copies from 0: with ``o`` copies before a piece, its b are 2 o larger,
    so its sums shift by 2 o sum(w a) and 4 o sum(w b) + 4 o^2 sum(w), in exact integers; the
    result does not depend on the pieces. Returns (sums as Python ints, shape (rows, 2),
    totals).
    """
    rows = band_sizes.shape[0] + subsets
    workers = threads() if workers is None else workers
    pieces = _split_points(to_high.shape[0], low_groups[0], low_groups[1],
                           workers if to_high.shape[0] >= PARALLEL_PAIRS else 1)

    def walk(piece):
        sums = np.zeros((rows, 4, 2), dtype=np.int64)
        totals = np.zeros(rows, dtype=np.int64)
        _subset_sums(to_high, low_groups[0], low_groups[1], band_sizes, table, subsets, tied,
                     high_ties[0], high_ties[1], BLOCK, *piece, sums, totals)
        return [[int(hi) * SPILL + int(lo) for hi, lo in row] for row in sums], totals

    exact = [[0, 0] for _ in range(rows)]
    before = [0] * rows
    for sums, totals in run_parallel([lambda piece=piece: walk(piece) for piece in pieces],
                                     workers):
        for r, (ab, bb, wa, wb) in enumerate(sums):
            o = before[r]
            exact[r][0] += ab + 2 * o * wa
            exact[r][1] += bb + 4 * o * wb + 4 * o * o * int(totals[r])
            before[r] = o + int(totals[r])
    return exact, before


@kernel(nogil=True)
def _prefix_counts(bits, prefix):
    for w in range(bits.shape[0] - 1):
        for s in range(bits.shape[1]):
            prefix[w + 1, s] = prefix[w, s] + _popcount(bits[w, s, 0]) + _popcount(bits[w, s, 1])


def pack_bits(flags: np.ndarray, words: int) -> np.ndarray:
    """A boolean vector as little-endian uint64 words (bit p of the vector = bit p % 64 of
    word p // 64), zero padded to ``words`` words."""
    packed = np.zeros(words * 8, dtype=np.uint8)
    raw = np.packbits(flags, bitorder="little")
    packed[:raw.shape[0]] = raw
    return packed.view(np.uint64)


def pack_subsets(halves: list, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Bit planes and per-word prefix counts of weighted pair subsets in high-D sorted order.

    ``halves[s]`` is a pair (first, second) of boolean vectors (second may be None): the weight
    of sorted position p in subset s is first[p] + second[p] (0, 1 or 2 copies). Returns
    ``bits`` (words, S, 2) uint64 and ``prefix`` (words, S), the copies before each word
    (int32 while they fit): 2.5 bits per pair and subset, where a uint8 weight costs 8.
    """
    words = length // 64 + 1
    bits = np.zeros((words, len(halves), 2), dtype=np.uint64)
    for s, pair in enumerate(halves):
        for k, flags in enumerate(pair):
            if flags is not None:
                bits[:, s, k] = pack_bits(flags, words)
    prefix = np.zeros((words, len(halves)), dtype=np.int32 if 2 * length < 2**31 else np.int64)
    _prefix_counts(bits, prefix)
    return bits, prefix


@kernel(inline="always")
def _pair_of(p, n):
    """(i, j), i < j, of condensed position p: row i starts at i n - i (i + 1) / 2."""
    b = 2.0 * n - 1.0
    i = int((b - np.sqrt(b * b - 8.0 * p)) / 2.0)
    while i > 0 and i * n - i * (i + 1) // 2 > p:
        i -= 1
    while (i + 1) * n - (i + 1) * (i + 2) // 2 <= p:
        i += 1
    return i, p - (i * n - i * (i + 1) // 2) + i + 1


@kernel(nogil=True)
def _pool_bits(order, n, sizes, bits):
    pools = bits.shape[1]
    seen = np.zeros(n, dtype=np.int64)  # pairs of each point met so far along the order
    for h in range(order.shape[0]):
        i, j = _pair_of(np.int64(order[h]), n)
        rank_j = seen[i] + 1  # rank of j among i's neighbours
        rank_i = seen[j] + 1
        seen[i] = rank_j
        seen[j] = rank_i
        bit = np.uint64(1) << np.uint64(h & 63)
        w = h >> 6
        for q in range(pools):
            if rank_j <= sizes[q]:
                bits[w, q, 0] |= bit
            if rank_i <= sizes[q]:
                bits[w, q, 1] |= bit


def pack_pools(order: np.ndarray, n: int, sizes) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pack_subsets` of the per-point pools, from the stable order of the distances.

    Pool q holds the ordered pair (i, j) when j is among the ``sizes[q]`` nearest neighbours
    of i, ties by index; pair (i < j) has one copy for j in i's pool and one for i in j's.
    Along the stable order, a running count per point is the rank of each pair in both its
    rows: equal distances come in condensed order, which within one row is neighbour-index
    order. So one pass, with no row sort and no per-pair level vector, builds every pool.
    """
    length = order.shape[0]
    sizes = np.asarray(sizes, dtype=np.int64)
    bits = np.zeros((length // 64 + 1, sizes.shape[0], 2), dtype=np.uint64)
    _pool_bits(order, n, sizes, bits)
    prefix = np.zeros((bits.shape[0], sizes.shape[0]),
                      dtype=np.int32 if 2 * length < 2**31 else np.int64)
    _prefix_counts(bits, prefix)
    return bits, prefix


def subset_table(bits: np.ndarray, prefix: np.ndarray) -> np.ndarray:
    """One row per 64 sorted positions: the 2 S half-words of the S subsets, then their copy
    counts before the row (two uint32 per uint64), padded to whole 64-byte cache lines and
    aligned, so that the row a random position needs is one or two adjacent lines."""
    words, subsets = prefix.shape
    if 2 * int(prefix[-1].max(initial=0)) + 128 >= 2**32:
        raise ValueError("subset copy counts must stay below 2^32")
    width = 2 * subsets + (subsets + 1) // 2
    width += -width % 8
    raw = np.zeros(words * width + 16, dtype=np.uint64)
    start = (-raw.ctypes.data // 8) % 16  # 128-byte alignment
    table = raw[start:start + words * width].reshape(words, width)
    table[:, :2 * subsets] = bits.reshape(words, 2 * subsets)
    counts = np.zeros((words, 2 * ((subsets + 1) // 2)), dtype=np.uint32)
    counts[:, :subsets] = prefix
    table[:, 2 * subsets:2 * subsets + counts.shape[1] // 2] = counts.view(np.uint64)
    return table


def split_table(table: np.ndarray, subsets: int) -> tuple[np.ndarray, np.ndarray]:
    """(bits (words, S, 2), prefix (words, S)) back from :func:`subset_table`."""
    bits = table[:, :2 * subsets].reshape(table.shape[0], subsets, 2).copy()
    half = (subsets + 1) // 2
    counts = np.ascontiguousarray(table[:, 2 * subsets:2 * subsets + half]).view(np.uint32)
    return bits, counts[:, :subsets].astype(np.int64)


@kernel(nogil=True)
def _band_counts(a, radii, chunk, counts):
    bands = radii.shape[0]
    for i in range(a.shape[0]):
        x = a[i]
        c = i // chunk
        for r in range(bands - 1, -1, -1):
            if not x <= radii[r]:
                break
            counts[c, r] += 1


def band_counts(a: np.ndarray, radii: np.ndarray, chunk: int) -> np.ndarray:
    """Pairs with a <= radii[r] in each chunk of ``chunk`` condensed positions: (chunks, R)."""
    counts = np.zeros((-(-a.shape[0] // chunk), radii.shape[0]), dtype=np.int64)
    _band_counts(a, radii, chunk, counts)
    return counts


@kernel(nogil=True)
def _band_dots(a, b, radii, counts, alphas, chunk, mode, first, last, out):
    """Per chunk c in [first, last) and band, the np.dot sums of the band's compressed arrays
    (see band_dots) into out[c]."""
    bands = radii.shape[0]
    acc = np.zeros((bands, 2, 8))
    seen = np.zeros(bands, dtype=np.int64)
    tails = np.zeros(bands, dtype=np.int64)
    length = a.shape[0]
    for c in range(first, last):
        acc[:] = 0.0
        seen[:] = 0
        for r in range(bands):
            n = counts[c, r]
            tails[r] = n - (n & 3)
        for i in range(c * chunk, min(length, (c + 1) * chunk)):
            x = a[i]
            y = b[i]
            if mode == 0:
                first = x * y
                second = y * y
            for r in range(bands - 1, -1, -1):
                if not x <= radii[r]:
                    break
                k = seen[r]
                seen[r] = k + 1
                if k < tails[r]:
                    slot = k & 7
                elif counts[c, r] & 2:
                    slot = (k - tails[r]) & 1
                else:
                    slot = 0
                if mode == 0:
                    acc[r, 0, slot] += first
                    acc[r, 1, slot] += second
                else:
                    residual = x - alphas[r] * y
                    acc[r, 0, slot] += residual * residual
        for r in range(bands):
            for m in range(2):
                v = acc[r, m]
                out[c, r, m] = ((v[0] + v[2]) + (v[4] + v[6])) + ((v[1] + v[3]) + (v[5] + v[7]))


@kernel(nogil=True)
def _sum_chunks(per_chunk, out):
    """out = the per-chunk sums added in chunk order (as the chunked numpy calls do)."""
    for c in range(per_chunk.shape[0]):
        for r in range(per_chunk.shape[1]):
            for m in range(per_chunk.shape[2]):
                out[r, m] += per_chunk[c, r, m]


def band_dots(a, b, radii, counts, chunk, alphas=None, workers: int | None = None
              ) -> np.ndarray:
    """For every band (a <= radii[r]) the sums that ``BandStress.stress`` takes chunk by chunk.

    Without ``alphas``: columns sum over chunks of np.dot(x, y) and np.dot(y, y), where x, y
    are the chunk's band pairs of a and b in condensed order; with ``alphas``: column 0 is the
    sum of np.dot(r, r), r = x - alpha y. Bit-identical to those numpy calls in exact numerics:
    each chunk's dot accumulates as OpenBLAS's SSE2 ddot kernel does (eight partial sums, pair
    k of a 16-block into sum k mod 8, the last n mod 4 products into sums 0 and 1, then a fixed
    reduction tree; checked against np.dot in tests/test_metrics_kernels.py), so all bands come
    from one pass instead of two masked copies each. Chunks are independent, so they are
    computed on ``workers`` threads (default :func:`threads`) and then added in chunk order:
    the same bytes for any number of threads.
    """
    mode = 0 if alphas is None else 1
    alphas = np.zeros(radii.shape[0]) if alphas is None else np.asarray(alphas, dtype=np.float64)
    chunks = counts.shape[0]
    per_chunk = np.zeros((chunks, radii.shape[0], 2))
    workers = threads() if workers is None else workers
    cuts = np.linspace(0, chunks, min(workers, chunks) + 1).astype(np.int64)
    run_parallel([lambda first=first, last=last: _band_dots(a, b, radii, counts, alphas, chunk,
                                                            mode, first, last, per_chunk)
                  for first, last in zip(cuts[:-1], cuts[1:]) if last > first], workers)
    out = np.zeros((radii.shape[0], 2))
    _sum_chunks(per_chunk, out)
    return out
