"""Inputs that are no real numbers are refused by name, before anything is computed: a cast to
float64 would drop an imaginary part, turn dates into day counts and NaT into a number, or fail
inside numpy naming no input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from drfidelity.metrics import score
from drfidelity.metrics.inputs import score_inputs

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 4))
Y = X[:, :2].copy()


def _days(base):
    values = np.arange(base.size).astype("datetime64[D]").reshape(base.shape)
    values[0, 0] = np.datetime64("NaT")
    return values


def _object_with(base, item):
    """``base`` as an object array with ``item`` in its first cell (as a DataFrame's .values
    gives for a frame with one such column)."""
    values = base.astype(object)
    values[0, 0] = item
    return values


#: each case: the input made from a valid one (X or Y), and words of its refusal
NOT_REAL = {
    "dates with a NaT": (_days, "dates or times"),
    "time spans": (lambda b: np.ones(b.shape, dtype="timedelta64[s]"), "time spans"),
    "complex in an object array": (lambda b: _object_with(b, 1 + 1j), "a complex"),
    "a date in an object array": (lambda b: _object_with(b, np.datetime64("2020-01-01")),
                                  "a datetime64"),
    "text in an object array (a DataFrame with a text column)":
        (lambda b: _object_with(b, "a"), "a str"),
    "numbers as text": (lambda b: b.astype(str), "text"),
    "bytes": (lambda b: b.astype("S8"), "bytes"),
    "records": (lambda b: np.zeros(len(b), dtype=[("a", float), ("b", float)]), "records"),
    "complex": (lambda b: b + 1j, "complex"),
    "a sparse csr matrix": (scipy.sparse.csr_matrix, "sparse matrix (csr_matrix)"),
    "a sparse coo array": (scipy.sparse.coo_array, "sparse matrix (coo_array)"),
    "long doubles beyond float64": (lambda b: b.astype(np.longdouble) * np.longdouble(10) ** 400,
                                    "beyond float64's range"),
}


@pytest.mark.parametrize("case", NOT_REAL, ids=str)
@pytest.mark.parametrize("which", ["X", "Y", "truth"])
def test_no_real_numbers_are_refused_naming_the_input(case, which):
    make, words = NOT_REAL[case]
    args, options = {"X": ((make(X), Y), {}), "Y": ((X, make(Y)), {}),
                     "truth": ((X, Y), {"truth": make(X)})}[which]
    with pytest.raises(ValueError) as refused:
        score_inputs(*args, **options)
    assert str(refused.value).startswith(which + " ") and words in str(refused.value)


def test_real_numbers_in_any_real_dtype_score_as_float64():
    """Integers, float32, long doubles within range and real numbers in an object array are
    real numbers: the same row as float64."""
    grid = np.round(X * 4)
    expected = score(grid, np.round(Y * 4))
    for dtype in (np.int64, np.float32, np.longdouble, object):
        assert score(grid.astype(dtype), np.round(Y * 4).astype(dtype)) == pytest.approx(
            expected, nan_ok=True, abs=0)


def _with_constant_column(base):
    values = base.copy()
    values[:, 2] = 1.0
    return values


def _with_copied_column(base):
    values = base.copy()
    values[:, 3] = 2 * values[:, 1]
    return values


#: data no distance can be computed from, each case with the words of its refusal; every entry
#: point (score, Reference, neighbourhood_scores, co-ranking) checks X the same way
NO_DISTANCES = {
    "no columns": (lambda b: b[:, :0], "euclidean", "no columns"),
    "seuclidean, a constant column": (_with_constant_column, "seuclidean",
                                      "column 2 (1 of 4) is constant"),
    "seuclidean, two constant columns": (lambda b: np.ones_like(b[:, :2]) @ np.ones((2, 4)),
                                         "seuclidean", "columns 0, 1, 2, 3 (4 of 4) are constant"),
    "mahalanobis, more columns than points": (lambda b: np.hstack([b] * 12), "mahalanobis",
                                              "more points than columns (N = 40, D = 48)"),
    "mahalanobis, a column a multiple of another": (_with_copied_column, "mahalanobis",
                                                    "singular (rank 3)"),
}


@pytest.mark.parametrize("case", NO_DISTANCES, ids=str)
def test_data_no_distance_can_be_computed_from_is_refused_naming_the_columns(case):
    from drfidelity.metrics import coranking_matrix, neighbourhood_scores

    make, metric, words = NO_DISTANCES[case]
    for name, call in (("X", lambda: score_inputs(make(X), Y, metric=metric)),
                       ("truth", lambda: score_inputs(X, Y, truth=make(X), metric=metric)),
                       ("X", lambda: neighbourhood_scores(make(X), Y, k=5, metric=metric)),
                       ("X", lambda: coranking_matrix(make(X), Y, metric=metric))):
        with pytest.raises(ValueError) as refused:
            call()
        assert str(refused.value).startswith(name + " ") or str(refused.value).startswith(
            name + ":")
        assert words in str(refused.value)
