"""Band stress and stress fidelity.

With high-D distances a and 2-D distances b on the same pairs, the 2-D map is first rescaled by
the least-squares factor alpha = <a, b>/<b, b>; stress = sqrt(sum (a - alpha b)^2 / sum a^2) lies
in [0, 1] (alpha = 0 already gives 1) and fidelity = max(0, 1 - stress). A band's pairs are
visited in chunks of the condensed vectors (no copy of the band), so sums are taken chunk by
chunk; values agree with the one-shot form to ~1e-15.
"""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 22


def band_stress(a: np.ndarray, b: np.ndarray, radius: float, min_pairs: int = 2) -> float:
    """Normalised stress after optimal scaling over the pairs with a <= radius (two chunked
    passes over a and b); NaN for fewer than ``min_pairs`` pairs or a degenerate side."""
    count, aa, bb, ab = 0, 0.0, 0.0, 0.0
    for lo in range(0, a.shape[0], CHUNK):
        keep = a[lo:lo + CHUNK] <= radius
        x, y = a[lo:lo + CHUNK][keep], b[lo:lo + CHUNK][keep]
        count += x.shape[0]
        aa += np.dot(x, x)
        bb += np.dot(y, y)
        ab += np.dot(x, y)
    if count < min_pairs or bb <= 0 or aa <= 0:
        return float("nan")
    alpha = ab / bb
    squares = 0.0
    for lo in range(0, a.shape[0], CHUNK):
        keep = a[lo:lo + CHUNK] <= radius
        residual = a[lo:lo + CHUNK][keep] - alpha * b[lo:lo + CHUNK][keep]
        squares += np.dot(residual, residual)
    return float(np.sqrt(squares / aa))


def fidelity(stress_value: float) -> float:
    """max(0, 1 - stress); NaN stays NaN."""
    return float("nan") if np.isnan(stress_value) else max(0.0, 1.0 - stress_value)
