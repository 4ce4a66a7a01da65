"""Independent method x seed jobs, run side by side: local processes here or a Dask cluster.

Every embedding stage (the main benchmark's ``embed`` and the studies') is a list of
jobs, each a function of (method, seed, settings, input) alone, so the number of jobs at a
time, the order and the machine never change a byte of the result. Each job runs in a fresh
process of its own (:mod:`.fresh` says why), ``workers`` at a time, forked from one that has
imported the jobs' method libraries. A job names its input by configuration key, and its
process loads that input only. A method that cannot run here
(:class:`~drfidelity.methods.SkipMethod`, e.g. toorPIA without cache and key) is an outcome,
not an error; any other error is reported with the job after the remaining jobs finished.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from drfidelity.core import runtime
from drfidelity.core.layout import dvc_stage
from drfidelity.method_specs import spec
from drfidelity.methods.base import EmbedContext, Outcome, run_job
from drfidelity.jobs.cluster import run_on_cluster, scheduler_address
from drfidelity.jobs.fresh import in_fresh_process, preload
from drfidelity.jobs.memory import MemoryGate, expected_peak, meminfo
from drfidelity.core.job import Job
from drfidelity.jobs.reuse import injected_here
from drfidelity.jobs.times import record_jobs


class JobsFailed(ValueError):
    """Some jobs raised; the message names each job and its error on one line (a rejected
    cache or a bad input is the usual cause, so the CLI reports it as bad input)."""


@dataclass(frozen=True)
class Input:
    """Where a job's arrays are (``X``, or ``X_fit`` and ``X_add``) and the context that
    locates injected coordinates or toorPIA's cache (None: nothing is injected)."""

    paths: dict[str, str]
    context: EmbedContext | None = None


def runs_here(job: Job, context: EmbedContext | None) -> bool:
    """Whether the job needs files of this checkout: a method that reads them, or
    coordinates injected for this job."""
    return spec(job.method).local_only or injected_here(job, context)


#: the input of the job this fresh process runs, set by its initializer
_worker_inputs: dict[str, Input] = {}


def _init_worker(inputs: dict[str, Input], stage: int) -> None:
    """Set up a job's fresh process: it knows its job's input, and it ends with process
    ``stage``, even when that is killed (SIGKILL, ``dvc repro`` stopped)."""
    global _worker_inputs
    runtime.die_with_parent(os.getppid())
    if os.getppid() != stage:
        _end_with(stage)
    _worker_inputs = inputs


def _end_with(stage: int) -> None:
    """End this process once process ``stage`` is gone, checked every second. Its parent is
    then the stage's forkserver, which lives as long as any of its jobs do (each holds its
    end of the pipe the forkserver watches), so the parent-death signal alone never comes."""
    def watch() -> None:
        while True:
            try:
                os.kill(stage, 0)
            except ProcessLookupError:
                os._exit(1)
            time.sleep(1.0)

    threading.Thread(target=watch, daemon=True).start()


def _load(source: Input) -> dict[str, np.ndarray]:
    return {key: np.load(path, allow_pickle=False) for key, path in source.paths.items()}


def _run_in_this_process(job: Job) -> Outcome:
    """The job on its input, loaded here: what a fresh process runs."""
    source = _worker_inputs[job.config]
    return run_job(job, _load(source), source.context)


def _rows(path: str) -> int:
    """The rows of a ``.npy`` file, from its header alone; 0 where that cannot be read (the
    job then fails on loading it, with its own error naming the job)."""
    try:
        with open(path, "rb") as file:
            major, _ = np.lib.format.read_magic(file)
            header = (np.lib.format.read_array_header_1_0 if major == 1
                      else np.lib.format.read_array_header_2_0)
            shape = header(file)[0]
    except (OSError, ValueError):
        return 0
    return int(shape[0]) if shape else 0


def _points(source: Input) -> int:
    """How many points a job on ``source`` embeds (its fitted and added rows)."""
    return sum(_rows(path) for key, path in source.paths.items()
               if key in ("X", "X_fit", "X_add"))


def _run_fresh(job: Job, inputs: dict[str, Input], progress: "Progress", gate: MemoryGate,
               need: int) -> Outcome:
    """The job in a fresh process that loads its input only and ends with this one, started
    once its expected peak memory fits (:mod:`.memory`)."""
    with gate.admitted(need):
        progress.started(job)
        return in_fresh_process(_run_in_this_process, job, initializer=_init_worker,
                                initargs=({job.config: inputs[job.config]}, os.getpid()))


def preloaded(jobs: list[Job]) -> list[str]:
    """What the jobs' processes start with: this module, and each method's wrapper and the
    libraries it names (its ``PRELOAD``)."""
    wrappers = sorted({spec(job.method).wrapper for job in jobs})
    libraries = [name for wrapper in wrappers
                 for name in importlib.import_module(wrapper).PRELOAD]
    return [__name__, *wrappers, *dict.fromkeys(libraries)]


class Progress:
    """What the log says while jobs run (CI-log friendly: whole lines, no redraws): a line per
    finished job with the count, the time and an ETA that weighs the remaining jobs by their
    method's expected cost (:attr:`~drfidelity.core.method.Method.seconds`, scaled by how
    the finished jobs compared with theirs), the running jobs when nothing was printed for
    ``quiet_s`` seconds, and each distinct library warning once, with the job that raised it."""

    def __init__(self, label: str, todo: list[Job], workers: int, quiet_s: float = 30.0):
        self.label, self.workers, self.quiet_s = label, max(1, workers), quiet_s
        self.expected = {job: spec(job.method).seconds for job in todo}
        self.running: dict[Job, float] = {}
        self.lock = threading.Lock()
        self.done, self.spent, self.spent_expected = 0, 0.0, 0.0
        self.warned: set[str] = set()
        self.start = self.last = time.perf_counter()

    def _print(self, line: str) -> None:
        self.last = time.perf_counter()
        print(f"[{self.label}] {line}", flush=True)

    def begin(self) -> None:
        total = sum(self.expected.values()) / min(self.workers, len(self.expected) or 1)
        self._print(f"{len(self.expected)} jobs, {self.workers} at a time, each in a fresh "
                    f"process; about {total:.0f}s at N = 1000")

    def started(self, job: Job) -> None:
        with self.lock:
            self.running[job] = time.perf_counter()

    def step(self, job: Job, what: str, seconds: float, raised: tuple[str, ...]) -> None:
        with self.lock:
            self.running.pop(job, None)
            cost = self.expected.pop(job, 0.0)
        self.done += 1
        self.spent += seconds
        self.spent_expected += cost
        scale = self.spent / self.spent_expected if self.spent_expected else 1.0
        left = len(self.expected)
        eta = scale * sum(self.expected.values()) / min(self.workers, left or 1)
        elapsed = time.perf_counter() - self.start
        self._print(f"{self.done}/{self.done + left} {what} | elapsed {elapsed:.0f}s | "
                    f"ETA {eta:.0f}s")
        for warning in raised:
            if warning not in self.warned:
                self.warned.add(warning)
                self._print(f"warning from {job.describe()} (shown once): {warning}")

    def idle(self) -> None:
        """Name the running jobs if the log has been quiet for ``quiet_s`` seconds."""
        now = time.perf_counter()
        if now - self.last < self.quiet_s:
            return
        with self.lock:
            running = sorted(self.running.items(), key=lambda item: item[1])
        if running:
            self._print("running: " + ", ".join(f"{job.describe()} ({now - t:.0f}s)"
                                                 for job, t in running))


def execute(todo: list[Job], inputs: dict[str, Input], workers: int,
            collect: Callable[..., None], progress: Progress) -> list[str]:
    """Run the jobs, each in a fresh process, ``workers`` at a time and the costliest first
    (those that need no file of this checkout go to the Dask cluster of
    ``DRFIDELITY_SCHEDULER`` when it is set), each local one once its expected peak memory fits
    beside the running ones (:mod:`.memory`), and hand every outcome to ``collect(*outcome)``;
    return one message per failed job instead of stopping early. A job whose peak exceeds the
    machine's memory is refused (:class:`~.memory.TooLargeForMachine`) before any job starts."""
    failures = []
    if not todo:  # every map was taken from elsewhere (:mod:`.reuse`)
        return failures

    def outcome(job: Job, result) -> None:
        try:
            collect(*result())
        except Exception as exc:  # noqa: BLE001 - reported with the job
            progress.step(job, "failed", 0.0, ())
            message = " ".join(str(exc).split())
            failures.append(f"{job.describe()}: {type(exc).__name__}: {message}")

    address = scheduler_address()
    remote = [job for job in todo if address and not runs_here(job, inputs[job.config].context)]
    local = sorted((job for job in todo if job not in remote),
                   key=lambda job: -spec(job.method).seconds)
    points = {config: _points(inputs[config]) for config in {job.config for job in local}}
    needs = {job: expected_peak(job.method, points[job.config]) for job in local}
    gate = MemoryGate(budget=meminfo("MemAvailable"), limit=meminfo("MemTotal"))
    gate.refuse_any_too_large({f"{job.describe()} (N = {points[job.config]})": need
                               for job, need in needs.items()})
    progress.begin()
    preload(preloaded(local))
    with ThreadPoolExecutor(max(1, min(workers, len(local)))) as threads:
        pending = {threads.submit(_run_fresh, job, inputs, progress, gate, needs[job]): job
                   for job in local}
        if remote:
            configs = sorted({job.config for job in remote})
            run_on_cluster(address, remote, run_job, {c: _load(inputs[c]) for c in configs},
                           outcome, modules=preloaded(remote))
        while pending:
            finished, _ = wait(pending, timeout=progress.quiet_s, return_when=FIRST_COMPLETED)
            for future in finished:
                outcome(pending.pop(future), future.result)
            if not finished:
                progress.idle()
    return failures


def run_all(label: str, todo: list[Job], inputs: dict[str, Input], workers: int,
            root: Path, taken: dict[Job, object] | None = None
            ) -> tuple[dict[Job, object], dict[Job, str], dict[Job, str]]:
    """Run ``todo`` with progress lines: (maps, skip reasons, injected file per job).

    ``label`` is the stage and its item (``embed clusters``); when ``root`` is a pipeline folder
    of a git checkout, a run without failures records each job's seconds under the stage
    ``embed@clusters`` (:mod:`.times`). ``taken`` are jobs whose maps the stage took from the
    checkout's pipeline (:mod:`.reuse`): returned with the rest and recorded at 0 s, what they
    cost a rebuild of this pipeline. Raises :class:`JobsFailed` naming every failed job once
    all have finished.
    """
    progress = Progress(label, todo, workers)
    maps, skipped, injected, took = {}, {}, {}, {}

    def collect(job: Job, Y, injected_file: Path | None, skip_reason: str | None,
                seconds: float, raised: tuple[str, ...]) -> None:
        took[job] = seconds
        if skip_reason is not None:
            skipped[job] = skip_reason
            progress.step(job, f"{job.describe()} skipped: {skip_reason}", seconds, raised)
            return
        maps[job] = Y
        if injected_file is None:
            progress.step(job, f"{job.describe()} {seconds:.1f}s", seconds, raised)
        else:
            injected[job] = Path(injected_file).relative_to(root).as_posix()
            progress.step(job, f"{job.describe()} injected from {injected[job]}", seconds,
                          raised)

    failures = execute(todo, inputs, workers, collect, progress)
    if failures:
        raise JobsFailed(f"{label}: {len(failures)} job(s) failed: " + "; ".join(failures))
    maps.update(taken or {})
    took.update(dict.fromkeys(taken or {}, 0.0))
    points = {config: _points(source) for config, source in inputs.items()}
    record_jobs(root, dvc_stage(label), [
        (job.method, job.seed, job.config, points[job.config], seconds)
        for job, seconds in took.items()])
    return maps, skipped, injected
