"""PCC (pccdr): 2-D coordinates whose distances to reference points correlate with high-D ones.

``import pcc`` below is absolute, so it loads the ``pcc`` package this module wraps, not this
module of the same name.
"""

from __future__ import annotations

import numpy as np

from drfidelity.core.validation import integer

from .torch_setup import seeded_torch

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh)
PRELOAD = ("torch", "pcc")


def fit_pcc(X: np.ndarray, seed: int, context=None, *, num_epochs: int) -> np.ndarray:
    """``pcc.PCC`` with the row-wise Pearson loss only, N reference points, Adam (lr 1).

    Both RNGs matter: the reference points are drawn with replacement from numpy's global
    RNG and the initial layout 10·randn from torch, so both are seeded here. ``y`` is unused
    without the cluster term; zeros are passed because the signature requires it.
    """
    integer("num_epochs", num_epochs, 1)
    seeded_torch(seed)
    np.random.seed(seed)
    import pcc

    n = X.shape[0]
    model = pcc.PCC(cluster=False, pearson=True, spearman=False, n_components=2,
                    num_points=n, num_epochs=num_epochs)
    # The result is a view of the model's parameter: copy it out.
    return np.array(model.fit_transform(X, np.zeros(n)))
