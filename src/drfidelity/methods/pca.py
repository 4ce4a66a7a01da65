"""PCA: the linear baseline (scikit-learn, ``auto`` solver as in the reference)."""

from __future__ import annotations

import numpy as np

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh)
PRELOAD = ("sklearn.decomposition",)


def fit_pca(X: np.ndarray, seed: int, context=None) -> np.ndarray:
    """Top-2 principal components. The ``auto`` solver picks randomized SVD for 1000x768,
    seeded by ``random_state``; the benchmark runs it once, with seed 0."""
    from sklearn.decomposition import PCA

    return PCA(n_components=2, random_state=seed).fit_transform(X)


def extend_pca(X_fit: np.ndarray, X_add: np.ndarray, seed: int,
               context=None) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-sample: ``PCA(n_components=2).fit(X_fit)``, then transform both sets.

    No ``random_state`` (as in the reference): the randomized solver, chosen for wide inputs,
    draws from numpy's global RNG, which the runner seeds.
    """
    from sklearn.decomposition import PCA

    model = PCA(n_components=2).fit(X_fit)
    return model.transform(X_fit), model.transform(X_add)
