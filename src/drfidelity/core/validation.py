"""The one validation module: every check of the package raises ValueError naming the argument.

Scalars (generator knobs, method hyper-parameters, settings), mapping keys (with the closest
known name), and arrays (data, maps, labels, indices, distance matrices). Booleans are rejected
wherever a number is expected (``True`` is an ``int`` in Python, and a flag passed as a count is
always a mistake).
"""

from __future__ import annotations

import difflib
import math
import numbers
from typing import Any, Iterable, Mapping

import numpy as np

from drfidelity.core.console import brief

MIN_POINTS = 4
# The metric names documented for scipy.spatial.distance.pdist / cdist (scipy keeps its own list
# private; kulczynski1 and sokalmichener, deprecated since scipy 1.15, are left out); tests
# check that scipy accepts each.
PDIST_METRICS = ("braycurtis", "canberra", "chebyshev", "cityblock", "correlation", "cosine",
                 "dice", "euclidean", "hamming", "jaccard", "jensenshannon", "mahalanobis",
                 "minkowski", "rogerstanimoto", "russellrao", "seuclidean", "sokalsneath",
                 "sqeuclidean", "yule")
SYMMETRY_RTOL = 1e-9


def integer(name: str, value: object, minimum: int | None = None) -> int:
    """``value`` as an ``int``; ValueError unless it is a (non-bool) integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {brief(value)} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def real(name: str, value: object, *, low: float | None = None, high: float | None = None,
         low_open: bool = False) -> float:
    """``value`` as a finite ``float`` in [low, high] (or (low, high] with ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {brief(value)} "
                         f"({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value <= low if low_open else value < low):
        bound = f"> {low}" if low_open else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return value


#: how ``snr`` may name "no noise" in params files and on the command line (``-S data.snr=inf``)
NO_NOISE = ("inf", "+inf", ".inf", "infinity")


def snr(name: str, value: object) -> float:
    """A signal-to-noise power ratio in (0, inf]: ``inf`` (or one of :data:`NO_NOISE`) means no
    noise. The one parser of an SNR (params.yaml, scale.yaml and the generators' argument)."""
    if isinstance(value, str) and value.strip().lower() in NO_NOISE:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a positive number or 'inf', got {brief(value)}")
    ratio = float(value)
    if math.isnan(ratio) or ratio <= 0:
        raise ValueError(f"{name} must be > 0 (inf means no noise), got {ratio}")
    return ratio


def flag(name: str, value: object) -> bool:
    """``value`` if it is a ``bool`` (numpy bools included); anything else is an error."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {brief(value)}")
    return bool(value)


def one_of(name: str, value: object, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, "
                         f"got {brief(value)}")
    return value


def close_match(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or '' when none is close."""
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def known_keys(where: str, given: Mapping[str, Any], known: Iterable[str]) -> None:
    """ValueError naming every key of ``given`` outside ``known`` as ``where.key``, each with
    its closest known name."""
    known = sorted(map(str, known))
    unknown = [key for key in given if key not in known]
    if unknown:
        names = ", ".join(f"{where + '.' if where else ''}{key}{close_match(key, known)}"
                          for key in unknown)
        raise ValueError(f"unknown key{'s' if len(unknown) > 1 else ''} {names}; known"
                         f"{' in ' + where if where else ''}: {', '.join(known) or 'none'}")


def check_metric(metric: str) -> str:
    """A scipy ``pdist`` metric name or ``'precomputed'``."""
    if metric != "precomputed" and metric not in PDIST_METRICS:
        raise ValueError("metric must be 'precomputed' or a scipy pdist metric name, "
                         f"got {metric!r}{close_match(metric, PDIST_METRICS)}")
    return metric


def check_points(name: str, values, *, n: int | None = None,
                 columns: int | None = None) -> np.ndarray:
    """A finite 2-D float64 array of at least MIN_POINTS rows (and n rows, ``columns`` columns).
    Complex values are refused: casting would silently drop the imaginary part."""
    if np.iscomplexobj(values):
        raise ValueError(f"{name} must hold real numbers, got complex values")
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (points x features), "
                         f"got shape {array.shape}")
    if array.shape[0] < MIN_POINTS:
        raise ValueError(f"{name} needs at least {MIN_POINTS} points, got {array.shape[0]}")
    if n is not None and array.shape[0] != n:
        raise ValueError(f"{name} has {array.shape[0]} rows but X has {n} points")
    if columns is not None and array.shape[1] != columns:
        raise ValueError(f"{name} must have {columns} columns, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def check_input_space(name: str, X, metric: str, n: int | None = None) -> np.ndarray:
    """Features, or with ``metric='precomputed'`` a square non-negative distance matrix that is
    symmetric with a zero diagonal up to rounding (relative :data:`SYMMETRY_RTOL` of its largest
    entry, as ``sklearn.metrics.pairwise_distances`` returns); that matrix comes back exactly
    symmetric ((A + A^T) / 2, which leaves an exactly symmetric matrix unchanged) with 0 on the
    diagonal."""
    check_metric(metric)
    array = check_points(name, X, n=n)
    if metric == "precomputed":
        if array.shape[0] != array.shape[1]:
            raise ValueError(f"{name} must be a square distance matrix with metric='precomputed', "
                             f"got shape {array.shape}")
        tolerance = SYMMETRY_RTOL * float(np.abs(array).max())
        asymmetry = float(np.abs(array - array.T).max())
        if (array < 0).any() or np.abs(np.diag(array)).max() > tolerance or asymmetry > tolerance:
            raise ValueError(
                f"{name} must be symmetric, non-negative and zero on the diagonal with "
                f"metric='precomputed' (up to {SYMMETRY_RTOL:g} of its largest entry); largest "
                f"asymmetry {asymmetry:.3g}, largest diagonal entry "
                f"{np.abs(np.diag(array)).max():.3g}")
        if asymmetry > 0 or np.any(np.diag(array) != 0):
            array = (array + array.T) / 2
            np.fill_diagonal(array, 0.0)
    return array


def available_memory() -> int | None:
    """Bytes the kernel reports as available for new allocations (``MemAvailable``), or None
    where /proc/meminfo does not exist."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(n: int, bytes_per_pair: float, what: str) -> None:
    """Refuse, before allocating, work on N(N-1)/2 pairs that would not fit in memory.

    Raises MemoryError with N, the estimate and the memory available.
    """
    needed = bytes_per_pair * n * (n - 1) / 2
    available = available_memory()
    if available is not None and needed > available:
        raise MemoryError(f"{what} for N = {n:,} points needs about {needed / 2**30:.1f} GiB "
                          f"({bytes_per_pair:g} bytes per pair of points), but only "
                          f"{available / 2**30:.1f} GiB of memory is available")


def check_matrix(name: str, X, *, min_rows: int = 1) -> np.ndarray:
    """A 2-D array of finite real numbers with at least ``min_rows`` rows (dtype kept)."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] < min_rows:
        raise ValueError(f"{name} must be an (N, D) matrix with N >= {min_rows}, "
                         f"got shape {X.shape}")
    if X.dtype.kind not in "iuf" or not np.all(np.isfinite(X)):
        raise ValueError(f"{name} must hold finite numbers")
    return X


def check_map(name: str, Y, n: int) -> np.ndarray:
    """A finite real (n, 2) array of 2-D coordinates, as C-contiguous float64."""
    Y = np.asarray(Y)
    if Y.shape != (n, 2):
        raise ValueError(f"{name} has shape {Y.shape}, expected ({n}, 2)")
    if Y.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {Y.dtype}")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{name} contains non-finite coordinates")
    return np.ascontiguousarray(Y, dtype=np.float64)


def check_labels(name: str, values, n: int) -> np.ndarray:
    """An integer vector of length n."""
    array = np.asarray(values)
    if array.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {array.shape}")
    if array.dtype.kind not in "iub":
        whole = array.dtype.kind == "f" and np.all(np.isfinite(array))
        if not whole or np.any(array != np.round(array)):
            raise ValueError(f"{name} must hold integers")
    return array.astype(np.int64)


def check_indices(name: str, values, n: int) -> np.ndarray:
    """Distinct integer indices in [0, n), returned ascending."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.size and (array.dtype.kind not in "iu"):
        raise ValueError(f"{name} must hold integer indices, got dtype {array.dtype}")
    array = array.astype(np.int64)
    if array.size and (array.min() < 0 or array.max() >= n):
        raise ValueError(f"{name} must index points 0..{n - 1}")
    if np.unique(array).shape[0] != array.shape[0]:
        raise ValueError(f"{name} must not repeat an index")
    return array
