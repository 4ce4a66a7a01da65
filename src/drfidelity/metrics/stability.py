"""Run-to-run stability of a stochastic method's map.

Maps are only defined up to translation, scale, rotation and reflection, so runs are compared
after orthogonal Procrustes superimposition (``scipy.spatial.procrustes``: both configurations
centred and scaled to unit Frobenius norm, then the optimal rotation/reflection applied).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.spatial import procrustes


def _validate_runs(embeddings) -> list[np.ndarray]:
    runs = [np.asarray(Y, dtype=np.float64) for Y in embeddings]
    if len(runs) < 2:
        raise ValueError(f"embeddings must hold at least 2 runs, got {len(runs)}")
    shape = runs[0].shape
    if len(shape) != 2 or shape[0] < 2 or any(Y.shape != shape for Y in runs):
        raise ValueError("embeddings must be (N, d) arrays of one common shape with N >= 2, got "
                         f"{[Y.shape for Y in runs]}")
    if not all(np.isfinite(Y).all() for Y in runs):
        raise ValueError("embeddings must be finite (no NaN or inf)")
    if any(np.ptp(Y, axis=0).max() == 0 for Y in runs):
        raise ValueError("every embedding needs at least two distinct points (none can be aligned)")
    return runs


def position_dispersion(embeddings) -> float:
    """Mean per-point spread of the aligned runs, in units of the unit-norm reference.

    ``embeddings`` are the runs ordered by seed; the first (lowest seed), centred and scaled to
    unit Frobenius norm, is the reference. Every run (the reference included) is aligned onto
    it with ``procrustes(ref, Y)``; per point, the population std (ddof 0) over runs of each
    coordinate, combined as sqrt(s_x^2 + s_y^2); mean over points. A gauge transform (shift,
    scale, rotation, reflection) of the same map gives ~0.
    """
    runs = _validate_runs(embeddings)
    reference = runs[0] - runs[0].mean(axis=0)
    reference /= np.linalg.norm(reference)
    aligned = np.stack([procrustes(reference, Y)[1] for Y in runs])
    return float(np.mean(np.linalg.norm(np.std(aligned, axis=0), axis=1)))


def mean_pairwise_disparity(embeddings) -> float:
    """Mean Procrustes disparity (residual sum of squares after alignment) over run pairs."""
    runs = _validate_runs(embeddings)
    return float(np.mean([procrustes(a, b)[2] for a, b in combinations(runs, 2)]))
