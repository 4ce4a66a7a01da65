"""Rank-based quality: the co-ranking matrix and everything read from it.

With data ranks rho_ij and map ranks r_ij (nearest = 1, self excluded, ties by index; see
:mod:`drfidelity.metrics.ranks`), the co-ranking matrix is

    Q_kl = |{(i, j) : rho_ij = k and r_ij = l}|,   k, l = 1 .. N-1        (Lee & Verleysen 2009)

Rows are data ranks, columns map ranks. Every ordered pair (i, j), i != j, lands in exactly one
cell, so Q sums to N(N-1). The K-neighbourhood measures read the upper-left K x K block:

    Q_NX(K) = (1/(K N)) sum_{k<=K, l<=K} Q_kl             share of K-neighbourhoods kept
    B_NX(K) = (1/(K N)) (sum_{k<=K, l<k} - sum_{k<=K, k<l<=K}) Q_kl
    R_NX(K) = ((N-1) Q_NX(K) - K) / (N-1-K),  K = 1 .. N-2    (0 = random map, 1 = perfect)
    LCMC(K) = Q_NX(K) - K/(N-1)                                 (Chen & Buja 2009)

and the two-parameter rank-error quality of Lueks, Mokbel, Biehl & Hammer (2011) separates the
region of interest (kappa_s) from the tolerated rank error (kappa_t).

Ranks are computed once per call, in row blocks, so memory stays O(block * N) besides Q itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from drfidelity.core.validation import check_memory
from drfidelity.metrics.distances import FeatureRows
from drfidelity.metrics.inputs import check_map_points, check_space
from drfidelity.metrics.ranks import row_ranks

_BLOCK_ELEMENTS = 2_000_000  # rows per block = this // N: about 16 MB of distances per space


class LocalGlobalQuality(NamedTuple):
    """Lee & Verleysen's split of the Q_NX curve at the LCMC maximum."""

    k_max: int
    q_local: float
    q_global: float


def _validate_pair(X, Y, metric: str) -> tuple[np.ndarray, np.ndarray]:
    X = check_space("X", X, metric)
    return X, check_map_points(Y, X.shape[0])


def _rank_blocks(X: np.ndarray, Y: np.ndarray, metric: str
                 ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield (rows, rho, r): data and map ranks for consecutive row blocks."""
    n = Y.shape[0]
    step = max(1, _BLOCK_ELEMENTS // n)
    data_rows, map_rows = FeatureRows(X, metric, "X"), FeatureRows(Y, "euclidean", "Y")
    for start in range(0, n, step):
        rows = np.arange(start, min(start + step, n))
        yield rows, row_ranks(data_rows(rows), rows), row_ranks(map_rows(rows), rows)


def coranking_matrix(X: np.ndarray, Y: np.ndarray, *, metric: str = "euclidean") -> np.ndarray:
    """Co-ranking matrix of a map (Lee & Verleysen 2009).

    Parameters
    ----------
    X : array_like, shape (N, D) or (N, N)
        The data (distances by ``scipy.spatial.distance.cdist`` with ``metric``) or, with
        ``metric="precomputed"``, its distance matrix.
    Y : array_like, shape (N, d)
        The map (Euclidean).
    metric : str, default "euclidean"

    Returns
    -------
    numpy.ndarray of int64, shape (N-1, N-1)
        ``Q[k-1, l-1]`` = number of ordered pairs (i, j) with data rank k and map rank l.

    Raises
    ------
    MemoryError
        Before allocating, when Q would not fit in the memory available.

    Notes
    -----
    Each block's rank pairs are flattened to one cell index and counted with ``np.bincount``:
    O(N^2 log N) time, no Python loop over pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import coranking_matrix
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> Q = coranking_matrix(X, X[:, :2])
    >>> Q.shape, int(Q.sum())
    ((99, 99), 9900)
    """
    X, Y = _validate_pair(X, Y, metric)
    return _coranking(X, Y, metric)


def _coranking(X: np.ndarray, Y: np.ndarray, metric: str) -> np.ndarray:
    """:func:`coranking_matrix` of validated spaces."""
    m = Y.shape[0] - 1
    check_memory(m + 1, 16, "the co-ranking matrix")  # (N-1)^2 int64 cells ~ 2 per pair
    Q = np.zeros(m * m, dtype=np.int64)
    for rows, rho, r in _rank_blocks(X, Y, metric):
        off_diagonal = rho > 0  # self has rank 0 in both spaces
        cells = (rho[off_diagonal].astype(np.int64) - 1) * m + (r[off_diagonal] - 1)
        Q += np.bincount(cells, minlength=m * m)
    return Q.reshape(m, m)


def _validate_coranking(Q: np.ndarray) -> np.ndarray:
    Q = np.asarray(Q)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or Q.shape[0] < 2:
        raise ValueError(f"Q must be a square co-ranking matrix of a map with N >= 3 points, "
                         f"got shape {Q.shape}")
    if not np.issubdtype(Q.dtype, np.integer) or (Q < 0).any():
        raise ValueError("Q must hold non-negative integer pair counts (see coranking_matrix)")
    return Q.astype(np.int64, copy=False)


def _block_counts(Q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cumulative counts in the K x K block, K = 1..N-1: (intrusions, extrusions, on-diagonal).

    Growing the block from K-1 to K adds row K left of the diagonal (l < k: intrusions), column
    K above it (l > k: extrusions) and the diagonal cell, so three cumulative sums suffice.
    """
    intrusions = np.cumsum(np.tril(Q, -1).sum(axis=1))
    extrusions = np.cumsum(np.triu(Q, 1).sum(axis=0))
    return intrusions, extrusions, np.cumsum(np.diagonal(Q))


def q_nx(Q: np.ndarray) -> np.ndarray:
    """Q_NX(K): share of K-nearest-neighbour relations kept (Lee & Verleysen 2009).

    Parameters
    ----------
    Q : numpy.ndarray of int, shape (N-1, N-1)
        A co-ranking matrix (:func:`coranking_matrix`).

    Returns
    -------
    numpy.ndarray of float64, shape (N-1,)
        Q_NX(K) at index K-1, K = 1..N-1: (1/(K N)) times the sum of the K x K block. Equals the
        mean recall@K when distances have no ties; Q_NX(N-1) = 1.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import coranking_matrix, q_nx
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> q_nx(coranking_matrix(X, X[:, :2]))[:3].round(4).tolist()
    [0.06, 0.08, 0.1167]
    """
    Q = _validate_coranking(Q)
    n = Q.shape[0] + 1
    intrusions, extrusions, diagonal = _block_counts(Q)
    k = np.arange(1, n)
    return (intrusions + extrusions + diagonal) / (k * n)


def b_nx(Q: np.ndarray) -> np.ndarray:
    """B_NX(K) = (intrusions - extrusions) / (K N) inside the K x K block, K = 1..N-1.

    Parameters
    ----------
    Q : numpy.ndarray of int, shape (N-1, N-1)
        A co-ranking matrix (:func:`coranking_matrix`).

    Returns
    -------
    numpy.ndarray of float64, shape (N-1,)
        B_NX(K) at index K-1.

    Notes
    -----
    Sign convention (Lee & Verleysen 2009): rows are data ranks, so a cell below the diagonal
    (l < k) is an *intrusion* — j ranks nearer to i in the map than in the data — and a cell
    above it an *extrusion*. B_NX(K) > 0: inside the K-neighbourhoods the map errs on the
    intrusive side (pulls ranks in); B_NX(K) < 0: on the extrusive side (pushes ranks out).
    Swapping data and map transposes Q and flips the sign.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import coranking_matrix, b_nx
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> b_nx(coranking_matrix(X, X[:, :2]))[:3].round(4).tolist()
    [0.0, 0.01, -0.0033]
    """
    Q = _validate_coranking(Q)
    n = Q.shape[0] + 1
    intrusions, extrusions, _ = _block_counts(Q)
    return (intrusions - extrusions) / (np.arange(1, n) * n)


def r_nx(Q: np.ndarray) -> np.ndarray:
    """R_NX(K) = ((N-1) Q_NX(K) - K) / (N-1-K): Q_NX rescaled against chance.

    Parameters
    ----------
    Q : numpy.ndarray of int, shape (N-1, N-1)
        A co-ranking matrix (:func:`coranking_matrix`).

    Returns
    -------
    numpy.ndarray of float64, shape (N-2,)
        R_NX(K) at index K-1, K = 1..N-2 (K = N-1 is 0/0). A random map keeps K/(N-1) of each
        neighbourhood in expectation, so R_NX ~ 0 there and 1 for a perfect map
        (Lee, Peluffo-Ordonez & Verleysen 2015).

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import coranking_matrix, r_nx
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> r_nx(coranking_matrix(X, X[:, :2]))[:3].round(4).tolist()
    [0.0504, 0.061, 0.0891]
    """
    q = q_nx(Q)[:-1]
    n = q.shape[0] + 2
    k = np.arange(1, n - 1)
    return ((n - 1) * q - k) / (n - 1 - k)


def auc_log_rnx(Q: np.ndarray) -> float:
    """Area under R_NX(K) on a log-K axis (Lee, Peluffo-Ordonez & Verleysen 2015).

    Parameters
    ----------
    Q : numpy.ndarray of int, shape (N-1, N-1)
        A co-ranking matrix (:func:`coranking_matrix`).

    Returns
    -------
    float
        sum_K R_NX(K)/K / sum_K 1/K over K = 1..N-2: the 1/K weights make small neighbourhoods
        count most.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import coranking_matrix, auc_log_rnx
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> round(auc_log_rnx(coranking_matrix(X, X[:, :2])), 4)
    0.1493
    """
    r = r_nx(Q)
    weights = 1.0 / np.arange(1, r.shape[0] + 1)
    return float(np.sum(r * weights) / np.sum(weights))


def lcmc(Q: np.ndarray) -> np.ndarray:
    """Local continuity meta-criterion (Chen & Buja 2009).

    Parameters
    ----------
    Q : numpy.ndarray of int, shape (N-1, N-1)
        A co-ranking matrix (:func:`coranking_matrix`).

    Returns
    -------
    numpy.ndarray of float64, shape (N-1,)
        LCMC(K) = Q_NX(K) - K/(N-1) at index K-1, K = 1..N-1.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import coranking_matrix, lcmc
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> lcmc(coranking_matrix(X, X[:, :2]))[:3].round(4).tolist()
    [0.0499, 0.0598, 0.0864]
    """
    q = q_nx(Q)
    n = q.shape[0] + 1
    return q - np.arange(1, n) / (n - 1)


def local_global_quality(Q: np.ndarray) -> LocalGlobalQuality:
    """Local and global quality split at the LCMC maximum (Lee & Verleysen 2009).

    Parameters
    ----------
    Q : numpy.ndarray of int, shape (N-1, N-1)
        A co-ranking matrix (:func:`coranking_matrix`).

    Returns
    -------
    LocalGlobalQuality
        ``(k_max, q_local, q_global)``: K_max = argmax_K LCMC(K) over K = 1..N-2 (first if
        tied); Q_local = mean Q_NX(K) over K = 1..K_max and Q_global = mean over
        K = K_max..N-1 (K_max belongs to both, as in the paper).

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import coranking_matrix, local_global_quality
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> split = local_global_quality(coranking_matrix(X, X[:, :2]))
    >>> split.k_max, round(split.q_local, 4), round(split.q_global, 4)
    (20, 0.242, 0.7007)
    """
    q = q_nx(Q)
    k_max = int(np.argmax(lcmc(Q)[:-1])) + 1
    return LocalGlobalQuality(k_max, float(q[:k_max].mean()), float(q[k_max - 1:].mean()))


def _kappas(values, name: str, low: int, high: int) -> tuple[np.ndarray, bool]:
    arr = np.asarray(values)
    scalar = arr.ndim == 0
    arr = np.atleast_1d(arr)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be an integer or a non-empty 1-D array of integers")
    if arr.min() < low or arr.max() > high:
        raise ValueError(f"{name} must lie in [{low}, {high}] for this N, got "
                         f"[{arr.min()}, {arr.max()}]")
    return arr.astype(np.intp), scalar


def rank_error_quality_from_coranking(Q: np.ndarray, kappa_s, kappa_t):
    """Q'_NX(kappa_s, kappa_t): share of region-of-interest pairs whose rank error is tolerated
    (Lueks, Mokbel, Biehl & Hammer 2011, with the normalisation below).

    Parameters
    ----------
    Q : numpy.ndarray of int, shape (N-1, N-1)
        A co-ranking matrix (:func:`coranking_matrix`; compute it once per map).
    kappa_s : int or sequence of int
        Region of interest, 1 <= kappa_s <= N-1.
    kappa_t : int or sequence of int
        Tolerated rank error, 0 <= kappa_t <= N-2.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar kappas; otherwise shape (len(kappa_t), len(kappa_s)), one row per
        tolerance across kappa_s.

    Notes
    -----
    A pair is in the region when rho <= kappa_s or r <= kappa_s (w_s = 1) and tolerated when
    |rho - r| <= kappa_t (w_t = 1). Lueks et al. (2011) divide sum(w_s w_t) by kappa_s N, but
    the region holds kappa_s N pairs only when the map keeps every kappa_s-neighbourhood: each
    intruder adds a pair, so a good-but-imperfect map (intruders within tolerance) scores above
    1. We divide by the region's size, sum(w_s), instead. Q' is then a true share in [0, 1],
    equal to 1 exactly when every region pair is within tolerance (always for a map equal to
    the data), and equal to the paper's value whenever the map keeps all neighbourhoods.

    ``Q`` is the co-ranking matrix (compute it once per map). Both weights depend on a cell
    (k, l) only through a = min(k, l) (region: a <= kappa_s) and d = |k - l|, so Q is folded
    into an (a, d) table (one pass over the diagonals of Q) whose 2-D prefix sums answer every
    (kappa_s, kappa_t) in O(1), in exact integer arithmetic.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import coranking_matrix, rank_error_quality_from_coranking
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> Q = coranking_matrix(X, X[:, :2])
    >>> round(rank_error_quality_from_coranking(Q, 10, 5), 4)
    0.1498
    """
    Q = _validate_coranking(Q)
    m = Q.shape[0]
    ks, ks_scalar = _kappas(kappa_s, "kappa_s", 1, m)
    kt, kt_scalar = _kappas(kappa_t, "kappa_t", 0, m - 1)
    folded = np.zeros_like(Q)  # folded[a-1, d]: cells with min(k, l) = a and |k - l| = d
    folded[:, 0] = np.diagonal(Q)
    for d in range(1, m):  # cells (a, a+d) and (a+d, a): position a-1 on diagonals +d and -d
        folded[:m - d, d] = np.diagonal(Q, d) + np.diagonal(Q, -d)
    prefix = folded.cumsum(axis=0).cumsum(axis=1)
    tolerated = prefix[np.ix_(ks - 1, kt)].T
    region = prefix[ks - 1, m - 1]
    quality = tolerated / region[None, :]
    return float(quality[0, 0]) if ks_scalar and kt_scalar else quality


def rank_error_quality(X: np.ndarray, Y: np.ndarray, kappa_s, kappa_t, *,
                       metric: str = "euclidean"):
    """Q'_NX(kappa_s, kappa_t) of map ``Y`` of ``X`` (Lueks et al. 2011).

    Parameters
    ----------
    X, Y, metric
        As in :func:`coranking_matrix`.
    kappa_s, kappa_t
        As in :func:`rank_error_quality_from_coranking`, which takes a co-ranking matrix
        computed once when several maps or kappa grids are compared.

    Returns
    -------
    float or numpy.ndarray
        See :func:`rank_error_quality_from_coranking`.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import rank_error_quality
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> round(rank_error_quality(X, X[:, :2], kappa_s=10, kappa_t=5), 4)
    0.1498
    """
    X, Y = _validate_pair(X, Y, metric)
    m = X.shape[0] - 1  # the kappas are checked before the O(N^2 log N) co-ranking matrix
    _kappas(kappa_s, "kappa_s", 1, m)
    _kappas(kappa_t, "kappa_t", 0, m - 1)
    return rank_error_quality_from_coranking(_coranking(X, Y, metric), kappa_s, kappa_t)


def pointwise_quality(X: np.ndarray, Y: np.ndarray, kappa_s: int, kappa_t: int, *,
                      metric: str = "euclidean") -> np.ndarray:
    """Per-point Q'_i: share of point i's region pairs, in both directions, within tolerance.

    Parameters
    ----------
    X, Y, metric
        As in :func:`coranking_matrix`.
    kappa_s : int
        Region of interest, 1 <= kappa_s <= N-1.
    kappa_t : int
        Tolerated rank error, 0 <= kappa_t <= N-2.

    Returns
    -------
    numpy.ndarray of float64, shape (N,)
        Q'_i per point, in [0, 1].

    Notes
    -----
    Q'_i = sum_j [w_s w_t (rho_ij, r_ij) + w_s w_t (rho_ji, r_ji)]
           / sum_j [w_s (rho_ij, r_ij) + w_s (rho_ji, r_ji)],
    with w_s, w_t as in :func:`rank_error_quality_from_coranking` (same region-size normalisation, so a map
    equal to the data gives 1 everywhere). Counting the pair from both ends marks every point
    involved in a swap, not only the one whose neighbourhood changed — colour a map by it to see
    tears and folds. The denominator is >= 2 kappa_s (i's own kappa_s nearest), never 0.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import pointwise_quality
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> pointwise_quality(X, X[:, :2], kappa_s=10, kappa_t=5)[:3].round(4).tolist()
    [0.0909, 0.1429, 0.175]
    """
    X, Y = _validate_pair(X, Y, metric)
    n = Y.shape[0]
    if np.ndim(kappa_s) or np.ndim(kappa_t):
        raise ValueError("pointwise_quality takes one kappa_s and one kappa_t (integers)")
    (kappa_s,), _ = _kappas(kappa_s, "kappa_s", 1, n - 1)
    (kappa_t,), _ = _kappas(kappa_t, "kappa_t", 0, n - 2)
    kept = np.zeros(n, dtype=np.int64)
    region = np.zeros(n, dtype=np.int64)
    for rows, rho, r in _rank_blocks(X, Y, metric):
        in_region = ((rho <= kappa_s) | (r <= kappa_s)) & (rho > 0)
        ok = in_region & (np.abs(rho - r) <= kappa_t)
        kept[rows] += ok.sum(axis=1)
        kept += ok.sum(axis=0)
        region[rows] += in_region.sum(axis=1)
        region += in_region.sum(axis=0)
    return kept / region
