"""One job, one process: every map is made in a freshly spawned interpreter that exits with it.

Some methods' libraries keep hidden state from one call to the next inside a process, so a map
made after other maps can differ from the same job run first. Measured: ARPACK (scipy's
``eigsh``, behind UMAP's spectral initialisation and the eigensolvers of PyMDE and Isomap)
keeps the seed of the random vector it restarts from in Fortran ``SAVE`` storage; UMAP
(n_neighbors=100, seed 0) on the clusters input gave one map in a fresh process and another
after two other UMAP fits in the same process. A process per job makes each map a function of
its job and input alone, whatever ran before and wherever it runs (the local pool, one job at a
time, a Dask worker), and gives each job's memory back to the system (a long-lived worker grew
to 12 GB over ~120 jobs). The start-up it costs is mostly imports; numba-compiled code comes
from the disk cache (see :mod:`drfidelity.methods.umap_`).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable


def in_fresh_process(function: Callable, *args: Any, initializer: Callable | None = None,
                     initargs: tuple = ()) -> Any:
    """``function(*args)`` in a spawned process of its own (after ``initializer(*initargs)``);
    its exceptions are raised here, and the process exits when it returns."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=initializer, initargs=initargs) as pool:
        return pool.submit(function, *args).result()
