"""Every input of the metric engine, checked before anything is computed or compiled.

This module needs numpy only (no numba, no scipy), so that ``drfidelity score`` refuses a
wrong-shape map, bad labels or outlier indices, or too large an input in about a second, and
not after the engine has been imported, its kernels compiled and the high-D side built.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from drfidelity.core.validation import (check_indices, check_input_space,
                                        check_labels, check_memory)

# Peak memory per pair of points, rounded up. Held per reference space: the float64 distances
# (8), the int32 inverse sort order (4), the per-point pool table (2). Scoring a map adds its
# float64 distances, sorted in place, and their int32 order (12); its per-space int32 map to
# the reference order (4) and its recomputed distances (8) come after the sort's keys are gone.
# Building a space needs 20 while sorting (distances, sorted copy, order). Measured at
# N = 20 000 in benchmarks/README.md.
BYTES_PER_PAIR_SPACE = 15
BYTES_PER_PAIR_SCORE = 13
# Coordinates whose largest magnitude lies outside [2**-SAFE_EXPONENT, 2**SAFE_EXPONENT] are
# rescaled by a power of two before anything is squared (see :func:`unit_scaled`).
SAFE_EXPONENT = 256


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
        check_score_memory(self.n, 1 if self.truth is None or self.shared_truth else 2)


def check_score_memory(n: int, spaces: int, what: str = "scoring") -> None:
    """MemoryError unless a reference of ``spaces`` spaces (X, and truth when it differs) of
    N points and the scoring of one map fit in the memory available."""
    check_memory(n, spaces * BYTES_PER_PAIR_SPACE + BYTES_PER_PAIR_SCORE, what)


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
    Y = check_map_points(Y, inputs.n)
    inputs.check_memory()
    return inputs, Y


def _checked(X, *, truth=None, labels=None, outlier_idx=None, outlier_dir=None,
             population=None, metric: str = "euclidean") -> ReferenceInputs:
    X = check_space("X", X, metric)
    n = X.shape[0]
    if truth is not None:
        truth = check_space("truth", truth, metric, n=n)
    if labels is not None:
        labels = label_codes("labels", labels, n)
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


#: dtype kinds that are no real numbers, each named in the refusal
_NOT_REAL = {"c": "complex values", "m": "time spans", "M": "dates or times",
             "U": "text", "S": "bytes", "V": "records (a structured dtype)"}


def real_values(name: str, values):
    """``values`` unchanged when they hold real numbers; else one ValueError naming ``name``
    and what it holds. A cast to float64 would drop an imaginary part, turn a date into a
    count of days and NaT into a number, or fail deep inside numpy with a message that names
    no input; a sparse matrix would become a 0-d object array."""
    if type(values).__module__.startswith("scipy.sparse"):
        raise ValueError(f"{name} is a sparse matrix ({type(values).__name__}): pass a dense "
                         "array (.toarray()); every pair's distance is computed anyway")
    array = np.asarray(values)
    kind = array.dtype.kind
    if kind in _NOT_REAL:
        raise ValueError(f"{name} must hold real numbers, got {_NOT_REAL[kind]} "
                         f"(dtype {array.dtype})")
    if kind == "O":
        odd = next((item for item in array.flat
                    if not isinstance(item, numbers.Real) or isinstance(item, np.datetime64)),
                   None)
        if odd is not None:
            raise ValueError(f"{name} must hold real numbers, got a {type(odd).__name__} "
                             f"({str(odd)[:40]}) in an object array")
    if kind == "f" and array.dtype.itemsize > 8:
        with np.errstate(over="ignore"):
            beyond = np.isfinite(array) & ~np.isfinite(array.astype(np.float64))
        if beyond.any():
            raise ValueError(f"{name} holds {int(beyond.sum())} {array.dtype} values beyond "
                             "float64's range; rescale it first")
    return values


def unit_scaled(values):
    """``values`` times a power of two that brings its largest magnitude into [0.5, 1), when that
    magnitude lies outside [2**-SAFE_EXPONENT, 2**SAFE_EXPONENT]; else ``values`` itself.

    Squared distances of coordinates near 1e200 overflow and those near 1e-200 underflow, and
    either silently changes the ranks. Multiplying by a power of two is exact (only the exponent
    changes), and every measure here is a rank or a scale-free ratio, so the rescaled input
    gives the values the unscaled one would if float64 had no range limit; ordinary input is
    returned untouched, bit for bit.
    """
    array = np.asarray(values)
    if array.dtype.kind != "f" or not array.size or not np.isfinite(array).all():
        return values  # integers never need it; the checks refuse the rest by name
    largest = float(np.abs(array).max())
    if largest == 0 or 2.0 ** -SAFE_EXPONENT <= largest <= 2.0 ** SAFE_EXPONENT:
        return values
    return np.ldexp(array.astype(np.float64), -np.frexp(largest)[1])


def rows_unit_scaled(X: np.ndarray, metric: str) -> np.ndarray:
    """X with each row whose largest magnitude lies outside [2**-SAFE_EXPONENT,
    2**SAFE_EXPONENT] scaled by a power of two into [0.5, 1), for the metrics blind to a row's
    length (cosine, correlation); else X itself.

    A row ``1e-170 * (1, ..., 1)`` has a squared norm of 0 in float64, so its cosine distances
    would differ from those of ``(1, ..., 1)``. Power-of-two scaling is exact, so an ordinary
    row keeps every bit of its distances either way.
    """
    if metric not in ("cosine", "correlation") or X.dtype.kind != "f" or not X.size:
        return X
    top = np.abs(X).max(axis=1)
    odd = (top > 0) & ((top < 2.0 ** -SAFE_EXPONENT) | (top > 2.0 ** SAFE_EXPONENT))
    if not odd.any():
        return X
    X = X.astype(np.float64)  # a copy: the caller's array stays as it was
    X[odd] = np.ldexp(X[odd], -np.frexp(top[odd])[1][:, None])
    return X


def _looks_like_distances(X: np.ndarray) -> bool:
    return (X.shape[0] == X.shape[1] and not np.diag(X).any() and (X >= 0).all()
            and np.array_equal(X, X.T))


def _undefined_rows(X: np.ndarray, metric: str) -> np.ndarray:
    """Rows whose distances under ``metric`` are NaN (0/0): all-zero rows for cosine, constant
    rows for correlation, zero-sum rows for jensenshannon."""
    if metric == "cosine":
        return np.flatnonzero(~X.any(axis=1))
    if metric == "correlation":
        return np.flatnonzero((X == X[:, :1]).all(axis=1))
    if metric == "jensenshannon":
        return np.flatnonzero(X.sum(axis=1) == 0)
    return np.empty(0, dtype=np.int64)


def _check_scaling(name: str, X: np.ndarray, metric: str) -> None:
    """ValueError naming the columns when the per-column scaling that seuclidean (variances)
    or mahalanobis (inverse covariance) derives from X does not exist, before any pair is
    computed: otherwise every distance is NaN and the first NaN pair is blamed."""
    if metric == "seuclidean":
        flat = np.flatnonzero(np.var(X, axis=0, ddof=1) == 0)
        if flat.size:
            shown = ", ".join(map(str, flat[:5])) + (", ..." if flat.size > 5 else "")
            raise ValueError(f"{name}: column{'s' if flat.size > 1 else ''} {shown} "
                             f"({flat.size} of {X.shape[1]}) {'are' if flat.size > 1 else 'is'}"
                             " constant, and seuclidean divides by each column's variance; "
                             "drop constant columns or choose another metric")
    elif metric == "mahalanobis":
        n, d = X.shape
        if n <= d:
            raise ValueError(f"{name}: mahalanobis needs more points than columns (N = {n}, "
                             f"D = {d}): the covariance of {d} columns from {n} points is "
                             "singular; reduce the columns (e.g. PCA) or choose another metric")
        rank = np.linalg.matrix_rank(np.cov(X.T))
        if rank < d:
            raise ValueError(f"{name}: the covariance matrix of its {d} columns is singular "
                             f"(rank {rank}): some columns are constant or combinations of "
                             "others, and mahalanobis inverts it; drop them or choose another "
                             "metric")


def check_space(name: str, X, metric: str, n: int | None = None) -> np.ndarray:
    """:func:`~drfidelity.core.validation.check_input_space` on the :func:`unit_scaled` input
    (and :func:`rows_unit_scaled`), refusing X without columns, rows whose distances would be
    NaN and columns seuclidean or mahalanobis cannot scale by, and warning when features look
    like a distance matrix (square, symmetric, zero diagonal) while ``metric`` is not
    ``"precomputed"``."""
    values = real_values(name, X)
    if np.ndim(values) == 2 and np.shape(values)[1] == 0:
        raise ValueError(f"{name} has {np.shape(values)[0]} rows and no columns: every "
                         "distance would be 0; pass at least one feature")
    X = check_input_space(name, unit_scaled(values), metric, n)
    if metric == "precomputed":
        return X
    X = rows_unit_scaled(X, metric)
    _check_scaling(name, X, metric)
    undefined = _undefined_rows(X, metric)
    if undefined.size:
        rows = ", ".join(map(str, undefined[:5])) + (", ..." if undefined.size > 5 else "")
        raise ValueError(f"{name}: the {metric} distance is undefined (NaN) for row"
                         f"{'s' if undefined.size > 1 else ''} {rows} ({undefined.size} of "
                         f"{X.shape[0]}); drop {'them' if undefined.size > 1 else 'it'} or "
                         "choose another metric")
    if _looks_like_distances(X):
        warnings.warn(f"{name} is square, symmetric, non-negative and zero on the diagonal: it "
                      "looks like a distance matrix, but it is scored as features; pass "
                      "metric='precomputed' (drfidelity score --metric precomputed) if it is "
                      "one", UserWarning, stacklevel=3)
    return X


def check_map_points(Y, n: int) -> np.ndarray:
    """The map scored against N data points: a finite real (n, d) array, any d >= 1, as
    C-contiguous float64 (:func:`unit_scaled`)."""
    Y = np.asarray(real_values("Y", Y))
    if Y.dtype.kind == "O":  # real numbers in an object array (checked above)
        Y = Y.astype(np.float64)
    if Y.ndim != 2 or Y.shape[0] != n or Y.shape[1] < 1:
        raise ValueError(f"Y has shape {Y.shape}, expected ({n}, d) with d >= 1: one row per "
                         "point of X")
    if Y.dtype.kind not in "iuf":
        raise ValueError(f"Y must hold real numbers, got dtype {Y.dtype}")
    if not np.all(np.isfinite(Y)):
        raise ValueError("Y contains non-finite coordinates")
    return np.ascontiguousarray(unit_scaled(Y), dtype=np.float64)


def label_codes(name: str, values, n: int) -> np.ndarray:
    """Cluster labels as int64: numbers as integers, as given (negative = unlabelled); labels of
    any other hashable type (strings, tuples, ...) as their index among the sorted distinct
    labels (in order of first appearance when they cannot be sorted), every point labelled."""
    array = np.asarray(values)
    if array.dtype.kind in "iubf" and array.ndim <= 1:
        return check_labels(name, array, n)
    items = list(values) if np.ndim(values) >= 1 else []
    if len(items) != n:
        raise ValueError(f"{name} must have one label per point ({n}), got shape {array.shape}")
    if all(isinstance(item, numbers.Integral) for item in items):
        return check_labels(name, np.array(items, dtype=np.int64), n)
    try:
        distinct = sorted(set(items))
    except TypeError:  # labels of mixed types: first appearance
        try:
            distinct = list(dict.fromkeys(items))
        except TypeError:
            raise ValueError(f"{name} must hold hashable labels (numbers, strings, tuples)") \
                from None
    code = {label: q for q, label in enumerate(distinct)}
    return np.array([code[label] for label in items], dtype=np.int64)
