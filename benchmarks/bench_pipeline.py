"""Where the time of the two exploring runs goes: `make kick` and the quick profile's `dvc exp run`.

  python benchmarks/bench_pipeline.py [--only kick|quick] [--cold-only] [--keep DIR]

Both run side by side in one call, each twice in a throwaway copy (tools/throwaway-copy.sh):

* kick: cold is tools/kick-the-tires.sh itself (what `make kick` runs after the venv step:
  the copy, the kick profile, every stage, the up-to-date check, judged against the goal:
  `make kick` always starts from a new copy); warm is `python tools/repro.py --force` in the
  same copy right after (every stage again, with the copy's full lock to rewrite).
* quick: the copy shares this checkout's DVC cache, as a researcher's checkout has its cache;
  cold is the first `dvc exp run` of the quick profile there, warm the next experiment
  (UMAP's min_dist changed), so the same stages run again with everything loaded once.

Each stage's wall time is split into DVC (its window in DVC's log, from "Running stage" to
"Updating lock file", less its command's lifetime), start-up, compile and compute: the
command's lifetime shared out in proportion to the CPU seconds that
benchmarks/stage_probe/sitecustomize.py records in the stage's process and its descendants (its
forkserver and the job processes forked from it): interpreter start and imports; numba
compiles; the rest, numba cache loads included. DVC's time outside the stages (collecting the
pipeline, between stages, the experiment's commit) and, in kick's cold run, the copy count as
DVC. The stage processes' CPU seconds by part are printed too: on a loaded machine they say
more than the wall times. The script ends with the table that docs/performance.md,
"Exploring runs", reports.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).resolve().parent / "stage_probe"
GOALS = {"kick": 120.0, "quick": 60.0}
#: how tools/kick-the-tires.sh runs its stages; the warm kick runs them the same way
KICK_SIDE_BY_SIDE = ("--stages", "2")
PARTS = ("dvc", "start-up", "compile", "compute")


def profile_args(profile: str, action: str, cwd: Path) -> list[str]:
    done = subprocess.run([sys.executable, "tools/profiles.py", action, profile], cwd=cwd,
                          check=True, capture_output=True, text=True)
    return done.stdout.split()


def timed_run(command: list[str], cwd: Path, probe_log: Path) -> tuple[float, list]:
    """Run ``command`` with the probe on, echo its output, and return its wall time and its
    output lines stamped with the Unix time they arrived."""
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "DRFIDELITY_BENCH_LOG": str(probe_log),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(PROBE),
                                                       os.environ.get("PYTHONPATH")]))}
    print(f"$ {shlex.join(command)}   (in {cwd})", flush=True)
    lines, start = [], time.time()
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, bufsize=1) as process:
        for line in process.stdout:
            lines.append((time.time(), line.rstrip("\n")))
            sys.stdout.write(line)
    if process.returncode:
        raise SystemExit(f"{shlex.join(command)} failed (exit {process.returncode})")
    return time.time() - start, lines


def stage_windows(lines: list) -> dict[str, tuple[float, float, list[str]]]:
    """Each stage's (start, end, command's arguments): from its "Running stage" line to its
    "Updating lock file" line (DVC writes none when the lock does not change), else to the
    next stage's start. With stages side by side (tools/repro.py --stages), DVC's lines that
    do not name their stage carry it as a "[stage] " prefix, and the window ends at the
    tool's "[stage] done in" line, once DVC has exited."""
    windows: dict[str, list] = {}
    current = None
    for stamp, line in lines:
        if line.startswith("Running stage '"):
            if current and windows[current][1] is None:
                windows[current][1] = stamp
            current = line.split("'")[1]
            windows[current] = [stamp, None, []]
            continue
        name, _, rest = line[1:].partition("] ") if line.startswith("[") else (current, "", line)
        if name not in windows:
            continue
        if rest.startswith("> "):
            windows[name][2] = rest[2:].split()[1:]
        elif rest.startswith(("Updating lock file", "done in ")):
            windows[name][1] = stamp
    last = lines[-1][0] if lines else 0.0
    return {name: (start, last if end is None else end, args)
            for name, (start, end, args) in windows.items()}


def stage_cpu(window: tuple[float, float, list[str]], records: list[dict]) -> tuple[dict, float]:
    """CPU seconds by part of the stage's process and its descendants (its forkserver and the
    job processes forked from it), and the stage process's lifetime (0 when the probe saw no
    stage process in the window)."""
    start, end, args = window
    main = [r for r in records if start - 1 <= r["start"] <= end
            and (r["command"][-len(args):] == args if args else r["command"][1:2] == ["stage"])]
    cpu = dict.fromkeys(PARTS[1:], 0.0)
    if not main:
        return cpu, 0.0
    family = {main[0]["pid"]}  # the stage, its forkserver and the jobs forked from it
    for r in sorted(records, key=lambda r: r["start"]):
        if r["ppid"] in family and start - 1 <= r["start"] <= end:
            family.add(r["pid"])
    for r in records:
        if r["pid"] in family:
            startup = r["boot"] + r["imports"] - r["compile_in_imports"]
            cpu["start-up"] += startup
            cpu["compile"] += r["compile"]
            cpu["compute"] += max(r["cpu"] - startup - r["compile"], 0.0)
    return cpu, min(main[0]["end"], end) - main[0]["start"]


def split_stage(window: tuple[float, float, list[str]], cpu: dict,
                lifetime: float) -> dict[str, float]:
    """The stage's wall seconds by part: DVC outside the stage process, the process's
    lifetime shared out in proportion to ``cpu``."""
    total_cpu = sum(cpu.values()) or 1.0
    parts = {part: lifetime * cpu[part] / total_cpu for part in PARTS[1:]}
    return {"dvc": (window[1] - window[0]) - lifetime, **parts}


def account(wall: float, lines: list, probe_log: Path) -> dict:
    """One run's wall time by part and by stage, and the stage processes' CPU seconds."""
    records = [json.loads(line) for line in probe_log.read_text().splitlines()] \
        if probe_log.exists() else []
    stages, cpu = {}, dict.fromkeys(PARTS[1:], 0.0)
    for name, window in stage_windows(lines).items():
        stage_seconds, lifetime = stage_cpu(window, records)
        stages[name] = split_stage(window, stage_seconds, lifetime)
        for part, seconds in stage_seconds.items():
            cpu[part] += seconds
    totals = {part: sum(stage[part] for stage in stages.values()) for part in PARTS}
    # DVC's time outside the stages: the run's wall time less the stages' (which overlap when
    # they run side by side, so this is clipped at 0)
    totals["dvc"] += max(wall - sum(sum(stage.values()) for stage in stages.values()), 0.0)
    return {"wall": wall, "parts": totals, "stages": stages, "cpu": cpu,
            "load": os.getloadavg()[0]}


def bench_kick(work: Path, warm: bool) -> dict:
    copy = work / "kick"
    runs = {}
    wall, lines = timed_run(["bash", str(REPO / "tools" / "kick-the-tires.sh"), str(copy)], REPO,
                            work / "kick-cold.jsonl")
    runs["cold"] = account(wall, lines, work / "kick-cold.jsonl")
    if not warm:
        return runs
    wall, lines = timed_run([sys.executable, "tools/repro.py", *KICK_SIDE_BY_SIDE, "--force"],
                            copy, work / "kick-warm.jsonl")
    runs["warm"] = account(wall, lines, work / "kick-warm.jsonl")
    return runs


def bench_quick(work: Path, warm: bool) -> dict:
    copy = work / "quick"
    subprocess.run(["bash", str(REPO / "tools" / "throwaway-copy.sh"), "--share-cache",
                    str(copy)], check=True)
    flags, targets = profile_args("quick", "flags", copy), profile_args("quick", "targets", copy)
    runs = {}
    states = (("cold", []), ("warm", ["-S", "method_params.UMAP.min_dist=0.2"]))
    for state, extra in states[:2 if warm else 1]:
        log = work / f"quick-{state}.jsonl"
        wall, lines = timed_run(["dvc", "exp", "run", *flags, *extra, *targets], copy, log)
        runs[state] = account(wall, lines, log)
    return runs


def describe(run: dict) -> str:
    parts = run["parts"]
    cpu = run["cpu"]
    return (f"{run['wall']:.0f} s (DVC {parts['dvc']:.0f}, start-up {parts['start-up']:.0f}, "
            f"compile {parts['compile']:.0f}, compute {parts['compute']:.0f}; stage processes' "
            f"CPU: start-up {cpu['start-up']:.1f}, compile {cpu['compile']:.1f}, compute "
            f"{cpu['compute']:.1f}; load {run['load']:.1f})")


def report(results: dict) -> None:
    for target, runs in results.items():
        for state, run in runs.items():
            print(f"\n{target} {state}: {describe(run)}; by stage (s):")
            stages = sorted(run["stages"].items(), key=lambda s: -sum(s[1].values()))
            for name, parts in stages:
                print(f"  {sum(parts.values()):7.1f}  {name:40s} " +
                      " ".join(f"{part} {parts[part]:.1f}" for part in PARTS))
    print("\n| target | goal | cold | warm | compute share | met |")
    print("|---|---|---|---|---|---|")
    names = {"kick": "`make kick` (every stage, small data)",
             "quick": "`dvc exp run` of the quick profile (clusters x PCA + UMAP)"}
    for target, runs in results.items():
        last = runs.get("warm", runs["cold"])
        share = last["parts"]["compute"] / last["wall"]
        # `make kick` always starts cold (a new copy, no lock), so its goal is on the cold run;
        # a researcher's experiments run warm as often as cold, so the quick profile's on both
        judged = [runs["cold"]] if target == "kick" else list(runs.values())
        met = max(run["wall"] for run in judged) <= GOALS[target] and \
            (target != "quick" or share >= 0.5)
        warm = describe(runs["warm"]) if "warm" in runs else "not run"
        print(f"| {names[target]} | <= {GOALS[target]:.0f} s | {describe(runs['cold'])} | "
              f"{warm} | {share:.0%} | {'yes' if met else 'no'} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("kick", "quick"),
                        help="measure one target (default: both)")
    parser.add_argument("--cold-only", action="store_true",
                        help="skip the warm runs (each target's second run)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="work in DIR (new or empty) and keep it; default: a temporary "
                             "folder, removed at the end")
    args = parser.parse_args(argv)
    if args.keep and args.keep.exists() and any(args.keep.iterdir()):
        print(f"bench_pipeline.py: {args.keep} is not empty", file=sys.stderr)
        return 2
    targets = [args.only] if args.only else ["kick", "quick"]
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        work = (args.keep or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        bench = {"kick": bench_kick, "quick": bench_quick}
        results = {target: bench[target](work, not args.cold_only) for target in targets}
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
