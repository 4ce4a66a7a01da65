"""The method interface: a seeded function from an (N, D) matrix to an (N, 2) embedding.

Every method is registered as a :class:`~drfidelity.core.method.Method`. The runners :func:`embed` and
:func:`embed_extend` seed numpy's global RNG before the call (Isomap's ARPACK start vector and
PCC's reference sampling read it), check every hyper-parameter (:meth:`Method.settings`) and
check the result, so a wrapper only has to call its library with the benchmark's settings.
Wrappers built on torch seed torch themselves (:mod:`drfidelity.methods.torch_setup`).
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from drfidelity.core import runtime
from drfidelity.core.method import Method
from drfidelity.core.validation import check_map, check_matrix
from drfidelity.core.job import Job

from . import external
from .external import EmbedContext
from drfidelity.method_specs import spec


class SkipMethod(Exception):
    """The method cannot run here (e.g. toorPIA without cache and API key).

    Drivers report the reason and carry on with the other methods; it is not a failure.
    """


class NotOperable(SkipMethod):
    """The method has no out-of-sample operation; the message is the reason reported."""


def embed(method: Method, X: np.ndarray, seed: int, context: EmbedContext | None = None,
          **params: Any) -> np.ndarray:
    """Run ``method`` on ``X`` with ``seed`` and return a validated float64 (N, 2) array
    (injected coordinates instead, when ``context`` holds them: see :func:`run_method`)."""
    return run_method(method, X, seed, context, **params)[0]


def injection_key(method: Method, settings: Mapping[str, Any]) -> tuple[str, str]:
    """(method folder, mode) under which coordinates injected for ``method`` are looked up."""
    return method.name.lower(), settings.get("mode", "embedding")


def run_method(method: Method, X: np.ndarray, seed: int, context: EmbedContext | None = None,
               **params: Any) -> tuple[np.ndarray, Path | None]:
    """The method's map of ``X``, or the coordinates injected for it.

    Parameters
    ----------
    method : Method
        A registered method (:func:`drfidelity.method_specs.spec`).
    X : array_like, shape (N, D)
        Finite data, N >= 2.
    seed : int
        Seeds numpy's global RNG before the call (and the method's own ``random_state``).
    context : EmbedContext, optional
        Where injected coordinates may be found (root, dataset, tag).
    **params
        Hyper-parameters overriding ``method.defaults``; unknown names and bad values raise
        ValueError before anything runs.

    Returns
    -------
    (numpy.ndarray, pathlib.Path or None)
        The float64 (N, 2) map and the injected file it came from (None when computed).

    Notes
    -----
    Injected files live at ``external_embeddings/<dataset>/<method>/<mode>/<tag>/seed<s>.npy``
    (method name in lower case, mode ``embedding`` unless the method has a ``mode`` setting)
    and are validated like toorPIA's cache (:func:`drfidelity.methods.external.load_cached`:
    the recorded input fingerprint must be that of ``X``).
    """
    settings = method.settings(params)
    X = check_matrix("X", X, min_rows=2)
    if context is not None:
        directory, mode = injection_key(method, settings)
        Y = external.load_cached(context, directory, mode, seed, X)
        if Y is not None:
            return Y, external.cache_path(context, directory, mode, seed)
    np.random.seed(seed)
    return _check_embedding(method, method.fit(X, seed, context, **settings), len(X), seed), None


def embed_extend(method: Method, X_fit: np.ndarray, X_add: np.ndarray, seed: int,
                 context: EmbedContext | None = None,
                 **params: Any) -> tuple[np.ndarray, np.ndarray]:
    """Fit ``method`` on ``X_fit``, place the rows of ``X_add`` on that map: ``(Y_fit, Y_add)``.

    Raises :class:`NotOperable` (a :class:`SkipMethod`) with the method's reason when it has
    no out-of-sample operation.
    """
    if method.extend is None:
        raise NotOperable(method.not_operable)
    settings = method.settings(params)
    X_fit = check_matrix("X_fit", X_fit, min_rows=2)
    X_add = check_matrix("X_add", X_add)
    if X_add.shape[1] != X_fit.shape[1]:
        raise ValueError(f"X_add has {X_add.shape[1]} columns but X_fit has {X_fit.shape[1]}")
    np.random.seed(seed)
    Y_fit, Y_add = method.extend(X_fit, X_add, seed, context, **settings)
    return (_check_embedding(method, Y_fit, len(X_fit), seed),
            _check_embedding(method, Y_add, len(X_add), seed))


def _check_embedding(method: Method, Y: np.ndarray, n: int, seed: int) -> np.ndarray:
    return check_map(f"the map of {method.name} (seed {seed})", Y, n)


#: what a job returns: (job, map or (fit map, added map), injected file, skip reason, seconds,
#: the warnings it raised as "Category at file:line: message")
Outcome = tuple[Job, object, Path | None, str | None, float, tuple[str, ...]]


def run_job(job: Job, arrays: dict[str, np.ndarray], context: EmbedContext | None) -> Outcome:
    """Run one job; refuses to run without the exact numerics every map is made with. The
    warnings its libraries raise are returned with it, not printed, so that the log shows each
    once with the job it came from.

    This is all of a job that decides its map's bytes; where and when it runs (the process
    pool, the forkserver, a Dask worker: :mod:`drfidelity.jobs`) is left to the executor,
    which is therefore no dependency of any stage."""
    runtime.require_exact(job.describe())
    start = time.perf_counter()
    method = spec(job.method)
    with warnings.catch_warnings(record=True) as caught:
        try:
            if job.extend:
                Y = embed_extend(method, arrays["X_fit"], arrays["X_add"], job.seed, context,
                                 **job.kwargs)
                injected = None
            else:
                Y, injected = run_method(method, arrays["X"], job.seed, context, **job.kwargs)
            skip = None
        except SkipMethod as reason:
            Y, injected, skip = None, None, str(reason)
    raised = tuple(sorted({f"{w.category.__name__} at {_origin(w.filename)}:{w.lineno}: "
                           + " ".join(str(w.message).split()) for w in caught}))
    return job, Y, injected, skip, time.perf_counter() - start, raised


def _origin(filename: str) -> str:
    """A warning's file, from its package down (``sklearn/manifold/_spectral_embedding.py``)."""
    return filename.replace(os.sep, "/").rsplit("site-packages/", 1)[-1]
