"""t-SNE (scikit-learn, Barnes-Hut) with a perplexity that stays valid on small inputs."""

from __future__ import annotations

import numpy as np

from drfidelity.core.method import clamp_perplexity

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh)
PRELOAD = ("sklearn.manifold",)


def fit_tsne(X: np.ndarray, seed: int, context=None, *, perplexity: float) -> np.ndarray:
    """``sklearn.manifold.TSNE`` from a seeded random start, one thread.

    scikit-learn's defaults otherwise: early exaggeration 12, learning rate "auto",
    1000 iterations, angle 0.5.
    """
    from sklearn.manifold import TSNE

    p = clamp_perplexity(perplexity, X.shape[0])
    return TSNE(n_components=2, init="random", perplexity=p, random_state=seed, n_jobs=1,
                method="barnes_hut").fit_transform(X)
