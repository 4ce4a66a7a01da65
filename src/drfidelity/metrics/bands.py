"""Pair bands defined on the high-D (reference) distances.

Bands are global: one absolute radius per reference vector, the pairs with ``d_ref <= radius``.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import argrelmax

PERCENTILES = (5, 10, 20, 30, 50, 75, 100)

HIST_BINS = 256
SMOOTH_WIDTH = 9
MODE_ORDER = 4
MODE_REL_HEIGHT = 0.05
VALLEY_DIP = 0.95
FALLBACK_PERCENTILE = 5


def percentile_thresholds(d_ref: np.ndarray, overwrite_input: bool = False) -> dict[int, float]:
    """Radius of each fixed band: ``np.percentile`` (linear) of ``d_ref``; p = 100 keeps all.

    ``overwrite_input`` lets numpy partition ``d_ref`` in place instead of copying it.
    """
    values = np.percentile(d_ref, [p for p in PERCENTILES if p < 100],
                           overwrite_input=overwrite_input)
    radii = {p: float(v) for p, v in zip(PERCENTILES, values)}
    radii[100] = np.inf
    return radii


def first_mode_threshold(d_ref: np.ndarray, overwrite_input: bool = False) -> tuple[float, bool]:
    """Radius of the first-mode ("structure-adaptive") near band and whether it fell back.

    The 256-bin histogram of ``d_ref`` is smoothed twice with a centred 9-bin boxcar (zero padded).
    Modes are strict local maxima over +-4 bins reaching 5 % of the highest bin. With two or more
    modes, the valley (first minimum) between the first two is the radius if it lies below the
    median distance and dips under 95 % of the first mode; otherwise the 5th percentile is used
    (fallback). ``overwrite_input``: as for :func:`percentile_thresholds`.
    """
    counts, edges = np.histogram(d_ref, bins=HIST_BINS)
    centres = 0.5 * (edges[:-1] + edges[1:])
    box = np.full(SMOOTH_WIDTH, 1.0 / SMOOTH_WIDTH)
    once = np.convolve(counts.astype(np.float64), box, mode="same")
    smooth = np.convolve(once, box, mode="same")
    (modes,) = argrelmax(smooth, order=MODE_ORDER)
    modes = modes[smooth[modes] >= MODE_REL_HEIGHT * smooth.max()]
    if modes.shape[0] >= 2:
        m0, m1 = modes[0], modes[1]
        valley = m0 + int(np.argmin(smooth[m0:m1 + 1]))
        median = np.median(d_ref, overwrite_input=overwrite_input)
        if centres[valley] < median and smooth[valley] < VALLEY_DIP * smooth[m0]:
            return float(centres[valley]), False
    return float(np.percentile(d_ref, FALLBACK_PERCENTILE, overwrite_input=overwrite_input)), True
