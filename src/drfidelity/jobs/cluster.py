"""Embed jobs on a Dask distributed cluster, when ``DRFIDELITY_SCHEDULER`` names its scheduler.

The method x seed jobs are independent and single-threaded, so a cluster changes only where
they run, never what they return: each map depends on (method, seed, settings, X) alone and
comes back as the same bytes. Two conditions keep it so. Every worker must run the exact
numerics of :mod:`drfidelity.core.runtime` (``drfidelity worker`` starts workers that do, one
thread each; a job on any other worker refuses to run), and jobs that read files of this
checkout (toorPIA's cache and API key, injected coordinates) stay on this machine.

On a worker, each job runs in the main thread of a fresh process of its own, exactly as in
the local pool (:mod:`.fresh` says why a process per job), never in a worker's task thread:
there scikit-learn's OpenMP neighbour search crashes (SIGSEGV; measured with 2026.8.0).

Where the jobs run is not a parameter of the results, so it is an environment variable, not
a ``params.yaml`` key: switching it does not make DVC rerun anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from drfidelity.core import runtime
from drfidelity.jobs.fresh import in_fresh_process, preload

SCHEDULER_VARIABLE = "DRFIDELITY_SCHEDULER"


class SchedulerUnreachable(OSError):
    """The scheduler named by ``DRFIDELITY_SCHEDULER`` did not answer."""


def scheduler_address() -> str | None:
    """The scheduler address (``tcp://host:port``) from the environment, or None."""
    return os.environ.get(SCHEDULER_VARIABLE) or None


def in_job_process(run_job: Callable, job: Any, arrays: dict[str, np.ndarray], context: Any,
                   modules: Sequence[str] = ()):
    """``run_job(job, arrays, context)`` in a fresh process on this worker (see the module
    docstring), started from one that has imported ``modules`` (the worker's first job sets
    them); refused on a worker without the exact numerics."""
    runtime.require_exact(f"{job.method} seed {job.seed}")
    preload(modules)
    return in_fresh_process(run_job, job, arrays, context)


def run_on_cluster(address: str, jobs: Sequence[Any], run_job: Callable,
                   inputs: dict[str, dict[str, np.ndarray]],
                   outcome: Callable[[Any, Callable], None], timeout_s: float = 10.0,
                   modules: Sequence[str] = ()) -> None:
    """Submit ``run_job(job, inputs[job.config], None)`` for every job to the cluster at
    ``address`` (each job's process started from one that has imported ``modules``) and hand
    each finished one to ``outcome(job, result_getter)`` as it completes. Each input is sent
    to the workers once."""
    from distributed import Client, as_completed

    try:
        client = Client(address, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError) as error:
        raise SchedulerUnreachable(
            f"no Dask scheduler answered at {address} ({SCHEDULER_VARIABLE}) within "
            f"{timeout_s:.0f} s: {error}") from None
    with client:
        # one array at a time: a scattered dict's keys ("X") name the data on the cluster,
        # so every input would be the last one scattered; an array is named by its content
        shared = {config: {key: client.scatter(array, broadcast=True)
                           for key, array in arrays.items()}
                  for config, arrays in inputs.items()}
        futures = {client.submit(in_job_process, run_job, job, shared[job.config], None,
                                 list(modules), pure=False): job for job in jobs}
        for future in as_completed(futures, loop=client.loop):
            outcome(futures[future], future.result)
