"""Every input of the metric engine, checked before anything is computed or compiled.

This module needs numpy only (no numba, no scipy), so that ``drfidelity score`` refuses a
wrong-shape map, bad labels or outlier indices, or too large an input in about a second, and
not after the engine has been imported, its kernels compiled and the high-D side built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from drfidelity.core.validation import (check_embedding, check_indices, check_input_space, check_labels,
                                   check_memory)

# Peak memory per pair of points, rounded up. Held per reference space: the float64 distances
# (8), the int32 inverse sort order (4), the per-point pool table (2). Scoring a map adds its
# float64 distances, sorted in place, and their int32 order (12); its per-space int32 map to
# the reference order (4) and its recomputed distances (8) come after the sort's keys are gone.
# Building a space needs 20 while sorting (distances, sorted copy, order). Measured at
# N = 20 000 in benchmarks/README.md.
BYTES_PER_PAIR_SPACE = 15
BYTES_PER_PAIR_SCORE = 13


@dataclass(frozen=True)
class ReferenceInputs:
    """The checked inputs of a :class:`~drfidelity.metrics.Reference` (see there)."""

    X: np.ndarray
    metric: str
    truth: np.ndarray | None = None
    shared_truth: bool = False  # truth given and equal to X: one reference space serves both
    labels: np.ndarray | None = None
    outlier_idx: np.ndarray | None = None  # None when absent or empty
    outlier_dir: np.ndarray | None = None
    population: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def check_memory(self) -> None:
        """MemoryError unless building the reference and scoring one map fit in memory."""
        spaces = 1 if self.truth is None or self.shared_truth else 2
        check_memory(self.n, spaces * BYTES_PER_PAIR_SPACE + BYTES_PER_PAIR_SCORE, "scoring")


def reference_inputs(X, **options) -> ReferenceInputs:
    """The inputs of a ``Reference`` (X and the keywords of its constructor but
    ``per_point``), checked, and its peak memory estimated (see there).

    Raises
    ------
    ValueError
        Input of the wrong shape, non-finite values, inconsistent N, bad labels or indices.
    MemoryError
        When the estimated peak memory of building the reference and scoring one map exceeds
        the memory available.
    """
    inputs = _checked(X, **options)
    inputs.check_memory()
    return inputs


def score_inputs(X, Y, **options) -> tuple[ReferenceInputs, np.ndarray]:
    """:func:`reference_inputs`, with the map Y checked against them before the memory."""
    inputs = _checked(X, **options)
    Y = check_embedding(Y, inputs.n)
    inputs.check_memory()
    return inputs, Y


def _checked(X, *, truth=None, labels=None, outlier_idx=None, outlier_dir=None,
             population=None, metric: str = "euclidean") -> ReferenceInputs:
    X = check_input_space("X", X, metric)
    n = X.shape[0]
    if truth is not None:
        truth = check_input_space("truth", truth, metric, n=n)
    if labels is not None:
        labels = check_labels("labels", labels, n)
    idx = dirs = None
    if outlier_idx is not None and np.asarray(outlier_idx).size:
        idx = check_indices("outlier_idx", outlier_idx, n)
        if idx.shape[0] >= n:
            raise ValueError("outlier_idx must leave at least one bulk point")
        if outlier_dir is not None:
            dirs = check_labels("outlier_dir", outlier_dir, idx.shape[0])
    elif outlier_dir is not None:
        raise ValueError("outlier_dir needs a non-empty outlier_idx")
    if population is not None:
        population = check_labels("population", population, n)
        if not np.isin(population, (0, 1)).all():
            raise ValueError("population must hold 0 (majority) or 1 (minority) per point")
    shared_truth = truth is not None and np.array_equal(truth, X)
    return ReferenceInputs(X, metric, truth, shared_truth, labels, idx, dirs, population)
