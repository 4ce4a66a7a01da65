"""Neighbour-preservation metrics: recall@k, trustworthiness and continuity (Venna & Kaski 2001).

Ranks follow quality.md: rho_ij = 1 + |{k != i : d_ik < d_ij or (d_ik = d_ij and k < j)}|.
Only the K nearest neighbours of every point are selected (one compiled pass per row); the
exact rank of a point outside a neighbour list is needed only for intruders (trustworthiness)
and lost neighbours (continuity), and it is counted directly on that one distance row by a
compiled one-pass kernel (:mod:`.rank_kernels`).

With U_i^k the map's k nearest that are not among the data's k nearest (intruders) and V_i^k
the reverse (lost neighbours):
  T(k) = 1 - 2/(N k (2N - 3k - 1)) sum_i sum_{j in U_i^k} (rho_ij - k)     (ranks in the data)
  C(k) = 1 - 2/(N k (2N - 3k - 1)) sum_i sum_{j in V_i^k} (r_ij - k)       (ranks in the map)
  recall@k = mean_i |kNN_X(i) & kNN_Y(i)| / k.
T equals ``sklearn.manifold.trustworthiness(X, Y, n_neighbors=k)`` on tie-free data and
C(X, Y) = T(Y, X). Both are only meaningful for k < N/2 (Venna & Kaski 2001).
"""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np
from scipy.spatial.distance import cdist

from drfidelity.core.validation import check_embedding, check_input_space

from .distances import row_blocks
from .rank_kernels import count_ranks, nearest

K_VALUES = (5, 15, 30)

RowFunction = Callable[[np.ndarray], np.ndarray]


def _keyed(dist: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The (fresh) distance rows with the point itself set to -inf, so it always sorts first."""
    dist[np.arange(rows.shape[0]), rows] = -np.inf
    return dist


def _list_positions(knn: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """1-based position of each target in its row's kNN list, 0 where it is not in the list."""
    match = knn[:, None, :] == targets[:, :, None]
    return np.where(match.any(axis=2), match.argmax(axis=2) + 1, 0)


class Neighbourhoods:
    """The K nearest neighbours of every point in one space, plus exact ranks on demand.

    ``rows(idx)`` returns fresh distance rows of points ``idx`` (shape (len(idx), N), diagonal
    0); it is called block by block, so nothing of size N x N is kept. The kNN lists are
    selected on first use, in the same pass over the rows as a first :meth:`ranks_of`.
    """

    def __init__(self, rows: RowFunction, n: int, k: int, *, constant: bool | None = None):
        self.rows, self.n, self.k = rows, n, k
        self._knn = None
        self._constant = constant

    @property
    def constant(self) -> bool:
        """True when every distance is 0 (all points at one place): neighbour ranks are then
        only the index order. Read from the first row unless given (for a metric, d_0j = 0 for
        all j makes every distance 0)."""
        if self._constant is None:
            self._constant = not np.any(self.rows(np.array([0])) > 0)
        return self._constant

    @property
    def knn(self) -> np.ndarray:
        """(N, k) int64: every point's k nearest others, nearest first, ties by index."""
        if self._knn is None:
            self._knn = np.concatenate([nearest(_keyed(self.rows(block), block), self.k)
                                        for block in row_blocks(self.n, self.n)])
        return self._knn

    def ranks_of(self, targets: np.ndarray) -> np.ndarray:
        """rho_ij for j = targets[i, :] (shape (N, t)).

        Targets inside the kNN list get their rank from its position; the others are counted
        on their distance row, one compiled pass per row for all its queries
        (:func:`~drfidelity.metrics.rank_kernels.count_ranks`). Rows whose targets are all
        listed are not visited, unless the kNN lists are still to be selected.
        """
        knn = self._knn
        if knn is None:
            knn = np.empty((self.n, self.k), dtype=np.int64)
            rows = np.arange(self.n)
        else:
            rows = np.flatnonzero((_list_positions(knn, targets) == 0).any(axis=1))
        counted = np.zeros(targets.shape, dtype=np.int64)
        for block in row_blocks(rows.shape[0], self.n):
            sub = rows[block]
            keyed = _keyed(self.rows(sub), sub)
            if self._knn is None:
                knn[sub] = nearest(keyed, self.k)
            lost = _list_positions(knn[sub], targets[sub]) == 0
            counted[sub] = count_ranks(keyed, np.where(lost, targets[sub], -1))
        self._knn = knn
        listed = _list_positions(knn, targets)
        return np.where(listed > 0, listed, counted)


def _penalty_score(ranks: np.ndarray, n: int, k: int) -> float:
    """1 - 2/(N k (2N - 3k - 1)) * sum over the first k columns of max(rank - k, 0)."""
    excess = ranks[:, :k] - k
    total = excess[excess > 0].sum()
    return float(1.0 - total * (2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))))


def _recall(low_rank_of_high: np.ndarray, k: int) -> float:
    counts = (low_rank_of_high[:, :k] <= k).sum(axis=1)
    return float(np.mean(counts) / k)


NAN = float("nan")


def neighbour_arrays(high: Neighbourhoods, low: Neighbourhoods, ks,
                     families=("recall", "trust", "cont"), *,
                     tc_below: float | None = None) -> dict[str, np.ndarray]:
    """Per family, float64 values at every k in ``ks``; each space's rows are read at most twice.

    NaN where k exceeds the lists (k > min(high.k, low.k)), where k >= N (recall) or
    k >= ``tc_below`` (T, C; default N // 2, the rule of the score columns), and everywhere
    when one space is constant (:attr:`Neighbourhoods.constant`).
    """
    n = high.n
    kmax = min(high.k, low.k)
    tc_below = n // 2 if tc_below is None else tc_below
    undefined = high.constant or low.constant
    ranks = {}
    if not undefined:
        if "trust" in families:
            ranks["trust"] = high.ranks_of(low.knn[:, :kmax])
        if "recall" in families or "cont" in families:
            ranks["cont"] = ranks["recall"] = low.ranks_of(high.knn[:, :kmax])
    out = {}
    for family in families:
        values = []
        for k in ks:
            valid = k <= kmax and (k < n if family == "recall" else k < tc_below)
            if undefined or not valid:
                values.append(NAN)
            elif family == "recall":
                values.append(_recall(ranks[family], k))
            else:
                values.append(_penalty_score(ranks[family], n, k))
        out[family] = np.array(values, dtype=np.float64)
    return out


def neighbour_scores(high: Neighbourhoods, low: Neighbourhoods, ks=K_VALUES) -> dict[str, float]:
    """recall_k*, trust_k*, cont_k* for every k (NaN where k >= N, resp. k >= N // 2)."""
    arrays = neighbour_arrays(high, low, ks)
    return {f"{family}_k{k}": float(arrays[family][q])
            for family in ("recall", "trust", "cont") for q, k in enumerate(ks)}


def _feature_rows(X: np.ndarray, metric: str) -> RowFunction:
    if metric == "precomputed":
        return lambda rows: X[rows]
    return lambda rows: cdist(X[rows], X, metric=metric)


def _ks(k, n: int, limit: str) -> tuple[tuple[int, ...], bool]:
    """(the k values as ints, whether one int was given); ValueError for a k out of range."""
    scalar = np.ndim(k) == 0
    values = [k] if scalar else list(np.asarray(k, dtype=object).ravel())
    if not values:
        raise ValueError("k must be a positive integer or a non-empty sequence of them")
    bound = n / 2 if limit == "half" else n
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"k must be a positive integer (or a sequence of them), got {value!r}")
        if value >= bound:
            what = "< N/2" if limit == "half" else "< N"
            raise ValueError(f"k must be {what} = {bound:g} for "
                             f"{'trustworthiness/continuity' if limit == 'half' else 'recall'}, "
                             f"got {value}")
    return tuple(int(v) for v in values), scalar


def _compute(X, Y, k, metric: str, families: tuple[str, ...]):
    """The families' values at every k on validated spaces (NaN, with a warning, for a
    constant space)."""
    X = check_input_space("X", X, metric)
    n = X.shape[0]
    Y = check_embedding(Y, n)
    limit = "full" if families == ("recall",) else "half"
    ks, scalar = _ks(k, n, limit)
    kmax = max(ks)
    high = Neighbourhoods(_feature_rows(X, metric), n, kmax,
                          constant=not np.any(X > 0) if metric == "precomputed" else None)
    low = Neighbourhoods(_feature_rows(Y, "euclidean"), n, kmax)
    for name, space in (("X", high), ("Y", low)):
        if space.constant:
            warnings.warn(f"every point of {name} is at the same place (all distances 0): "
                          "neighbour ranks are arbitrary, so trustworthiness, continuity and "
                          "recall are undefined (NaN)", RuntimeWarning, stacklevel=3)
    arrays = neighbour_arrays(high, low, ks, families, tc_below=n / 2)
    if scalar:
        return {family: float(values[0]) for family, values in arrays.items()}
    return arrays


def neighbourhood_scores(X, Y, k=K_VALUES, *, metric: str = "euclidean") -> dict:
    """Trustworthiness, continuity and recall at several k from one pass over the distances.

    Parameters
    ----------
    X : array_like, shape (N, D) or (N, N)
        The data; with ``metric="precomputed"`` a square distance matrix (symmetric up to
        rounding, zero diagonal).
    Y : array_like, shape (N, 2)
        The map (Euclidean).
    k : int or sequence of int, default (5, 15, 30)
        Neighbourhood sizes, each 1 <= k < N/2.
    metric : str, default "euclidean"
        Any ``scipy.spatial.distance.cdist`` metric for X, or ``"precomputed"``.

    Returns
    -------
    dict
        ``{"trustworthiness": T, "continuity": C, "recall": R}``: float64 arrays aligned with
        ``k`` (floats when ``k`` is one int). NaN, with a RuntimeWarning, when every point of X
        or of Y is at the same place.

    Notes
    -----
    With ranks rho_ij in the data and r_ij in the map (nearest = 1, ties broken by index),
    U_i^k the map's k nearest that are not among the data's (intruders) and V_i^k the reverse,
    ``T(k) = 1 - 2/(N k (2N - 3k - 1)) sum_i sum_{j in U_i^k} (rho_ij - k)``, C(k) the same
    with V and r, and ``recall(k) = mean_i |kNN_X(i) & kNN_Y(i)| / k``. Each space's distance
    rows are computed block by block (nothing N x N is held) and visited at most twice for all
    k together. T equals ``sklearn.manifold.trustworthiness(X, Y, n_neighbors=k)`` on tie-free
    data and C(X, Y) = T(Y, X).

    References
    ----------
    Venna, J. and Kaski, S. (2001). Neighborhood preservation in nonlinear projection methods:
    an experimental study. ICANN 2001, LNCS 2130, 485-491.
    """
    values = _compute(X, Y, k, metric, ("trust", "cont", "recall"))
    return {"trustworthiness": values["trust"], "continuity": values["cont"],
            "recall": values["recall"]}


def trustworthiness(X, Y, k, *, metric: str = "euclidean"):
    """T(k): penalises points that are near in the map Y but far in the data X (intruders).

    Parameters
    ----------
    X, Y, metric
        As in :func:`neighbourhood_scores`.
    k : int or sequence of int
        Neighbourhood size(s), each 1 <= k < N/2.

    Returns
    -------
    float or numpy.ndarray
        T(k) in [0, 1] (1 = no intruders); an array aligned with ``k`` for a sequence; NaN
        with a RuntimeWarning when X or Y is constant. Formula and reference: see
        :func:`neighbourhood_scores`.
    """
    return _compute(X, Y, k, metric, ("trust",))["trust"]


def continuity(X, Y, k, *, metric: str = "euclidean"):
    """C(k): penalises points that are near in the data X but far in the map Y (lost neighbours).

    Parameters
    ----------
    X, Y, metric
        As in :func:`neighbourhood_scores`.
    k : int or sequence of int
        Neighbourhood size(s), each 1 <= k < N/2.

    Returns
    -------
    float or numpy.ndarray
        C(k) in [0, 1] (1 = no neighbour lost); an array aligned with ``k`` for a sequence;
        NaN with a RuntimeWarning when X or Y is constant. See :func:`neighbourhood_scores`.
    """
    return _compute(X, Y, k, metric, ("cont",))["cont"]


def recall_at_k(X, Y, k, *, metric: str = "euclidean"):
    """Share of every point's k nearest data neighbours that are also its k nearest in the map.

    Parameters
    ----------
    X, Y, metric
        As in :func:`neighbourhood_scores`.
    k : int or sequence of int
        Neighbourhood size(s), each 1 <= k < N.

    Returns
    -------
    float or numpy.ndarray
        mean_i |kNN_X(i) & kNN_Y(i)| / k (ties by index); an array aligned with ``k`` for a
        sequence; NaN with a RuntimeWarning when X or Y is constant.
    """
    return _compute(X, Y, k, metric, ("recall",))["recall"]
