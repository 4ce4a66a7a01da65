"""Stage ``embed``: every method x seed on one dataset -> ``embeddings/{dataset}/``.

Jobs are independent and single-threaded, so they run side by side in ``params.jobs`` worker
processes, or on a Dask cluster when ``DRFIDELITY_SCHEDULER`` is set
(:mod:`drfidelity.pipeline.cluster`); each result depends only on (method, seed, settings, X),
never on the worker or the order, so a parallel or distributed run is byte-identical to a
serial one. A method that cannot run here
(:class:`~drfidelity.methods.SkipMethod`, e.g. toorPIA without cache and key) is recorded in
``status.json`` with its reason and the stage goes on; any other error fails the stage after
the remaining jobs finished, naming the method and seed.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from drfidelity import runtime
from drfidelity.methods import METHODS, EmbedContext, SkipMethod, run_method
from drfidelity.methods.base import injection_key
from drfidelity.methods.external import cache_path
from drfidelity.pipeline.cluster import run_on_cluster, scheduler_address
from drfidelity.pipeline.files import dumps_json, write_array_dir
from drfidelity.pipeline.layout import data_dir, embeddings_dir, load_meta
from drfidelity.pipeline.params import Params


class JobsFailed(ValueError):
    """Some method x seed jobs raised; the message names dataset, method, seed and the error of
    each, on one line (a rejected cache or a bad input is the usual cause, so the CLI reports it
    as bad input)."""


@dataclass(frozen=True)
class Job:
    method: str
    seed: int
    settings: dict


def plan(params: Params) -> list[Job]:
    """The method x seed jobs, in params order (stochastic methods get seeds 0..R-1)."""
    return [Job(name, seed, params.method_params.get(name, {}))
            for name in params.methods for seed in METHODS[name].seeds(params.seeds)]


_worker_X: np.ndarray | None = None
_worker_context: EmbedContext | None = None


def _init_worker(x_path: str, context: EmbedContext, parent: int | None = None) -> None:
    global _worker_X, _worker_context
    if parent is not None:
        runtime.die_with_parent(parent)
    _worker_X = np.load(x_path, allow_pickle=False)
    _worker_context = context


def run_job(job: Job, X: np.ndarray, context: EmbedContext | None
            ) -> tuple[Job, np.ndarray | None, Path | None, str | None, float]:
    """(job, map, injected file, skip reason, seconds); refuses to run without the exact
    numerics every map of the benchmark is made with."""
    runtime.require_exact(f"{job.method} seed {job.seed}")
    start = time.perf_counter()
    try:
        Y, injected = run_method(METHODS[job.method], X, job.seed, context, **job.settings)
        return job, Y, injected, None, time.perf_counter() - start
    except SkipMethod as skip:
        return job, None, None, str(skip), time.perf_counter() - start


def _run_pool_job(job: Job):
    return run_job(job, _worker_X, _worker_context)


def runs_here(job: Job, context: EmbedContext) -> bool:
    """Whether the job needs files of this checkout: a method that reads them, or
    coordinates injected for this job."""
    method = METHODS[job.method]
    if method.local_only:
        return True
    folder, mode = injection_key(method, method.settings(job.settings))
    return cache_path(context, folder, mode, job.seed).is_file()


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


def _execute(todo: list[Job], workers: int, x_path: str, context: EmbedContext,
             collect) -> list[str]:
    """Run the jobs (on the Dask cluster of ``DRFIDELITY_SCHEDULER`` when it is set, else
    in-process when ``workers`` is 1, else in a spawn pool) and hand every outcome to
    ``collect``; return one message per failed job instead of stopping early."""
    failures = []

    def outcome(job: Job, result) -> None:
        try:
            collect(*result())
        except Exception as exc:  # noqa: BLE001 - reported with method and seed
            message = " ".join(str(exc).split())
            failures.append(f"{job.method} seed {job.seed}: {type(exc).__name__}: {message}")

    address = scheduler_address()
    if address:
        local = [job for job in todo if runs_here(job, context)]
        X = np.load(x_path, allow_pickle=False)
        for job in local:
            outcome(job, lambda job=job: run_job(job, X, context))
        remote = [job for job in todo if job not in local]
        if remote:
            run_on_cluster(address, remote, run_job, X, outcome)
    elif workers <= 1:
        _init_worker(x_path, context)
        for job in todo:
            outcome(job, lambda job=job: _run_pool_job(job))
    else:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_init_worker,
                                 initargs=(x_path, context, os.getpid())) as pool:
            futures = {pool.submit(_run_pool_job, job): job for job in todo}
            for future in as_completed(futures):
                outcome(futures[future], future.result)
    return failures


def used_settings(params: Params, name: str, n: int) -> dict:
    """The hyper-parameters method ``name`` runs with on n points: params over defaults, with
    the values a wrapper clamps for small inputs (t-SNE perplexity, k-NN sizes) as used."""
    method = METHODS[name]
    return method.used(method.settings(params.method_params.get(name, {})), n)


def run(params: Params, dataset: str, root: Path, jobs: int | None = None) -> None:
    meta = load_meta(params, dataset, root)
    fingerprint, n = meta["fingerprint"], meta["shape"][0]
    for name in params.methods:
        asked = METHODS[name].settings(params.method_params.get(name, {}))
        for key, value in used_settings(params, name, n).items():
            if value != asked[key]:
                print(f"[embed {dataset}] {name}: {key} = {asked[key]!r} is clamped to "
                      f"{value!r} for N = {n} (recorded in status.json)", flush=True)
    context = EmbedContext(root=root, dataset=dataset, tag=params.tag)
    todo = plan(params)
    progress = Progress(f"embed {dataset}", len(todo))
    results, skipped, injected = {}, {}, {}

    def collect(job: Job, Y, injected_file: Path | None, skip_reason: str | None,
                seconds: float) -> None:
        if skip_reason is not None:
            skipped[job.method] = skip_reason
            progress.step(f"{job.method} seed{job.seed} skipped: {skip_reason}")
            return
        results[(job.method, job.seed)] = Y
        if injected_file is None:
            progress.step(f"{job.method} seed{job.seed} {seconds:.1f}s")
        else:
            where = Path(injected_file).relative_to(root).as_posix()
            injected.setdefault(job.method, {})[str(job.seed)] = where
            progress.step(f"{job.method} seed{job.seed} injected from {where}")

    x_path = str(data_dir(root, dataset) / "X.npy")
    failures = _execute(todo, min(jobs or params.jobs, len(todo)), x_path, context, collect)
    if failures:
        raise JobsFailed(f"embed {dataset}: {len(failures)} job(s) failed: "
                         + "; ".join(failures))
    status = {}
    for name in params.methods:
        if name in skipped:
            status[name] = {"status": "skipped", "reason": skipped[name]}
        else:
            status[name] = {"status": "ok", "seeds": METHODS[name].seeds(params.seeds),
                            "settings": used_settings(params, name, n),
                            "injected": injected.get(name, {})}
    arrays = {f"{m}/seed{s}": Y for (m, s), Y in sorted(results.items())}
    record = {"data_fingerprint": fingerprint, "methods": status}
    write_array_dir(embeddings_dir(root, dataset), arrays, {"status.json": dumps_json(record)})
