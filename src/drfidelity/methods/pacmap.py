"""PaCMAP (the ``pacmap`` package), seeded: its nearest neighbours come from faiss (HNSW).

``import pacmap`` below is absolute, so it loads the library, not this module of the same name
(as ``methods/umap.py`` loads umap-learn).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

import numpy as np

from drfidelity.core.method import clamp_neighbours

from ._threads import one_thread

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh); not ``pacmap``
#: itself: importing it loads its parallel numba kernels (compiled with signatures, eagerly),
#: which starts numba's OpenMP threads, and GNU OpenMP then stops the forkserver's next fork
#: ("fork() called from a process already using GNU OpenMP"); each job imports it instead
PRELOAD = ("faiss", "numba", "sklearn.decomposition")


@contextmanager
def _quiet():
    """PaCMAP logs a warning on every seeded construction ("random state is set to ...") and
    when it trims its pair counts on a small input; the log is no place for either (the
    trimmed neighbourhood is recorded as a clamp)."""
    logger = logging.getLogger("pacmap")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _pacmap(n: int, seed: int, n_neighbors: int, MN_ratio: float, FP_ratio: float):
    import pacmap

    with _quiet():
        return pacmap.PaCMAP(n_components=2, n_neighbors=clamp_neighbours(n_neighbors, n),
                             MN_ratio=MN_ratio, FP_ratio=FP_ratio, random_state=seed)


def fit_pacmap(X: np.ndarray, seed: int, context=None, *, n_neighbors: int, MN_ratio: float,
               FP_ratio: float) -> np.ndarray:
    """``pacmap.PaCMAP(...).fit_transform(X)`` with PaCMAP's defaults otherwise (euclidean,
    PCA to 100 dimensions above that, PCA initialisation, lr 1, (100, 100, 250) iterations,
    faiss's HNSW k-NN). A ``random_state`` makes PaCMAP sample its pairs from seeded streams
    and build its faiss index on one thread; the call runs on one thread throughout."""
    model = _pacmap(X.shape[0], seed, n_neighbors, MN_ratio, FP_ratio)
    with _quiet(), one_thread():
        return np.asarray(model.fit_transform(X), dtype=np.float64)


def extend_pacmap(X_fit: np.ndarray, X_add: np.ndarray, seed: int, context=None, *,
                  n_neighbors: int, MN_ratio: float,
                  FP_ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """Fit on ``X_fit``, then ``transform`` all added rows in one call, with ``X_fit`` as the
    basis their neighbours are found in (PaCMAP keeps the fitted map fixed)."""
    model = _pacmap(X_fit.shape[0], seed, n_neighbors, MN_ratio, FP_ratio)
    with _quiet(), one_thread():
        Y_fit = model.fit_transform(X_fit)
        Y_add = model.transform(X_add, basis=X_fit)
    return np.asarray(Y_fit, dtype=np.float64), np.asarray(Y_add, dtype=np.float64)
