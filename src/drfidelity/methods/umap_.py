"""UMAP (umap-learn); single-threaded because a ``random_state`` is given."""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np

from drfidelity.core.validation import real

from drfidelity.core.registry import clamp_neighbours


@contextmanager
def _expected_warnings():
    """Silence the one warning every seeded run gives ("n_jobs value 1 overridden to 1 by
    setting random_state": single-threaded is what the benchmark wants), and nothing else."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="n_jobs value .* overridden",
                                category=UserWarning)
        yield


def _umap(n: int, seed: int, n_neighbors: int, min_dist: float):
    real("min_dist", min_dist, low=0.0)
    import umap

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
