"""``noise_dims``: three tight blobs buried under pure-noise columns.

The curse-of-dimensionality probe: ``n_principal`` signal columns hold sklearn ``make_blobs``
clusters at the unit vectors, the other d - n_principal columns are N(0, 1) noise from
SeedSequence([seed, d]), and every column is z-scored. The truth is the first ``n_principal``
standardised columns (deliberately not isometric to the data); they are the same for every d.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler

from drfidelity.core.validation import flag, integer, real

from . import _checks
from ._common import Dataset
from .spec import DatasetSpec


def make_noise_dims(n: int = 1000, d: int = 100, seed: int = 42, *, n_principal: int = 3,
                    cluster_std: float = 0.005, standardize: bool = True) -> Dataset:
    """[blobs | noise] with ``StandardScaler`` (population std) applied when ``standardize``."""
    params = dict(n=n, d=d, seed=seed, n_principal=n_principal, cluster_std=cluster_std,
                  standardize=standardize)
    n_principal = integer("n_principal", n_principal, 1)
    real("cluster_std", cluster_std, low=0.0)
    standardize = flag("standardize", standardize)
    n, d, seed = _checks.shape(n, d, seed, min_d=n_principal, latent="signal (n_principal)",
                               min_n=n_principal, why_n="one point per blob")

    signal, labels = make_blobs(n_samples=n, n_features=n_principal,
                                centers=np.eye(n_principal), cluster_std=cluster_std,
                                random_state=seed)
    noise = np.random.default_rng(np.random.SeedSequence([seed, d])).standard_normal(
        (n, d - n_principal))
    clean = np.hstack([signal, noise])
    if standardize:
        clean = StandardScaler().fit_transform(clean)
    clean = np.ascontiguousarray(clean)
    return Dataset("noise_dims", clean, clean[:, :n_principal], labels.astype(np.int64),
                   params=params)


SPEC = DatasetSpec(
    name="noise_dims", generator=make_noise_dims,
    title="Signal in a few dimensions among noise dimensions", noised=False, readouts="labels")
