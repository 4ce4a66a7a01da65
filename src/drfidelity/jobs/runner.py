"""Independent method x seed jobs, run side by side: a spawn pool here or a Dask cluster.

Every embedding stage (the main benchmark's ``embed`` and the supplements') is a list of
jobs, each a function of (method, seed, settings, input) alone, so the pool size, the order
and the machine never change a byte of the result. A job names its input by configuration
key; a worker loads each input once. A method that cannot run here
(:class:`~drfidelity.methods.SkipMethod`, e.g. toorPIA without cache and key) is an outcome,
not an error; any other error is reported with the job after the remaining jobs finished.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from drfidelity.core import runtime
from drfidelity.core.registry import METHODS
from drfidelity.methods.base import (EmbedContext, SkipMethod, embed_extend, injection_key,
                                     run_method)
from drfidelity.methods.external import cache_path
from drfidelity.jobs.cluster import run_on_cluster, scheduler_address
from drfidelity.jobs.job import Job


#: jobs a pool worker runs before it is replaced by a fresh process: the methods' libraries
#: keep memory between calls (measured: a worker grew to 12 GB over ~120 noise-dims jobs), and
#: every job is a function of its inputs alone, so a fresh process changes no byte
JOBS_PER_WORKER = 8


class JobsFailed(ValueError):
    """Some jobs raised; the message names each job and its error on one line (a rejected
    cache or a bad input is the usual cause, so the CLI reports it as bad input)."""


@dataclass(frozen=True)
class Input:
    """Where a job's arrays are (``X``, or ``X_fit`` and ``X_add``) and the context that
    locates injected coordinates or toorPIA's cache (None: nothing is injected)."""

    paths: dict[str, str]
    context: EmbedContext | None = None


#: what a job returns: (job, map or (fit map, added map), injected file, skip reason, seconds)
Outcome = tuple[Job, object, Path | None, str | None, float]


def run_job(job: Job, arrays: dict[str, np.ndarray], context: EmbedContext | None) -> Outcome:
    """Run one job; refuses to run without the exact numerics every map is made with."""
    runtime.require_exact(job.describe())
    start = time.perf_counter()
    method = METHODS[job.method]
    try:
        if job.extend:
            Y = embed_extend(method, arrays["X_fit"], arrays["X_add"], job.seed, context,
                             **job.kwargs)
            injected = None
        else:
            Y, injected = run_method(method, arrays["X"], job.seed, context, **job.kwargs)
        return job, Y, injected, None, time.perf_counter() - start
    except SkipMethod as skip:
        return job, None, None, str(skip), time.perf_counter() - start


def runs_here(job: Job, context: EmbedContext | None) -> bool:
    """Whether the job needs files of this checkout: a method that reads them, or
    coordinates injected for this job."""
    method = METHODS[job.method]
    if method.local_only:
        return True
    if context is None or job.extend:
        return False
    folder, mode = injection_key(method, method.settings(job.kwargs))
    return cache_path(context, folder, mode, job.seed).is_file()


_worker_inputs: dict[str, Input] = {}
_worker_arrays: dict[str, dict[str, np.ndarray]] = {}


def _init_worker(inputs: dict[str, Input], parent: int | None = None) -> None:
    global _worker_inputs
    if parent is not None:
        runtime.die_with_parent(parent)
    _worker_inputs = inputs
    _worker_arrays.clear()


def _arrays(config: str) -> dict[str, np.ndarray]:
    if config not in _worker_arrays:
        _worker_arrays[config] = {key: np.load(path, allow_pickle=False)
                                  for key, path in _worker_inputs[config].paths.items()}
    return _worker_arrays[config]


def _run_pool_job(job: Job) -> Outcome:
    return run_job(job, _arrays(job.config), _worker_inputs[job.config].context)


class Progress:
    """One line per finished job with count, elapsed time and a naive ETA (CI-log friendly)."""

    def __init__(self, label: str, total: int):
        self.label, self.total, self.done, self.start = label, total, 0, time.perf_counter()

    def step(self, what: str) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        print(f"[{self.label}] {self.done}/{self.total} {what} | elapsed {elapsed:.0f}s"
              f" | ETA {eta:.0f}s", flush=True)


def execute(todo: list[Job], inputs: dict[str, Input], workers: int,
            collect: Callable[..., None]) -> list[str]:
    """Run the jobs (on the Dask cluster of ``DRFIDELITY_SCHEDULER`` when it is set, else
    in-process when ``workers`` is 1, else in a spawn pool of ``workers`` processes) and hand
    every outcome to ``collect(*outcome)``; return one message per failed job instead of
    stopping early."""
    failures = []

    def outcome(job: Job, result) -> None:
        try:
            collect(*result())
        except Exception as exc:  # noqa: BLE001 - reported with the job
            message = " ".join(str(exc).split())
            failures.append(f"{job.describe()}: {type(exc).__name__}: {message}")

    workers = max(1, min(workers, len(todo)))
    address = scheduler_address()
    if address:
        _init_worker(inputs)
        local = [job for job in todo if runs_here(job, inputs[job.config].context)]
        for job in local:
            outcome(job, lambda job=job: _run_pool_job(job))
        remote = [job for job in todo if job not in local]
        if remote:
            configs = sorted({job.config for job in remote})
            run_on_cluster(address, remote, run_job, {c: _arrays(c) for c in configs}, outcome)
    elif workers == 1:
        _init_worker(inputs)
        for job in todo:
            outcome(job, lambda job=job: _run_pool_job(job))
    else:
        # a fresh pool per batch of JOBS_PER_WORKER jobs a worker (the executor's own
        # max_tasks_per_child hangs in Python 3.11 once the first workers retire). A batch
        # holds one method's jobs where it can: it lasts as long as its slowest job, and
        # every fresh worker compiles UMAP's numba kernels again (measured at N = 1000:
        # 12-16 s cold against 1.3-1.6 s warm), so mixed batches idle and recompile.
        rank = {name: i for i, name in enumerate(METHODS)}
        todo = sorted(todo, key=lambda job: rank[job.method])
        batch = workers * JOBS_PER_WORKER
        for start in range(0, len(todo), batch):
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                     initializer=_init_worker,
                                     initargs=(inputs, os.getpid())) as pool:
                futures = {pool.submit(_run_pool_job, job): job
                           for job in todo[start:start + batch]}
                for future in as_completed(futures):
                    outcome(futures[future], future.result)
    return failures


def run_all(label: str, todo: list[Job], inputs: dict[str, Input], workers: int,
            root: Path) -> tuple[dict[Job, object], dict[Job, str], dict[Job, str]]:
    """Run ``todo`` with progress lines: (maps, skip reasons, injected file per job).

    Raises :class:`JobsFailed` naming every failed job once all have finished.
    """
    progress = Progress(label, len(todo))
    maps, skipped, injected = {}, {}, {}

    def collect(job: Job, Y, injected_file: Path | None, skip_reason: str | None,
                seconds: float) -> None:
        if skip_reason is not None:
            skipped[job] = skip_reason
            progress.step(f"{job.describe()} skipped: {skip_reason}")
            return
        maps[job] = Y
        if injected_file is None:
            progress.step(f"{job.describe()} {seconds:.1f}s")
        else:
            injected[job] = Path(injected_file).relative_to(root).as_posix()
            progress.step(f"{job.describe()} injected from {injected[job]}")

    failures = execute(todo, inputs, workers, collect)
    if failures:
        raise JobsFailed(f"{label}: {len(failures)} job(s) failed: " + "; ".join(failures))
    return maps, skipped, injected
