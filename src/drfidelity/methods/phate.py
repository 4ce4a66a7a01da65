"""PHATE (the ``phate`` package, with graphtools and tasklogger), seeded and on one thread.

``import phate`` below is absolute, so it loads the library, not this module of the same name
(as ``methods/umap.py`` loads umap-learn).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

import numpy as np

from drfidelity.method_specs.phate import clamp_knn

from ._threads import one_thread

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh)
PRELOAD = ("phate",)


def _not_the_mds_notice(record: logging.LogRecord) -> bool:
    return not record.getMessage().lstrip().startswith("SGD-MDS may not have converged")


@contextmanager
def _expected_warnings():
    """Drop the one warning PHATE's default solver logs on most inputs (indented, through
    tasklogger's ``graphtools`` logger, even when quiet: SGD-MDS "may not have converged",
    since it runs its fixed number of iterations, as documented), and nothing else."""
    logger = logging.getLogger("graphtools")
    logger.addFilter(_not_the_mds_notice)
    try:
        yield
    finally:
        logger.removeFilter(_not_the_mds_notice)


def fit_phate(X: np.ndarray, seed: int, context=None, *, knn: int, decay: float, t,
              gamma: float) -> np.ndarray:
    """``phate.PHATE(...).fit_transform(X)`` with PHATE's defaults otherwise (PCA to 100
    components, landmarks above 2000 points, metric MDS by SGD), seeded with ``seed``
    (graph, landmarks and MDS), ``n_jobs=1`` and quiet. OpenBLAS splits its products by
    thread count, so the call is held to one thread (:mod:`drfidelity.methods._threads`)."""
    import phate

    model = phate.PHATE(n_components=2, knn=clamp_knn(knn, X.shape[0]), decay=decay, t=t,
                        gamma=gamma, n_jobs=1, random_state=seed, verbose=0)
    with _expected_warnings(), one_thread():
        return np.asarray(model.fit_transform(X), dtype=np.float64)
