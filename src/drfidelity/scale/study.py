"""The scale study: how each method's and the metric engine's cost grows with N.

Every measurement runs in a fresh interpreter (``python -m drfidelity.scale.study``), so
its peak RSS is its own and a run past its budget can be stopped without touching the others.
The child generates its input, makes one warm-up call on a small input of the same kind (so
that numba compilation and imports are not counted as growth with N: that once-per-process
cost is recorded as ``warmup_s``), then times the call (run twice when shorter than
:data:`TWICE_BELOW_S`, repeated while the calls add up to less than :data:`MIN_TIMED_S`; the
fastest counts, the first is kept as ``first_s``): a method's ``run_method``, or the metric
engine's ``Reference(X)`` plus one ``score(Y)`` of the whole canonical column set (Y: the PCA
map). Peak RSS is ``ru_maxrss`` of the child; ``base_rss_mib`` is that peak just before the
timed call, so ``peak - base`` is the call's working memory (a lower bound: memory the
warm-up already touched is reused).

Budgets: a run is killed past ``budget_s`` seconds or ``memory_gib`` of RSS (polled every
:data:`POLL_S` seconds), and a subject whose previous size failed, or whose power law through
its two largest finished sizes predicts more than ``budget_s``, is not run at the larger sizes;
each such row says why. Wall times depend on the machine and its load, so the study is not part
of the frozen rebuild (its DVC stage is frozen and its knobs live in ``scale.yaml``, not
``params.yaml``).
"""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from drfidelity.core.validation import integer, known_keys, one_of, real, snr
from drfidelity.scale import (COLUMNS, CONFIG_KEYS, ENGINE, MAX_REPEATS, MEMORY_FLOOR_MIB,
                              MIN_TIMED_S, POLL_S, TWICE_BELOW_S, WARMUP_N)

@dataclass(frozen=True)
class Task:
    """One measurement: ``subject`` (a method or :data:`ENGINE`) on ``n`` points of
    ``dataset`` in ``d`` dims, stopped past ``budget_s`` seconds or ``memory_gib`` GiB."""

    subject: str
    n: int
    d: int
    dataset: str
    data_seed: int
    snr: float
    seed: int
    budget_s: float
    memory_gib: float

    # what the Dask runner (jobs/cluster.py) reads of a job
    @property
    def method(self) -> str:
        return self.subject

    @property
    def config(self) -> str:
        return f"n{self.n}"


@dataclass(frozen=True)
class ScaleConfig:
    """The knobs of ``scale.yaml``."""

    dataset: str
    sizes: tuple[int, ...]
    d: int
    data_seed: int
    snr: float
    seed: int
    methods: tuple[str, ...]
    budget_s: float
    memory_gib: float

    def tasks(self, n: int) -> list[Task]:
        """The measurements at size ``n``: the metric engine, then every method."""
        return [Task(subject, n, self.d, self.dataset, self.data_seed, self.snr, self.seed,
                     self.budget_s, self.memory_gib) for subject in (ENGINE, *self.methods)]


def load_config(path: Path) -> ScaleConfig:
    """``scale.yaml`` checked: unknown keys named with the closest one, bad values named."""
    import yaml

    from drfidelity.datasets.registry import DATASETS
    from drfidelity.registry import METHODS

    raw = yaml.safe_load(Path(path).read_text()) or {}
    where = Path(path).name
    known_keys(where, raw, CONFIG_KEYS)
    missing = [key for key in CONFIG_KEYS if key not in raw]
    if missing:
        raise ValueError(f"{where}: missing key(s) {missing}")
    sizes = tuple(integer(f"{where}.sizes", n, WARMUP_N) for n in raw["sizes"])
    if not sizes or list(sizes) != sorted(set(sizes)):
        raise ValueError(f"{where}.sizes must be increasing and non-empty, got {raw['sizes']}")
    methods = tuple(one_of(f"{where}.methods", m, METHODS) for m in raw["methods"])
    return ScaleConfig(
        dataset=one_of(f"{where}.dataset", raw["dataset"], DATASETS), sizes=sizes,
        d=integer(f"{where}.d", raw["d"], 2),
        data_seed=integer(f"{where}.data_seed", raw["data_seed"], 0),
        snr=snr(f"{where}.snr", raw["snr"]),
        seed=integer(f"{where}.seed", raw["seed"], 0), methods=methods,
        budget_s=real(f"{where}.budget_s", raw["budget_s"], low=0.0, low_open=True),
        memory_gib=real(f"{where}.memory_gib", raw["memory_gib"], low=0.0, low_open=True))


# ------------------------------------------------------------------------ the measured child

def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # ru_maxrss is KiB


def _input(task: Task, n: int) -> dict:
    from drfidelity.datasets.inputs import generate

    return generate(task.dataset, n=n, d=task.d, data_seed=task.data_seed, snr=task.snr)


def _engine_call(arrays: dict) -> dict[str, float]:
    """Seconds of ``Reference(X)`` and of one ``score`` of the PCA map (the whole canonical
    column set, per-point columns included, with the input's ground truth)."""
    from drfidelity.datasets.inputs import GROUND_TRUTH
    from drfidelity.registry import METHODS
    from drfidelity.methods.base import run_method
    from drfidelity.metrics import Reference

    Y = run_method(METHODS["PCA"], arrays["X"], 0)[0]
    start = time.perf_counter()
    reference = Reference(arrays["X"], per_point=True,
                          **{kw: arrays[key] for kw, key in GROUND_TRUTH.items() if key in arrays})
    built = time.perf_counter()
    reference.score(Y)
    return {"reference_s": built - start, "score_s": time.perf_counter() - built}


def measure_here(task: Task) -> dict[str, Any]:
    """Run ``task`` in this process (the child's side): its timings and RSS in MiB.

    A method whose maps come from a remote service (toorPIA) runs only with its API key, on a
    scratch cache folder (so that the call is timed, never a cached map).
    """
    from drfidelity.registry import METHODS
    from drfidelity.methods.base import EmbedContext, SkipMethod, run_method
    from drfidelity.methods.toorpia import KEY_VARIABLE

    method = METHODS.get(task.subject)
    if method is not None and method.local_only and not os.environ.get(KEY_VARIABLE):
        return {"status": "skipped",
                "note": f"a closed remote service, run only with {KEY_VARIABLE} set"}

    def call(arrays: dict, scratch: str) -> dict[str, float]:
        if method is None:
            return _engine_call(arrays)
        context = EmbedContext(Path(scratch), task.dataset, f"n{len(arrays['X'])}")
        run_method(method, arrays["X"], task.seed, context if method.local_only else None)
        return {}

    with tempfile.TemporaryDirectory(prefix="drfidelity-scale-") as scratch:
        start = time.perf_counter()
        try:
            call(_input(task, min(WARMUP_N, task.n)), scratch)
        except SkipMethod as skip:
            return {"status": "skipped", "note": str(skip).replace(scratch, "<scratch>")}
        warmup = time.perf_counter() - start
        arrays = _input(task, task.n)
        base = _peak_rss_mib()
        timings, spent = [], 0.0
        while len(timings) < MAX_REPEATS and (
                spent < MIN_TIMED_S or (len(timings) == 1 and spent < TWICE_BELOW_S)):
            wall, cpu = time.perf_counter(), time.process_time()
            parts = call(arrays, scratch)
            timings.append({"wall_s": time.perf_counter() - wall,
                            "cpu_s": time.process_time() - cpu, **parts})
            spent += timings[-1]["wall_s"]
        best = min(timings, key=lambda timing: timing["wall_s"])
        return {"status": "ok", **best, "repeats": len(timings),
                "first_s": timings[0]["wall_s"], "warmup_s": warmup,
                "peak_rss_mib": _peak_rss_mib(), "base_rss_mib": base}


def _child_main(argv: list[str]) -> None:
    from drfidelity.core import runtime

    runtime.configure("exact")
    runtime.die_with_parent(os.getppid())
    task = Task(**json.loads(argv[0]))
    print(json.dumps(measure_here(task)), flush=True)


# ------------------------------------------------------------------------ the parent's side

def _rss_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def measure(task: Task, arrays: object = None, context: object = None) -> dict[str, Any]:
    """One row of ``results/scale_runs.csv``: ``task`` measured in a fresh interpreter.

    ``arrays`` and ``context`` are unused (the child makes its own input); they let the Dask
    runner of the embed jobs submit measurements too.
    """
    row = {column: None for column in COLUMNS}
    row.update(subject=task.subject, n=task.n, d=task.d)
    command = [sys.executable, "-m", "drfidelity.scale.study", json.dumps(asdict(task))]
    limit = task.memory_gib * 2**30
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, stdout=out, stderr=err, start_new_session=True)
        start, stopped = time.perf_counter(), None
        while child.poll() is None:
            if _rss_bytes(child.pid) > limit:
                stopped = f"over the memory budget ({task.memory_gib:g} GiB RSS)"
            elif time.perf_counter() - start > task.budget_s:
                stopped = f"over the time budget ({task.budget_s:g} s)"
            if stopped:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                break
            time.sleep(POLL_S)
        if stopped:
            return {**row, "status": "over budget", "note": stopped}
        out.seek(0)
        err.seek(0)
        lines = out.read().strip().splitlines()
        if child.returncode != 0 or not lines:
            last = (err.read().strip().splitlines() or ["no output"])[-1]
            return {**row, "status": "failed", "note": f"exit {child.returncode}: {last}"}
        return {**row, **json.loads(lines[-1])}


def _predicted_s(rows: list[dict], n: int) -> float | None:
    """Wall time at ``n`` from the power law through the two largest finished sizes."""
    done = [r for r in rows if r["status"] == "ok" and r["wall_s"] and r["wall_s"] > 0]
    if len(done) < 2:
        return None
    (n1, t1), (n2, t2) = [(r["n"], r["wall_s"]) for r in done[-2:]]
    slope = math.log(t2 / t1) / math.log(n2 / n1)
    return t2 * (n / n2) ** max(slope, 1.0)


def _not_run(task: Task, earlier: list[dict]) -> tuple[str, str] | None:
    """(status, note) of a ``task`` not worth running, given its subject's rows at smaller
    sizes: a skipped method stays skipped; a failure or a predicted overrun is not retried."""
    if earlier and earlier[-1]["status"] in ("skipped", "not run"):
        return earlier[-1]["status"], earlier[-1]["note"]
    if earlier and earlier[-1]["status"] != "ok":
        return "not run", f"{earlier[-1]['status']} at N={earlier[-1]['n']}"
    predicted = _predicted_s(earlier, task.n)
    if predicted is not None and predicted > task.budget_s:
        return "not run", (f"predicted {predicted:.0f} s (power law through N="
                           f"{earlier[-2]['n']} and {earlier[-1]['n']}) > the time budget "
                           f"({task.budget_s:g} s)")
    return None


def run_study(config: ScaleConfig, progress: Callable[[str], None] = print) -> list[dict]:
    """Every subject at every size, smallest size first: the rows of ``scale_runs.csv``.

    Measurements run one at a time here (so that none slows another down), or, when
    ``DRFIDELITY_SCHEDULER`` names a Dask scheduler, one size at a time on its workers (each
    ``drfidelity worker`` thread runs one measurement).
    """
    import numpy as np

    from drfidelity.jobs.cluster import run_on_cluster, scheduler_address

    address = scheduler_address()
    rows: list[dict] = []
    for n in config.sizes:
        todo = []
        for task in config.tasks(n):
            earlier = [r for r in rows if r["subject"] == task.subject]
            verdict = _not_run(task, earlier)
            if verdict:
                blank = {column: None for column in COLUMNS}
                rows.append({**blank, "subject": task.subject, "n": n, "d": task.d,
                             "status": verdict[0], "note": verdict[1]})
            else:
                todo.append(task)
        finished: dict[Task, dict] = {}

        def outcome(task: Task, result: Callable[[], dict]) -> None:
            finished[task] = result()
            row = finished[task]
            timing = f"{row['wall_s']:.2f} s" if row["wall_s"] is not None else row["note"]
            progress(f"[scale] N={task.n} {task.subject}: {row['status']} ({timing})")

        if address and todo:
            # the runner sends each job's input once; a measurement makes its own input, so
            # all it is sent is its size (Dask cannot scatter an empty mapping)
            sizes = {task.config: {"n": np.asarray(task.n)} for task in todo}
            run_on_cluster(address, todo, measure, sizes, outcome)
        else:
            for task in todo:
                outcome(task, lambda task=task: measure(task))
        rows.extend(finished[task] for task in todo)
    order = {subject: i for i, subject in enumerate((ENGINE, *config.methods))}
    return sorted(rows, key=lambda r: (order[r["subject"]], r["n"]))


def machine() -> dict[str, str]:
    """Where the times were measured: the CPU model, core count and the numeric settings."""
    from drfidelity.core import runtime

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": str(os.cpu_count()), **runtime.describe()}


def power_law_exponent(sizes, values) -> float:
    """Least-squares slope of log(value) on log(N): cost ~ N ** exponent."""
    import numpy as np

    x, y = np.log(np.asarray(sizes, float)), np.log(np.asarray(values, float))
    return float(np.polyfit(x, y, 1)[0])


def exponents(rows: list[dict]) -> list[dict]:
    """Per subject, the fitted exponent of wall time and of working memory (peak - base RSS,
    from :data:`MEMORY_FLOOR_MIB` up), with the sizes each fit used."""
    out = []
    subjects = list(dict.fromkeys(r["subject"] for r in rows))
    for subject in subjects:
        done = [r for r in rows if r["subject"] == subject and r["status"] == "ok"]
        series = {
            "wall time": [(r["n"], r["wall_s"]) for r in done if r["wall_s"] > 0],
            "working memory": [(r["n"], r["peak_rss_mib"] - r["base_rss_mib"]) for r in done
                               if r["peak_rss_mib"] - r["base_rss_mib"] >= MEMORY_FLOOR_MIB],
        }
        for quantity, points in series.items():
            fitted = len(points) >= 2
            out.append({"subject": subject, "quantity": quantity,
                        "exponent": power_law_exponent(*zip(*points)) if fitted else None,
                        "points": len(points),
                        "n_min": points[0][0] if points else None,
                        "n_max": points[-1][0] if points else None})
    return out


if __name__ == "__main__":
    _child_main(sys.argv[1:])
