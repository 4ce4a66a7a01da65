"""Isomap (scikit-learn) with the benchmark's neighbourhood size."""

from __future__ import annotations

import numpy as np


def fit_isomap(X: np.ndarray, seed: int, context=None, *, n_neighbors: int = 15) -> np.ndarray:
    """Isomap on a k-NN graph, k = min(n_neighbors, max(2, N-1)).

    All other settings are scikit-learn's defaults; the eigen-solver (ARPACK) draws its start
    vector from numpy's global RNG, which :func:`drfidelity.methods.base.embed` seeds.
    scikit-learn connects a disconnected k-NN graph itself (clusters has 7 components at k=15).
    """
    from sklearn.manifold import Isomap

    k = min(n_neighbors, max(2, X.shape[0] - 1))
    return Isomap(n_neighbors=k, n_components=2).fit_transform(X)
