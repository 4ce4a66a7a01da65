"""Band stress and stress fidelity.

With high-D distances a and 2-D distances b on the same pairs, the 2-D map is first rescaled by
the least-squares factor alpha = <a, b>/<b, b>; stress = sqrt(sum (a - alpha b)^2 / sum a^2) lies
in [0, 1] (alpha = 0 already gives 1) and fidelity = max(0, 1 - stress). The sums are taken as
``np.dot`` of the band's pairs in condensed order, chunk by chunk (CHUNK condensed positions),
added in chunk order. All bands of a reference vector come from two compiled passes over a and
b (:func:`~.pair_kernels.band_dots`), bit-identical to those numpy calls in exact numerics; the
sums of a^2 and the band sizes per chunk depend on a only and are computed once.
"""

from __future__ import annotations

import numpy as np

from .pair_kernels import band_counts, band_dots

CHUNK = 1 << 22


class BandStress:
    """The high-D side of the stress of several bands ``a <= radius`` of one vector a.

    Bands are held in ascending radius (the passes rely on it); results come back in the
    order given.
    """

    def __init__(self, a: np.ndarray, radii, min_pairs):
        self.a = a
        radii = np.asarray(radii, dtype=np.float64)
        self.given = np.argsort(radii, kind="stable")
        self.radii = radii[self.given]
        self.min_pairs = np.asarray(min_pairs, dtype=np.int64)[self.given]
        self.chunk = CHUNK
        self.counts = band_counts(a, self.radii, self.chunk)
        self.sizes = self.counts.sum(axis=0)
        self.squares = band_dots(a, a, self.radii, self.counts, self.chunk)[:, 0]

    def band_sizes(self) -> list[int]:
        """Pairs in each band, in the order given."""
        out = [0] * self.radii.shape[0]
        for r, band in enumerate(self.given):
            out[band] = int(self.sizes[r])
        return out

    def stress(self, b: np.ndarray) -> list[float]:
        """Normalised stress after optimal scaling, per band; NaN for fewer than its
        ``min_pairs`` pairs or a degenerate side."""
        ab, bb = band_dots(self.a, b, self.radii, self.counts, self.chunk).T
        valid = (self.sizes >= self.min_pairs) & (bb > 0) & (self.squares > 0)
        alphas = np.where(valid, ab / np.where(valid, bb, 1.0), 0.0)
        residuals = band_dots(self.a, b, self.radii, self.counts, self.chunk, alphas)[:, 0]
        out = [0.0] * self.radii.shape[0]
        for r, band in enumerate(self.given):
            out[band] = float(np.sqrt(residuals[r] / self.squares[r])) if valid[r] else np.nan
        return out


def fidelity(stress_value: float) -> float:
    """max(0, 1 - stress); NaN stays NaN."""
    return float("nan") if np.isnan(stress_value) else max(0.0, 1.0 - stress_value)
