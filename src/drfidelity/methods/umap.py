"""UMAP (umap-learn); single-threaded because a ``random_state`` is given.

``import umap`` below is absolute, so it loads umap-learn, not this module of the same name.
"""

from __future__ import annotations

import functools
import sys
import warnings
from contextlib import contextmanager

import numpy as np

from drfidelity.core.method import clamp_neighbours
from drfidelity.core.validation import real

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh)
PRELOAD = ("umap",)


@contextmanager
def _expected_warnings():
    """Silence the one warning every seeded run gives ("n_jobs value 1 overridden to 1 by
    setting random_state": single-threaded is what the benchmark wants), and nothing else."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="n_jobs value .* overridden",
                                category=UserWarning)
        yield


@functools.lru_cache(maxsize=1)
def _umap_module():
    """``umap``, with numba's on-disk cache turned on for every compiled function of umap-learn
    and pynndescent (they ship with it off for all but a few): every job runs in a fresh process,
    which would otherwise compile them again (measured at N = 1000: 22-27 s, against 2-5 s to
    load them). A loaded function is the machine code a compile on this machine gives (numba
    checks the source file's time stamp and size, its own version and the CPU), so the maps are
    the same bytes. Where no cache
    folder is writable, they are compiled in each process, as shipped."""
    import umap
    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher

    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in ("umap", "pynndescent"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, CPUDispatcher) and isinstance(value._cache, NullCache):
                try:
                    value.enable_caching()
                except RuntimeError:  # numba found no writable cache folder
                    return umap
    return umap


def _umap(n: int, seed: int, n_neighbors: int, min_dist: float):
    real("min_dist", min_dist, low=0.0)
    umap = _umap_module()

    return umap.UMAP(n_components=2, n_neighbors=clamp_neighbours(n_neighbors, n),
                     min_dist=min_dist, random_state=seed)


def fit_umap(X: np.ndarray, seed: int, context=None, *, n_neighbors: int,
             min_dist: float) -> np.ndarray:
    """``umap.UMAP(...).fit_transform`` with umap-learn's defaults otherwise (euclidean,
    spectral initialisation, exact k-NN below 4096 points)."""
    model = _umap(X.shape[0], seed, n_neighbors, min_dist)
    with _expected_warnings():
        return model.fit_transform(X)


def extend_umap(X_fit: np.ndarray, X_add: np.ndarray, seed: int, context=None, *,
                n_neighbors: int, min_dist: float) -> tuple[np.ndarray, np.ndarray]:
    """Fit on ``X_fit`` (``embedding_``), then ``transform`` all added rows in one call."""
    model = _umap(X_fit.shape[0], seed, n_neighbors, min_dist)
    with _expected_warnings():
        model.fit(X_fit)
        return model.embedding_, model.transform(X_add)
