"""Pair bands defined on the high-D (reference) distances.

Bands are global: one absolute radius per reference vector, the pairs with ``d_ref <= radius``.
"""

from __future__ import annotations

import numpy as np

PERCENTILES = (5, 10, 20, 30, 50, 75, 100)

HIST_BINS = 256
SMOOTH_WIDTH = 9
MODE_ORDER = 4
MODE_REL_HEIGHT = 0.05
VALLEY_DIP = 0.95
FALLBACK_PERCENTILE = 5


def sorted_percentile(d_ref: np.ndarray, order: np.ndarray, q) -> np.ndarray:
    """``np.percentile(d_ref, q)`` (linear) read off the sort order: no partition, no copy.

    The same arithmetic as numpy's: virtual index (n - 1) q / 100, a = the value at its floor,
    b = the next; a + (b - a) g, or b - (b - a)(1 - g) when g >= 0.5 (tests check the bits).
    """
    n = d_ref.shape[0]
    virtual = (n - 1) * np.true_divide(np.asarray(q, dtype=np.float64), 100)
    below = np.floor(virtual).astype(np.intp)
    above = np.minimum(below + 1, n - 1)
    gamma = virtual - below
    a, b = d_ref[order[below]], d_ref[order[above]]
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


def percentile_thresholds(d_ref: np.ndarray, order: np.ndarray | None = None) -> dict[int, float]:
    """Radius of each fixed band: ``np.percentile`` (linear) of ``d_ref``; p = 100 keeps all.

    With the stable ``order`` of ``d_ref`` the percentiles are read off it (same values).
    """
    fixed = [p for p in PERCENTILES if p < 100]
    values = np.percentile(d_ref, fixed) if order is None else sorted_percentile(d_ref, order,
                                                                                  fixed)
    radii = {p: float(v) for p, v in zip(PERCENTILES, values)}
    radii[100] = np.inf
    return radii


def strict_maxima(values: np.ndarray, order: int) -> np.ndarray:
    """Indices i with values[i] above every value within ``order`` positions (positions past
    an end read the end value): ``scipy.signal.argrelmax(values, order=order)[0]``, without
    importing scipy.signal (half a second of every fresh process's start)."""
    last = values.shape[0] - 1
    index = np.arange(values.shape[0])
    keep = np.ones(values.shape[0], dtype=bool)
    for shift in range(1, order + 1):
        keep &= values > values[np.minimum(index + shift, last)]
        keep &= values > values[np.maximum(index - shift, 0)]
    return np.flatnonzero(keep)


def first_mode_threshold(d_ref: np.ndarray, order: np.ndarray | None = None
                         ) -> tuple[float, bool]:
    """Radius of the first-mode ("structure-adaptive") near band and whether it fell back.

    The 256-bin histogram of ``d_ref`` is smoothed twice with a centred 9-bin boxcar (zero padded).
    Modes are strict local maxima over +-4 bins reaching 5 % of the highest bin. With two or more
    modes, the valley (first minimum) between the first two is the radius if it lies below the
    median distance and dips under 95 % of the first mode; otherwise the 5th percentile is used
    (fallback). With the stable ``order`` of ``d_ref``, median and percentile are read off it.
    """
    counts, edges = np.histogram(d_ref, bins=HIST_BINS)
    centres = 0.5 * (edges[:-1] + edges[1:])
    box = np.full(SMOOTH_WIDTH, 1.0 / SMOOTH_WIDTH)
    once = np.convolve(counts.astype(np.float64), box, mode="same")
    smooth = np.convolve(once, box, mode="same")
    modes = strict_maxima(smooth, MODE_ORDER)
    modes = modes[smooth[modes] >= MODE_REL_HEIGHT * smooth.max()]
    if modes.shape[0] >= 2:
        m0, m1 = modes[0], modes[1]
        valley = m0 + int(np.argmin(smooth[m0:m1 + 1]))
        if centres[valley] < median(d_ref, order) and smooth[valley] < VALLEY_DIP * smooth[m0]:
            return float(centres[valley]), False
    if order is None:
        return float(np.percentile(d_ref, FALLBACK_PERCENTILE)), True
    return float(sorted_percentile(d_ref, order, [FALLBACK_PERCENTILE])[0]), True


def median(d_ref: np.ndarray, order: np.ndarray | None = None) -> float:
    """``np.median(d_ref)``; with the stable ``order``, the mean of the one or two middle
    values read off it (what np.median computes after its partition)."""
    if order is None:
        return float(np.median(d_ref))
    size = d_ref.shape[0]
    middle = [size // 2] if size % 2 else [size // 2 - 1, size // 2]
    return float(np.mean(d_ref[order[middle]]))
