"""What a change costs: the stages an edit makes DVC rerun in both pipelines, and an estimate of
their rebuild time from the times the last rebuilds recorded (benchmarks/times/).

All edits run in one scratch clone of this checkout's HEAD, reset between edits, whose outputs
are checked out of the DVC cache as symlinks, so that DVC compares against real outputs. A stage
is *stale* when the edit changes what ``dvc status --no-updates --json`` says of it: DVC's own
answer, taken as a difference because a clone lacks the imports (toorPIA's maps), which DVC
reports before any edit. DVC reruns a stage downstream of a stale one only where what it reads
comes back different, which no status can tell before the rerun: the table counts those stages
apart, and the time with them is the upper bound ("up to").

The estimate adds the stages up as ``make repro`` runs them, one at a time. A map stage
(``embed``, ``supplement_embed``) takes max(sum of its jobs' seconds / ``jobs`` of its
pipeline's params.yaml, its longest job), with the jobs of its last recorded rebuild, each job's
seconds as recorded on this CPU model, else the scale study's fit time for its method at its N
(results/scale_runs.csv, log-log between sizes); a job's process start and DVC's own time are
not in it. Any other stage takes its recorded wall time, else the same stage's in the other
pipeline; a stage with neither is named, never guessed.

Usage: python benchmarks/bench_change.py [--cache DIR] [EDIT ...]
  --cache DIR  the DVC cache to check the outputs out of (default: this checkout's)
  EDIT         a path: a comment line is appended to it; KEY=VALUE: the root's params.yaml, KEY
               dotted (method_params.UMAP.n_neighbors=16). Default: docs/change_cost.md's table.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import ruamel.yaml
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
from repro import dvc_file, is_map_stage, pipeline_graph, with_downstream  # noqa: E402

from drfidelity.jobs import times  # noqa: E402
from drfidelity.jobs.memory import loglog  # noqa: E402

PIPELINES = ("dvc.yaml", "releases/v1.4.0/dvc.yaml")
EDITS = ("src/drfidelity/jobs/runner.py", "src/drfidelity/jobs/fresh.py",
         "src/drfidelity/methods/umap.py", "src/drfidelity/methods/toorpia.py",
         "src/drfidelity/metrics/engine.py", "src/drfidelity/datasets/clusters.py",
         "method_params.UMAP.n_neighbors=16")
SCALE_RUNS = REPO / "results" / "scale_runs.csv"


def run(folder: Path, *command: str) -> str:
    """What ``command`` prints in ``folder``; if it fails, its last line of error ends the run."""
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        why = (done.stderr.strip() or "no message").splitlines()[-1]
        raise SystemExit(f"bench_change: `{' '.join(command)}` failed: {why}")
    return done.stdout


def prepare(clone: Path, cache: str) -> list[str]:
    """Clone HEAD into ``clone`` and check its outputs out of ``cache`` as symlinks (nothing is
    copied and the clone never writes into the cache); return the outputs missing from it."""
    run(REPO, "git", "clone", "-q", str(REPO), str(clone))
    run(clone, "dvc", "cache", "dir", "--local", cache)
    run(clone, "dvc", "config", "--local", "cache.type", "symlink")
    done = subprocess.run(["dvc", "checkout"], cwd=clone, capture_output=True, text=True)
    # DVC names them between "ERROR: Checkout failed for following targets:" and its advice
    return [line for line in done.stderr.splitlines()
            if line and not line.startswith(("ERROR", "WARNING", "Is your cache", "<http"))]


def status(clone: Path) -> dict[str, str]:
    """Each stage of both pipelines (named as ``dvc dag`` names them) with what ``dvc status``
    says of it, as comparable text."""
    found = {}
    for pipeline in PIPELINES:
        report = json.loads(run(clone, "dvc", "status", "--no-updates", "--json", pipeline)
                            or "{}")
        found |= {name.removeprefix("dvc.yaml:"): json.dumps(entries, sort_keys=True)
                  for name, entries in report.items() if not name.endswith(".dvc")}
    return found


def apply(clone: Path, edit: str) -> None:
    """Append a comment line to the file ``edit``, or set ``KEY=VALUE`` in the root's
    params.yaml (a round trip that keeps its comments; DVC compares the values)."""
    key, equals, value = edit.partition("=")
    if not equals:
        if not (clone / edit).is_file():
            raise SystemExit(f"bench_change: {edit} is no file of the repository")
        with (clone / edit).open("a") as source:
            source.write("# a comment\n")
        return
    document = ruamel.yaml.YAML()
    document.indent(mapping=2, sequence=4, offset=2)  # params.yaml's own layout
    params = document.load(clone / "params.yaml")
    *parents, last = key.split(".")
    node = params
    for part in parents:
        node = node[part]
    if last not in node:
        raise SystemExit(f"bench_change: params.yaml has no {key}")
    node[last] = yaml.safe_load(value)
    document.dump(params, clone / "params.yaml")


def scale_study() -> dict[str, tuple[tuple[int, float], ...]]:
    """Method -> its measured (N, wall seconds) in the scale study, N ascending."""
    measured: dict[str, list[tuple[int, float]]] = {}
    with SCALE_RUNS.open(newline="") as file:
        for row in csv.DictReader(file):
            if row["status"] == "ok" and row["subject"] != "metric engine":
                measured.setdefault(row["subject"], []).append((int(row["n"]),
                                                                float(row["wall_s"])))
    return {method: tuple(sorted(sizes)) for method, sizes in measured.items()}


class Estimate:
    """Stage seconds from the recorded times, remembering where each came from."""

    def __init__(self, workers: dict[str, int]) -> None:
        self.cpu, self.workers = times.cpu_model(), workers
        self.jobs: dict[tuple[str, str], list[dict[str, str]]] = {}
        for row in times.read(REPO / times.JOBS):
            self.jobs.setdefault((row["pipeline"], row["stage"]), []).append(row)
        self.stages = {(row["pipeline"], row["stage"]): float(row["seconds"])
                       for row in times.read(REPO / times.STAGES) if row["cpu"] == self.cpu}
        self.scale = scale_study()
        self.from_jobs: set[str] = set()
        self.from_stages: set[str] = set()
        self.from_other: set[str] = set()
        self.fallbacks: set[str] = set()
        self.unknown: set[str] = set()

    def job(self, row: dict[str, str]) -> float | None:
        """A job's seconds: as recorded on this CPU model, else the scale study's."""
        if row["cpu"] == self.cpu:
            return float(row["seconds"])
        if row["method"] not in self.scale:
            return None
        self.fallbacks.add(f"{row['method']} at N = {row['n']}")
        return loglog(self.scale[row["method"]], int(row["n"]))

    def stage(self, name: str) -> float | None:
        """The seconds of stage ``name`` (as ``dvc dag`` names it); None without a record."""
        key = (dvc_file(name), name.rpartition(":")[2])
        seconds = [self.job(row) for row in self.jobs.get(key, [])]
        if is_map_stage(name) and seconds and None not in seconds:
            self.from_jobs.add(name)
            return max(sum(seconds) / self.workers[key[0]], max(seconds))
        for pipeline in (key[0], *PIPELINES):  # its own record, else the other pipeline's
            if (pipeline, key[1]) in self.stages:
                (self.from_stages if pipeline == key[0] else self.from_other).add(name)
                return self.stages[(pipeline, key[1])]
        self.unknown.add(name)
        return None

    def total(self, stages: set[str]) -> str:
        found = [self.stage(name) for name in sorted(stages)]
        known = duration(sum(seconds for seconds in found if seconds is not None))
        return known + (f" + {found.count(None)} unknown" if None in found else "")

    def sources(self) -> str:
        return (f"{len(self.from_jobs)} map stages from their jobs' times and "
                f"{len(self.from_stages)} stages from their wall times recorded on {self.cpu} "
                f"(benchmarks/times/), {len(self.from_other)} from the same stage's in the "
                "other pipeline"
                + ("; from the scale study (fit time only, no process start): "
                   + ", ".join(sorted(self.fallbacks)) if self.fallbacks else "")
                + (f"; no record: {', '.join(sorted(self.unknown))}" if self.unknown else ""))


def duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return f"{seconds:.0f} s"
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def label(edit: str) -> str:
    key, equals, value = edit.partition("=")
    return f"`{key}` = {value}" if equals else f"comment in `{edit.removeprefix('src/')}`"


def row(edit: str, stale: set[str], reruns: set[str], estimate: Estimate) -> str:
    """The table's row of ``edit``: per pipeline, its stale stages and those downstream."""
    mine = {pipeline: {name for name in stale if dvc_file(name) == pipeline}
            for pipeline in PIPELINES}
    upto = {pipeline: {name for name in reruns if dvc_file(name) == pipeline}
            for pipeline in PIPELINES}
    cells = [label(edit)]
    cells += [f"{len(mine[p])} (+{len(upto[p] - mine[p])})" for p in PIPELINES]
    cells.append(" / ".join(str(sum(map(is_map_stage, mine[p]))) for p in PIPELINES))
    cells += [f"{estimate.total(mine[p])} (up to {estimate.total(upto[p])})" for p in PIPELINES]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("edits", nargs="*", default=list(EDITS))
    parser.add_argument("--cache", help="the DVC cache to check out from (default: this "
                        "checkout's)")
    options = parser.parse_args(argv)
    edits, cache = options.edits, options.cache or run(REPO, "dvc", "cache", "dir").strip()
    head = run(REPO, "git", "log", "-1", "--format=%h %cs").split()
    lines = ["| edit | stale (+ downstream), root | stale (+ downstream), v1.4.0 | map stages "
             "stale, root / v1.4.0 | estimated rebuild, root | estimated rebuild, v1.4.0 |",
             "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="bench-change-") as scratch:
        clone = Path(scratch) / "clone"
        missing = prepare(clone, cache)
        workers = {pipeline: yaml.safe_load(
            (clone / Path(pipeline).parent / "params.yaml").read_text())["jobs"]
            for pipeline in PIPELINES}
        estimate = Estimate(workers)
        with contextlib.chdir(clone):
            needs = pipeline_graph(list(PIPELINES))
        before = status(clone)
        for edit in edits:
            apply(clone, edit)
            after = status(clone)
            run(clone, "git", "reset", "--hard", "-q")
            stale = {name for name in needs if after.get(name) != before.get(name)}
            lines.append(row(edit, stale, with_downstream(stale, needs), estimate))
    lines += ["", f"Commit {head[0]} ({head[1]}). Stale: the stages whose `dvc status "
              f"--no-updates` the edit changed, in a clone on the DVC cache {cache}"
              + (f" (not in it: {', '.join(missing)})" if missing else "")
              + "; (+ n): the stages downstream of them, which DVC reruns only where what they "
              "read comes back different (`up to` counts them).",
              f"Estimated rebuild on this machine ({os.cpu_count()} cores): one stage at a "
              "time, map stages at `jobs` = "
              + ", ".join(f"{workers[p]} ({p})" for p in PIPELINES) + "; "
              + estimate.sources() + "."]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
