"""``noise_dims``: three tight blobs buried under pure-noise columns.

The curse-of-dimensionality probe: ``n_principal`` signal columns hold sklearn ``make_blobs``
clusters at the unit vectors, the other d - n_principal columns are N(0, 1) noise from
SeedSequence([seed, d]), and every column is z-scored. The truth is the first ``n_principal``
standardised columns (deliberately not isometric to the data); they are the same for every d.

By default the signal is axis-aligned: it sits in the first columns, which favours a method
that selects or weights columns over one that sees only Euclidean distances (those are
rotation-invariant). ``rotation_seed`` turns the data by a Haar-random rotation of R^d after
the z-scoring: the same distances, the signal spread over every column.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler

from drfidelity.core.validation import flag, integer, real

from . import _checks
from ._common import Dataset, haar_orthogonal
from .spec import DatasetSpec

#: the last word of the rotation's SeedSequence, so that it never meets the noise's stream
ROTATION_STREAM = 1


def make_noise_dims(n: int = 1000, d: int = 100, seed: int = 42, *, n_principal: int = 3,
                    cluster_std: float = 0.005, standardize: bool = True,
                    rotation_seed: int | None = None) -> Dataset:
    """[blobs | noise] with ``StandardScaler`` (population std) applied when ``standardize``.

    With ``rotation_seed`` (None: off, the axis-aligned probe), the data are then multiplied
    by Q: ``X = clean @ Q`` with Q = :func:`~._common.haar_orthogonal` drawn from
    ``numpy.random.default_rng(SeedSequence([rotation_seed, d, ROTATION_STREAM]))``, a stream
    apart from the noise's. Truth and labels are those of the unrotated data.
    """
    params = dict(n=n, d=d, seed=seed, n_principal=n_principal, cluster_std=cluster_std,
                  standardize=standardize, rotation_seed=rotation_seed)
    n_principal = integer("n_principal", n_principal, 1)
    real("cluster_std", cluster_std, low=0.0)
    standardize = flag("standardize", standardize)
    if rotation_seed is not None:
        rotation_seed = integer("rotation_seed", rotation_seed, 0)
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
    truth = clean[:, :n_principal]
    if rotation_seed is not None:
        rng = np.random.default_rng(np.random.SeedSequence([rotation_seed, d, ROTATION_STREAM]))
        clean = np.ascontiguousarray(clean @ haar_orthogonal(rng, d))
    return Dataset("noise_dims", clean, truth, labels.astype(np.int64), params=params)


SPEC = DatasetSpec(
    name="noise_dims", generator=make_noise_dims,
    title="Signal in a few dimensions among noise dimensions", noised=False, readouts="labels")
