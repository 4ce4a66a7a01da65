"""TriMap (the ``trimap`` package), as its seeded PyTorch estimator ``trimap.TorchTRIMAP``.

``import trimap`` below is absolute, so it loads the library, not this module of the same name
(as ``methods/umap.py`` loads umap-learn).

trimap 1.2.0 ships two estimators. The legacy ``trimap.TRIMAP`` (NumPy/numba, module
``trimap.trimap_``) draws its random triplets with ``np.random`` inside numba's parallel loops,
whose generator no parameter of it seeds (numba seeds it from the OS per thread), and finds
neighbours with annoy, published as C++ source only. ``TorchTRIMAP`` (``trimap.torch_trimap``),
the package's reimplementation, takes a ``random_state``, and its own exact blocked k-NN needs
no index library, so annoy is left out of the lock (tools/lock.sh; docs/extending.md, "A
library without a wheel").

What differs from the legacy estimator's optimisation, as trimap 1.2.0's source shows: the
loss is the same (``_triplet_terms``: w * d_ij / (d_ij + d_ik)), but the legacy numba kernel
(``trimap_.trimap_grad``: ``w = weights[t] / (d_ij + d_ik) ** 2``) omits the derivative's
factor of two, which ``torch_trimap.trimap_explicit_grad`` includes (``scale = 2.0 *
current_weights / (d_ij + d_ik).square()``; the default ``gradient="explicit"``, which agrees
with autograd); ``TorchTRIMAP._optimize`` then multiplies ``lr`` by
``_LEGACY_LEARNING_RATE_SCALE = 0.5``, so every step (lr x gain x gradient under the default
delta-bar-delta) is the legacy one at the same ``lr``. Both factors are powers of two.

Why the triplet weights' tempered log is replaced during the fit: at TriMap's weight
temperature 0.5, ``torch_trimap.tempered_log`` takes ``x.pow(0.5)``, and torch's CPU ``pow``
computes that root in its own MKL kernel, whose bits differ between AMD and Intel CPUs (as
``torch.sqrt``'s do, see :mod:`.torch_setup`) and which the IEEE ``sqrt`` registered there does
not reach. ``x.sqrt()`` goes through that IEEE kernel; with it, TriMap draws the same map on
both vendors (docs/methods.md, "Across CPU vendors: TriMap").
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from drfidelity.method_specs.trimap import clamp_triplet_size

from ._threads import one_thread
from .torch_setup import seeded_torch

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh)
PRELOAD = ("trimap",)


def fit_trimap(X: np.ndarray, seed: int, context=None, *, n_inliers: int, n_outliers: int,
               n_random: int) -> np.ndarray:
    """``trimap.TorchTRIMAP(...).fit_transform(X)`` on the CPU, seeded with ``seed``.

    TriMap's defaults otherwise (euclidean, weight temperature 0.5, PCA to 100 dimensions above
    that, PCA initialisation, lr 0.1, 400 delta-bar-delta iterations, float32). The k-NN
    backend is pinned to TriMap's exact PyTorch search (``knn_backend="torch"``): its ``auto``
    would pick faiss whenever faiss is installed (PaCMAP brings it), so the map would depend on
    what else the environment holds. torch runs on one thread with IEEE square roots
    (:func:`~drfidelity.methods.torch_setup.seeded_torch`), the weights' included
    (:func:`ieee_tempered_log`).
    """
    torch = seeded_torch(seed)
    import trimap

    n = X.shape[0]
    model = trimap.TorchTRIMAP(n_dims=2, n_inliers=clamp_triplet_size(n_inliers, n),
                               n_outliers=clamp_triplet_size(n_outliers, n), n_random=n_random,
                               device="cpu", knn_backend="torch", random_state=seed,
                               verbose=False)
    with one_thread(), ieee_tempered_log(trimap.torch_trimap):
        Y = model.fit_transform(X)
    if isinstance(Y, torch.Tensor):
        Y = Y.detach().cpu().numpy()
    return np.asarray(Y, dtype=np.float64)


@contextmanager
def ieee_tempered_log(torch_trimap):
    """``torch_trimap.tempered_log`` at temperature 0.5 as ``(sqrt(x) - 1) / 0.5``, through the
    IEEE square root, for the ``with`` block; other temperatures and the library's function are
    left as they are, and it is restored after the block."""
    library_log = torch_trimap.tempered_log

    def tempered_log(x, temperature):
        if temperature == 0.5:
            return (x.sqrt() - 1.0) / 0.5
        return library_log(x, temperature)

    torch_trimap.tempered_log = tempered_log
    try:
        yield
    finally:
        torch_trimap.tempered_log = library_log
