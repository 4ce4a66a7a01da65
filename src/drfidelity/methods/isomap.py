"""Isomap (scikit-learn) with the benchmark's neighbourhood size."""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np

from drfidelity.core.method import clamp_neighbours

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh)
PRELOAD = ("sklearn.manifold",)


@contextmanager
def _expected_warnings():
    """Silence the two warnings every benchmark input triggers, and nothing else: scikit-learn
    saying it connects a disconnected k-NN graph (clusters has 7 components at k = 15; that is
    the documented behaviour) and scipy's SparseEfficiencyWarning from the edges it adds."""
    from scipy.sparse import SparseEfficiencyWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The number of connected components of the "
                                "neighbors graph", category=UserWarning)
        warnings.filterwarnings("ignore", category=SparseEfficiencyWarning)
        yield


def fit_isomap(X: np.ndarray, seed: int, context=None, *, n_neighbors: int) -> np.ndarray:
    """Isomap on a k-NN graph, k = min(n_neighbors, max(2, N-1)).

    All other settings are scikit-learn's defaults; the eigen-solver (ARPACK) draws its start
    vector from numpy's global RNG, which :func:`drfidelity.methods.base.embed` seeds.
    scikit-learn connects a disconnected k-NN graph itself (clusters has 7 components at k=15).
    """
    from sklearn.manifold import Isomap

    k = clamp_neighbours(n_neighbors, X.shape[0])
    with _expected_warnings():
        return Isomap(n_neighbors=k, n_components=2).fit_transform(X)


def extend_isomap(X_fit: np.ndarray, X_add: np.ndarray, seed: int, context=None, *,
                  n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-sample: Isomap fitted on ``X_fit`` (k clamped as for the fit); transform both.

    ``transform`` places new rows by geodesic distances through the fitted graph, so the
    fitted map does not move."""
    from sklearn.manifold import Isomap

    k = clamp_neighbours(n_neighbors, X_fit.shape[0])
    with _expected_warnings():
        model = Isomap(n_neighbors=k, n_components=2).fit(X_fit)
        return model.transform(X_fit), model.transform(X_add)
