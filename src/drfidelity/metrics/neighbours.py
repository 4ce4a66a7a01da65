"""Neighbour-preservation metrics: recall@k, trustworthiness and continuity (benchmark.md §3.7).

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

from typing import Callable

import numpy as np
from scipy.spatial.distance import cdist

from .distances import row_blocks
from .rank_kernels import count_ranks, nearest
from .validation import check_embedding, check_input_space

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

    def __init__(self, rows: RowFunction, n: int, k: int):
        self.rows, self.n, self.k = rows, n, k
        self._knn = None

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


def neighbour_scores(high: Neighbourhoods, low: Neighbourhoods, ks=K_VALUES) -> dict[str, float]:
    """recall_k*, trust_k*, cont_k* for every k (NaN where k >= N, resp. k >= N // 2)."""
    n = high.n
    kmax = min(high.k, low.k)
    high_rank_of_low = high.ranks_of(low.knn[:, :kmax])
    low_rank_of_high = low.ranks_of(high.knn[:, :kmax])
    recall, trust, cont = {}, {}, {}
    for k in ks:
        valid_recall = k < n and k <= kmax
        valid_tc = k < n // 2 and k <= kmax
        if valid_recall:
            counts = (low_rank_of_high[:, :k] <= k).sum(axis=1)
            recall[f"recall_k{k}"] = float(np.mean(counts) / k)
        else:
            recall[f"recall_k{k}"] = float("nan")
        trust[f"trust_k{k}"] = _penalty_score(high_rank_of_low, n, k) if valid_tc else float("nan")
        cont[f"cont_k{k}"] = _penalty_score(low_rank_of_high, n, k) if valid_tc else float("nan")
    return {**recall, **trust, **cont}


def _feature_rows(X: np.ndarray, metric: str) -> RowFunction:
    if metric == "precomputed":
        return lambda rows: X[rows]
    return lambda rows: cdist(X[rows], X, metric=metric)


def _spaces(X, Y, k, metric: str, limit: str) -> tuple[Neighbourhoods, Neighbourhoods]:
    """Validated neighbourhoods of X and Y for one k (``limit`` 'half': k < N/2, else k < N)."""
    X = check_input_space("X", X, metric)
    n = X.shape[0]
    Y = check_embedding(Y, n)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if limit == "half" and k >= n / 2:
        raise ValueError(f"k must be < N/2 = {n / 2} for trustworthiness/continuity, got {k}")
    if k >= n:
        raise ValueError(f"k must be < N = {n}, got {k}")
    k = int(k)
    return (Neighbourhoods(_feature_rows(X, metric), n, k),
            Neighbourhoods(_feature_rows(Y, "euclidean"), n, k))


def trustworthiness(X, Y, k: int, *, metric: str = "euclidean") -> float:
    """T(k): penalises points that are near in the map Y but far in the data X (intruders)."""
    high, low = _spaces(X, Y, k, metric, "half")
    return _penalty_score(high.ranks_of(low.knn), high.n, high.k)


def continuity(X, Y, k: int, *, metric: str = "euclidean") -> float:
    """C(k): penalises points near in the data X but far in the map Y (lost neighbours)."""
    high, low = _spaces(X, Y, k, metric, "half")
    return _penalty_score(low.ranks_of(high.knn), high.n, high.k)


def recall_at_k(X, Y, k: int, *, metric: str = "euclidean") -> float:
    """Share of every point's k nearest data neighbours that are also its k nearest in the map."""
    high, low = _spaces(X, Y, k, metric, "full")
    return float(np.mean((low.ranks_of(high.knn) <= high.k).sum(axis=1)) / high.k)
