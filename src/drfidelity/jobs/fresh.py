"""One job, one process: every map is made in a fresh process that exits with it.

Some methods' libraries keep hidden state from one call to the next inside a process, so a map
made after other maps can differ from the same job run first. Measured: ARPACK (scipy's
``eigsh``, behind UMAP's spectral initialisation and the eigensolvers of PyMDE and Isomap)
keeps the seed of the random vector it restarts from in Fortran ``SAVE`` storage; UMAP
(n_neighbors=100, seed 0) on the clusters input gave one map in a fresh process and another
after two other UMAP fits in the same process. A process per job makes each map a function of
its job and input alone, whatever ran before and wherever it runs (the local pool, one job at a
time, a Dask worker), and gives each job's memory back to the system (a long-lived worker grew
to 12 GB over ~120 jobs).

What a fresh process costs is its imports (1-2 s for scikit-learn or UMAP, 3-5 s for the torch
methods, against well under a second of fitting on small inputs). So job processes are forked
from a *forkserver*: one process per stage that has imported the libraries of the stage's
methods (their wrappers' ``PRELOAD``) and run nothing else, so every job starts from the state
an import leaves, as a spawned process does once it has imported, without paying for it.
numba-compiled code still comes from the disk cache (see :mod:`drfidelity.methods.umap`).
Where there is no forkserver (Windows), each job's process is spawned and imports for itself.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterable

START_METHOD = ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
                else "spawn")
_CONTEXT = multiprocessing.get_context(START_METHOD)


def preload(modules: Iterable[str]) -> None:
    """Have the job processes of this process start from one that has imported ``modules``.

    Takes effect when called before this process's first job (the forkserver starts then and
    lives as long as this process); later calls change nothing. A library that is not
    installed is left to the job, which imports it and reports the error itself.
    """
    if START_METHOD == "forkserver":
        _CONTEXT.set_forkserver_preload(list(modules))


def in_fresh_process(function: Callable, *args: Any, initializer: Callable | None = None,
                     initargs: tuple = ()) -> Any:
    """``function(*args)`` in a fresh process of its own (after ``initializer(*initargs)``);
    its exceptions are raised here, and the process exits when it returns."""
    with ProcessPoolExecutor(1, mp_context=_CONTEXT, initializer=initializer,
                             initargs=initargs) as pool:
        return pool.submit(function, *args).result()
