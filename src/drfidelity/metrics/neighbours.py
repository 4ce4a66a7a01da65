"""Neighbour-preservation metrics: recall@k, trustworthiness and continuity (Venna & Kaski 2001).

Ties are broken by index, so every rank is defined:
rho_ij = 1 + |{k != i : d_ik < d_ij or (d_ik = d_ij and k < j)}|.
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

import functools
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from .distances import FeatureRows, row_blocks
from .inputs import check_map_points, check_space
from .pair_kernels import run_parallel, threads, usable_cores
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


def _nearest_block(rows: RowFunction, block: np.ndarray, k: int) -> np.ndarray:
    """The k nearest of the points ``block`` (see :attr:`Neighbourhoods.knn`)."""
    return nearest(_keyed(rows(block), block), k)


def _rank_block(rows: RowFunction, block: np.ndarray, targets: np.ndarray,
                knn: np.ndarray | None, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(kNN lists, counted ranks) of the points ``block``: the lists selected on the same rows
    when ``knn`` is None; ranks counted for the targets outside the lists, else 0."""
    keyed = _keyed(rows(block), block)
    if knn is None:
        knn = nearest(keyed, k)
    lost = _list_positions(knn, targets) == 0
    return knn, count_ranks(keyed, np.where(lost, targets, -1))


def serial_map(task: Callable, rows: RowFunction, *arguments) -> list:
    """``[task(rows, *a) for a in zip(*arguments)]``: one row block after the other."""
    return [task(rows, *args) for args in zip(*arguments)]


def threaded_map(task: Callable, rows: RowFunction, *arguments, workers: int | None = None
                 ) -> list:
    """:func:`serial_map` on ``workers`` threads (default :func:`~.pair_kernels.threads`; the
    kernels release the GIL); each block's result depends on its rows alone, so the bytes are
    the same."""
    return run_parallel([lambda args=args: task(rows, *args) for args in zip(*arguments)],
                        threads() if workers is None else workers)


class Neighbourhoods:
    """The K nearest neighbours of every point in one space, plus exact ranks on demand.

    ``rows(idx)`` returns fresh distance rows of points ``idx`` (shape (len(idx), N), diagonal
    0); it is called block by block, so nothing of size N x N is kept. The kNN lists are
    selected on first use, in the same pass over the rows as a first :meth:`ranks_of`. Every
    row block is computed on its own, by ``block_map(task, rows, *per_block_arguments)``
    (:func:`serial_map`, or a thread pool or a Dask cluster: see :func:`block_mapper`), so the
    result does not depend on where the blocks run.
    """

    def __init__(self, rows: RowFunction, n: int, k: int, *, constant: bool | None = None,
                 block_map: Callable = serial_map):
        self.rows, self.n, self.k = rows, n, k
        self._knn = None
        self._constant = constant
        self._map = block_map

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
            blocks = list(row_blocks(self.n, self.n))
            self._knn = np.concatenate(self._map(_nearest_block, self.rows, blocks,
                                                 [self.k] * len(blocks)))
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
            rows = np.arange(self.n)
        else:
            rows = np.flatnonzero((_list_positions(knn, targets) == 0).any(axis=1))
        subs = [rows[block] for block in row_blocks(rows.shape[0], self.n)]
        lists = [None if knn is None else knn[sub] for sub in subs]
        done = self._map(_rank_block, self.rows, subs, [targets[sub] for sub in subs], lists,
                         [self.k] * len(subs))
        if knn is None:
            knn = np.empty((self.n, self.k), dtype=np.int64)
        counted = np.zeros(targets.shape, dtype=np.int64)
        for sub, (knn_sub, counted_sub) in zip(subs, done):
            knn[sub] = knn_sub
            counted[sub] = counted_sub
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


def _workers(n_jobs) -> int:
    """scikit-learn's ``n_jobs``: None = 1, -1 = every core, -2 = all but one, ..."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    return int(n_jobs) if n_jobs > 0 else max(1, usable_cores() + 1 + int(n_jobs))


@contextmanager
def block_mapper(n_jobs=None, scheduler=None) -> Iterator[Callable]:
    """The ``block_map`` of :class:`Neighbourhoods`: row blocks one after the other
    (``n_jobs`` None or 1), on a pool of ``n_jobs`` threads (the kernels release the GIL), or
    on the Dask cluster ``scheduler`` (a ``distributed.Client`` or a scheduler address such as
    ``os.environ["DRFIDELITY_SCHEDULER"]``), where the row function is sent to every worker
    once per pass. Each block's result depends on its rows alone, so all three give the same
    bytes."""
    if scheduler is not None:
        from distributed import Client

        own = not isinstance(scheduler, Client)
        try:
            client = Client(scheduler, timeout=10, set_as_default=False) if own else scheduler
        except (OSError, TimeoutError) as error:
            raise OSError(f"no Dask scheduler answered at {scheduler}: {error}") from None

        def on_cluster(task, rows, *arguments):
            shared = client.scatter(rows, broadcast=True)
            futures = client.map(task, [shared] * len(arguments[0]), *arguments, pure=False)
            return client.gather(futures)

        try:
            yield on_cluster
        finally:
            if own:
                client.close()
        return
    workers = _workers(n_jobs)
    if workers == 1:
        yield serial_map
        return
    yield functools.partial(threaded_map, workers=workers)


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


def _k_or_n_neighbors(k, n_neighbors, default):
    """``k``, or scikit-learn's name for it, ``n_neighbors`` (not both); ``default`` when
    neither is given."""
    if k is not None and n_neighbors is not None:
        raise ValueError("give k or n_neighbors (the same argument), not both")
    chosen = n_neighbors if n_neighbors is not None else k
    return default if chosen is None else chosen


def _compute(X, Y, k, metric: str, families: tuple[str, ...], n_jobs=None, scheduler=None):
    """The families' values at every k on validated spaces (NaN, with a warning, for a
    constant space)."""
    X = check_space("X", X, metric)
    n = X.shape[0]
    Y = check_map_points(Y, n)
    limit = "full" if families == ("recall",) else "half"
    ks, scalar = _ks(k, n, limit)
    kmax = max(ks)
    with block_mapper(n_jobs, scheduler) as block_map:
        high = Neighbourhoods(FeatureRows(X, metric, "X"), n, kmax, block_map=block_map,
                              constant=not np.any(X > 0) if metric == "precomputed" else None)
        low = Neighbourhoods(FeatureRows(Y, "euclidean", "Y"), n, kmax, block_map=block_map)
        for name, space in (("X", high), ("Y", low)):
            if space.constant:
                warnings.warn(f"every point of {name} is at the same place (all distances 0): "
                              "neighbour ranks are arbitrary, so trustworthiness, continuity "
                              "and recall are undefined (NaN)", RuntimeWarning, stacklevel=3)
        arrays = neighbour_arrays(high, low, ks, families, tc_below=n / 2)
    if scalar:
        return {family: float(values[0]) for family, values in arrays.items()}
    return arrays


def neighbourhood_scores(X, Y, k=None, *, n_neighbors=None, metric: str = "euclidean",
                         n_jobs=None, scheduler=None) -> dict[str, float]:
    """Trustworthiness, continuity and recall at several k from one pass over the distances.

    Parameters
    ----------
    X : array_like, shape (N, D) or (N, N)
        The data; with ``metric="precomputed"`` a square distance matrix (symmetric up to
        rounding, zero diagonal).
    Y : array_like, shape (N, d)
        The map (Euclidean), any dimension d >= 1.
    k : int or sequence of int, default (5, 15, 30)
        Neighbourhood sizes, each 1 <= k < N/2.
    n_neighbors : int or sequence of int, optional
        scikit-learn's name for ``k`` (give one of them).
    metric : str, default "euclidean"
        Any ``scipy.spatial.distance.cdist`` metric for X, or ``"precomputed"``.
    n_jobs : int, optional
        Threads computing row blocks at the same time (scikit-learn's convention: None = 1,
        -1 = every core). The values do not depend on it.
    scheduler : str or distributed.Client, optional
        Compute the row blocks on this Dask cluster instead (an address such as
        ``os.environ["DRFIDELITY_SCHEDULER"]``, or a client); same values, to the bit.

    Returns
    -------
    dict of str to float
        ``recall_k{k}``, ``trust_k{k}``, ``cont_k{k}`` for every k: the names and order of the
        columns of :func:`~drfidelity.metrics.score`. NaN, with a RuntimeWarning, when every
        point of X or of Y is at the same place.

    Notes
    -----
    With ranks rho_ij in the data and r_ij in the map (nearest = 1, ties broken by index),
    U_i^k the map's k nearest that are not among the data's (intruders) and V_i^k the reverse,
    ``T(k) = 1 - 2/(N k (2N - 3k - 1)) sum_i sum_{j in U_i^k} (rho_ij - k)``, C(k) the same
    with V and r, and ``recall(k) = mean_i |kNN_X(i) & kNN_Y(i)| / k``. Each space's distance
    rows are computed block by block (nothing N x N is held) and visited at most twice for all
    k together. T equals ``sklearn.manifold.trustworthiness(X, Y, n_neighbors=k)`` on tie-free
    data and C(X, Y) = T(Y, X); on tied distances scikit-learn's unstable sort may rank tied
    points in another order (differences of order 1e-5 on scikit-learn's digits).

    References
    ----------
    Venna, J. and Kaski, S. (2001). Neighborhood preservation in nonlinear projection methods:
    an experimental study. ICANN 2001, LNCS 2130, 485-491.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import neighbourhood_scores
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> scores = neighbourhood_scores(X, X[:, :3], n_neighbors=(5, 10))
    >>> list(scores)
    ['recall_k5', 'recall_k10', 'trust_k5', 'trust_k10', 'cont_k5', 'cont_k10']
    >>> round(scores["trust_k5"], 4)
    0.7434
    """
    ks = _k_or_n_neighbors(k, n_neighbors, K_VALUES)
    ks = (ks,) if np.ndim(ks) == 0 else ks
    values = _compute(X, Y, ks, metric, ("recall", "trust", "cont"), n_jobs, scheduler)
    return {f"{family}_k{value}": float(values[family][q])
            for family in ("recall", "trust", "cont") for q, value in enumerate(np.ravel(ks))}


def trustworthiness(X, Y, k=None, *, n_neighbors=None, metric: str = "euclidean",
                    n_jobs=None, scheduler=None):
    """T(k): penalises points that are near in the map Y but far in the data X (intruders).

    Parameters
    ----------
    X, Y, metric, n_jobs, scheduler
        As in :func:`neighbourhood_scores`.
    k : int or sequence of int, default 5
        Neighbourhood size(s), each 1 <= k < N/2.
    n_neighbors : int or sequence of int, optional
        scikit-learn's name for ``k`` (give one of them).

    Returns
    -------
    float or numpy.ndarray
        T(k) in [0, 1] (1 = no intruders); an array aligned with ``k`` for a sequence; NaN
        with a RuntimeWarning when X or Y is constant. Formula and reference: see
        :func:`neighbourhood_scores`.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import trustworthiness
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> trustworthiness(X, X, n_neighbors=5)
    1.0
    >>> round(trustworthiness(X, X[:, :2], n_neighbors=5), 4)
    0.6702
    """
    k = _k_or_n_neighbors(k, n_neighbors, 5)
    return _compute(X, Y, k, metric, ("trust",), n_jobs, scheduler)["trust"]


def continuity(X, Y, k=None, *, n_neighbors=None, metric: str = "euclidean",
               n_jobs=None, scheduler=None):
    """C(k): penalises points that are near in the data X but far in the map Y (lost neighbours).

    Parameters
    ----------
    X, Y, metric, n_jobs, scheduler
        As in :func:`neighbourhood_scores`.
    k, n_neighbors : int or sequence of int, default 5
        Neighbourhood size(s), each 1 <= k < N/2 (one of the two names).

    Returns
    -------
    float or numpy.ndarray
        C(k) in [0, 1] (1 = no neighbour lost); an array aligned with ``k`` for a sequence;
        NaN with a RuntimeWarning when X or Y is constant. See :func:`neighbourhood_scores`.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import continuity
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> continuity(X, X[:, :2], k=[5, 10]).round(4).tolist()
    [0.7744, 0.767]
    """
    k = _k_or_n_neighbors(k, n_neighbors, 5)
    return _compute(X, Y, k, metric, ("cont",), n_jobs, scheduler)["cont"]


def recall_at_k(X, Y, k=None, *, n_neighbors=None, metric: str = "euclidean",
                n_jobs=None, scheduler=None):
    """Share of every point's k nearest data neighbours that are also its k nearest in the map.

    Parameters
    ----------
    X, Y, metric, n_jobs, scheduler
        As in :func:`neighbourhood_scores`.
    k, n_neighbors : int or sequence of int, default 5
        Neighbourhood size(s), each 1 <= k < N (one of the two names).

    Returns
    -------
    float or numpy.ndarray
        mean_i |kNN_X(i) & kNN_Y(i)| / k (ties by index); an array aligned with ``k`` for a
        sequence; NaN with a RuntimeWarning when X or Y is constant.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import recall_at_k
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> recall_at_k(X, X[:, :2], 5)
    0.176
    """
    k = _k_or_n_neighbors(k, n_neighbors, 5)
    return _compute(X, Y, k, metric, ("recall",), n_jobs, scheduler)["recall"]
