"""``dvc repro`` with a readable log: ``[stage i/n]`` before each stage and a one-screen summary.

DVC's own output passes through unchanged; this adds, before each ``Running stage`` line, its
place in the run out of the stages DVC is going to run (``dvc repro --dry`` with the same
arguments says how many), and at the end one table: each stage that ran with its wall time,
how many were up to date, and what the stages skipped and why (a method left out by
``methods``, toorPIA without its maps, ...), each reason once with how often it came. The exit
status is dvc's.

``--stages K`` runs up to K stages at once. DVC runs one stage at a time, and most of a small
run's stages keep one core busy with their start-up; DVC's documented way to run independent
stages side by side is one ``dvc repro`` per stage, each holding the repository's lock only
while it reads the pipeline and writes ``dvc.lock``. So each stage here is its own
``dvc --wait-for-lock repro --single-item``, started once every stage it depends on (``dvc dag``)
has finished. Which stages run and what they write are what one ``dvc repro`` gives; the log
prefixes DVC's lines with their stage. Every stage of the run holds its memory at the same
time as up to K-1 others, so K > 1 suits small runs (kick-the-tires) more than the full
pipeline, whose embedding stages already use ``jobs`` cores each.

``--log FILE`` (with ``--stages``) writes the whole log to FILE and prints one line per stage
that ran (its place and wall time), a failed stage's last lines, and a summary whose skips are
grouped by reason across stages: what kick-the-tires shows.

``--keep-maps`` leaves the map stages (``embed``, ``study_embed``) out of the run: what
``make rescore`` does after the maps were restored from the map store. It refuses, in one line,
when one of them is not up to date, since their maps would then be missing or stale.

Usage: python tools/repro.py [--stages K [--log FILE]] [--keep-maps] [ARGS...]
       (ARGS as for ``dvc repro``, e.g. --force; with --stages K > 1 or --keep-maps, only
       --force and dvc.yaml paths)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import yaml

from drfidelity.jobs.times import record_stages

RUNNING = re.compile(r"^Running stage '([^']+)':")
UP_TO_DATE = re.compile(r"^Stage '([^']+)' didn't change, skipping")
#: an edge of ``dvc dag --dot``: the first stage's outputs are the second one's inputs
EDGE = re.compile(r'^"(?P<source>[^"]+)" -> "(?P<target>[^"]+)";$')
NODE = re.compile(r'^"(?P<stage>[^"]+)";$')
#: DVC's advice at the end of each ``dvc repro`` (git add dvc.lock, autostage, dvc push): with
#: stages side by side it comes once per stage, so it is kept for the end of the run
ADVICE = re.compile(r"^(To track the changes with git|\tgit add |To enable auto staging"
                    r"|\tdvc config core.autostage|Use `dvc push`)")
#: the stages that make maps (what the map store holds)
MAP_STAGES = ("embed", "study_embed")
#: a job or a study part left out, as the stages print it ("... skipped: <reason>", then the
#: progress fields of a job line)
SKIPPED = re.compile(r"^\[(?P<stage>[^\]]+)\] (?:\d+/\d+ )?.+? skipped: "
                     r"(?P<why>.+?)(?: \| elapsed .*)?$")


def planned(args: list[str]) -> list[str]:
    """The stages ``dvc repro ARGS`` will run: its dry run's, or, where the dry run stops at a
    stage whose inputs no earlier stage has made yet (a workspace without outputs, as in
    kick-the-tires), every stage ``dvc status`` finds changed (a frozen one is not)."""
    dry = subprocess.run(["dvc", "repro", "--dry", *args], capture_output=True, text=True)
    names = [m.group(1) for line in dry.stdout.splitlines() if (m := RUNNING.match(line))]
    if dry.returncode == 0:
        return names
    targets = [arg for arg in args if not arg.startswith("-")]
    status = subprocess.run(["dvc", "status", "--json", *targets], capture_output=True,
                            text=True)
    try:
        changed = [name.rpartition(":")[2] for name in json.loads(status.stdout)
                   if not name.endswith(".dvc")]
    except json.JSONDecodeError:
        return names
    frozen = {name.rpartition(":")[2] for name in frozen_stages(
        [target for target in targets or ["dvc.yaml"] if target.endswith("dvc.yaml")])}
    changed = [name for name in changed if name not in frozen]
    return changed if len(changed) > len(names) else names


def reason_key(why: str) -> str:
    """A skip reason without what varies between jobs (the paths it names), so it groups."""
    return re.sub(r"\S*/\S*", "<path>", why)


def summary(times: dict[str, float], up_to_date: int, skips: Counter, total: float,
            status: int, brief: bool = False) -> list[str]:
    """The run's last lines: time, stages, the slowest ones and the skips (``brief``: the five
    slowest, and each skip reason once across stages, cut to one line)."""
    lines = [f"repro: {'done' if status == 0 else f'FAILED (exit {status})'} in "
             f"{total / 60:.1f} min: {len(times)} stage(s) ran, {up_to_date} up to date"]
    shown = 5 if brief else 12
    for name, seconds in sorted(times.items(), key=lambda item: -item[1])[:shown]:
        lines.append(f"  {seconds:8.1f} s  {name}")
    if len(times) > shown:
        rest = sum(sorted(times.values(), reverse=True)[shown:])
        lines.append(f"  {rest:8.1f} s  the other {len(times) - shown} stages")
    if brief:
        jobs, stages = Counter(), {}
        for (stage, why), count in skips.items():
            jobs[why] += count
            stages.setdefault(why, set()).add(stage)
        for why, count in sorted(jobs.items()):
            head = f"  skipped {count}x in {len(stages[why])} stage(s): "
            lines.append(head + (why if len(head + why) <= 100 else why[:99 - len(head)] + "…"))
        return lines
    for (stage, why), count in sorted(skips.items())[:10]:
        lines.append(f"  skipped in {stage}: {why}" + (f" ({count}x)" if count > 1 else ""))
    if len(skips) > 10:
        lines.append(f"  ... and {len(skips) - 10} more skip reasons (see the log above)")
    return lines


def dvc_file(stage: str) -> str:
    """The dvc.yaml a stage of ``dvc dag`` or ``dvc status`` comes from (a bare name is the
    root's)."""
    return stage.rpartition(":")[0] or "dvc.yaml"


def dvc_output(*args: str) -> str:
    """What ``dvc ARGS`` prints; if it fails, DVC's last line of error ends the run."""
    done = subprocess.run(["dvc", *args], capture_output=True, text=True)
    if done.returncode != 0:
        why = (done.stderr.strip() or done.stdout.strip() or "no message").splitlines()[-1]
        raise SystemExit(f"repro: `dvc {' '.join(args)}` failed: {why}")
    return done.stdout


def pipeline_graph(files: list[str]) -> dict[str, set[str]]:
    """Each stage of the pipelines in ``files`` (in DVC's order) with the stages it reads from."""
    needs: dict[str, set[str]] = {}
    for line in map(str.strip, dvc_output("dag", "--dot").splitlines()):
        if match := NODE.match(line):
            needs.setdefault(match["stage"], set())
        elif match := EDGE.match(line):
            needs.setdefault(match["target"], set()).add(match["source"])
    return {stage: sources for stage, sources in needs.items() if dvc_file(stage) in files}


def frozen_stages(files: list[str]) -> set[str]:
    """The frozen stages of ``files``: DVC checks their outputs and never runs them."""
    return {name if file == "dvc.yaml" else f"{file}:{name}"
            for file in files
            for name, stage in yaml.safe_load(Path(file).read_text())["stages"].items()
            if stage.get("frozen")}


def stages_to_run(files: list[str], force: bool, needs: dict[str, set[str]]) -> list[str]:
    """What ``dvc repro [--force] FILES`` goes through, in DVC's order: with --force every
    stage; else every changed stage (``dvc status``) and every stage downstream of one, since
    what it reads is made again (DVC then skips the ones whose inputs came back the same)."""
    if force:
        return list(needs)
    status = json.loads(dvc_output("status", "--json", *files))
    chosen = with_downstream({name.removeprefix("dvc.yaml:") for name in status
                              if not name.endswith(".dvc")}, needs)
    return [stage for stage in needs if stage in chosen]


def with_downstream(stages: set[str], needs: dict[str, set[str]]) -> set[str]:
    """``stages`` and every stage that reads from one of them, at any depth."""
    chosen = set(stages)
    grew = True
    while grew:
        downstream = {stage for stage, sources in needs.items() if sources & chosen}
        grew = not downstream <= chosen
        chosen |= downstream
    return chosen


def is_map_stage(stage: str) -> bool:
    return stage.rpartition(":")[2].partition("@")[0] in MAP_STAGES


def stale_maps(files: list[str]) -> list[str]:
    """The map stages of ``files`` that ``dvc status`` does not find up to date."""
    status = json.loads(dvc_output("status", "--no-updates", "--json", *files) or "{}")
    return sorted(name for name in status if is_map_stage(name))


def run_side_by_side(plan: list[str], needs: dict[str, set[str]], force: bool, width: int,
                     count: int, log=None) -> tuple[dict[str, float], int, Counter, int]:
    """Run ``plan``'s stages, up to ``width`` at once, each as soon as the stages of the plan
    it reads from have finished; the one with the most stages downstream of it first. Echoes
    their logs line by line (to ``log`` when given, the terminal then getting a line per
    stage), numbering the stages that run out of ``count``, and returns (wall time per
    stage, stages up to date, skip reasons, exit status: the first failure's)."""
    def say(line: str, stage: str | None = None) -> None:
        if log is None:
            print(line, flush=True)
        else:
            log.write(line + "\n")
            if stage is not None:
                tails.setdefault(stage, []).append(line)
                del tails[stage][:-20]
    tails: dict[str, list[str]] = {}
    ended = 0
    waits_for = {stage: needs[stage] & set(plan) for stage in plan}
    readers = {stage: {reader for reader in plan if stage in waits_for[reader]} for stage in plan}

    @functools.cache
    def downstream(stage: str) -> frozenset:
        return frozenset(readers[stage]).union(*map(downstream, readers[stage]))

    waiting = sorted(plan, key=lambda stage: -len(downstream(stage)))
    lines: queue.Queue = queue.Queue()
    running: dict[str, tuple[subprocess.Popen, float]] = {}
    finished: set[str] = set()
    times: dict[str, float] = {}
    up_to_date, skips, status, started = 0, Counter(), 0, 0
    advice: dict[str, None] = {}

    def echo(stage: str, process: subprocess.Popen) -> None:
        for line in process.stdout:
            lines.put((stage, line))
        lines.put((stage, None))

    try:
        while waiting or running:
            ready = [stage for stage in waiting if waits_for[stage] <= finished]
            for stage in ready[:width - len(running)] if status == 0 else []:
                waiting.remove(stage)
                command = ["dvc", "--wait-for-lock", "repro", "--single-item",
                           *(["--force"] if force else []), stage]
                process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True, bufsize=1)
                running[stage] = (process, time.perf_counter())
                threading.Thread(target=echo, args=(stage, process), daemon=True).start()
            if not running:
                break  # a stage failed and the others have finished
            stage, line = lines.get()
            if line is None:
                process, since = running.pop(stage)
                finished.add(stage)
                if stage in times:
                    times[stage] = time.perf_counter() - since
                    ended += 1
                    say(f"[{stage}] done in {times[stage]:.1f} s")
                    if log is not None:
                        print(f"[{ended}/{max(count, ended)}] {stage:<48} {times[stage]:6.1f} s",
                              flush=True)
                if process.wait() != 0:
                    status = status or process.returncode
                    failed = f"[{stage}] FAILED (exit {process.returncode}); no new stage starts"
                    say(failed)
                    if log is not None:
                        print("\n".join(tails.get(stage, []) + [failed]), flush=True)
                elif stage not in times:
                    up_to_date += 1
                continue
            line = line.rstrip("\n")
            if ADVICE.match(line):
                advice[line] = None
                continue
            if RUNNING.match(line):
                started += 1
                times[stage] = 0.0
                say(f"[stage {started}/{max(count, started)}] {stage}")
            elif match := SKIPPED.match(line):
                skips[(match["stage"], reason_key(match["why"]))] += 1
            if line:
                named = line.startswith("[") or RUNNING.match(line) or UP_TO_DATE.match(line)
                say(line if named else f"[{stage}] {line}", stage)
    finally:
        for process, _ in running.values():
            process.terminate()
            process.wait()
    if advice:
        say("\n".join(advice))
    return times, up_to_date, skips, status


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--stages", type=int, default=1)
    parser.add_argument("--keep-maps", action="store_true")
    parser.add_argument("--log", type=Path)
    options, args = parser.parse_known_args(argv)
    if options.stages < 1:
        print("repro: --stages must be at least 1", file=sys.stderr)
        return 2
    if options.log is not None and options.stages == 1 and not options.keep_maps:
        print("repro: --log goes with --stages K or --keep-maps", file=sys.stderr)
        return 2
    if options.stages > 1 or options.keep_maps:
        files = [os.path.normpath(arg) for arg in args if arg != "--force"] or ["dvc.yaml"]
        if not all(file.endswith("dvc.yaml") and Path(file).is_file() for file in files):
            print(f"repro: --stages and --keep-maps run whole pipelines: give only --force and "
                  f"dvc.yaml paths, not {' '.join(args)}", file=sys.stderr)
            return 2
        start = time.perf_counter()
        needs = pipeline_graph(files)
        plan = stages_to_run(files, "--force" in args, needs)
        if options.keep_maps:
            stale = stale_maps(files)
            if stale:
                print(f"repro: --keep-maps, but {len(stale)} map stage(s) are not up to date "
                      f"({', '.join(stale[:3])}{' ...' if len(stale) > 3 else ''}): restore the "
                      "maps with `python tools/imports.py`, or recompute them with `make repro`",
                      file=sys.stderr)
                return 2
            plan = [stage for stage in plan if not is_map_stage(stage)]
        count = len(set(plan) - frozen_stages(files))
        with open(options.log, "w") if options.log else contextlib.nullcontext() as log:
            times, up_to_date, skips, status = run_side_by_side(
                plan, needs, "--force" in args, options.stages, count, log)
        up_to_date += len(needs) - len(plan)
        print("\n".join(summary(times, up_to_date, skips, time.perf_counter() - start,
                                status, brief=options.log is not None)), flush=True)
        if status == 0:
            record_stages(Path.cwd(), times)
        return status
    return one_dvc_repro(args)


def one_dvc_repro(args: list[str]) -> int:
    """``dvc repro ARGS``, its log numbered and summed up."""
    plan = planned(args)
    start = time.perf_counter()
    times: dict[str, float] = {}
    up_to_date, skips = 0, Counter()
    current, since = None, start
    with subprocess.Popen(["dvc", "repro", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, bufsize=1) as dvc:
        for line in dvc.stdout:
            if match := RUNNING.match(line):
                now = time.perf_counter()
                if current:
                    times[current] = now - since
                current, since = match.group(1), now
                # counted as they start: DVC's run order need not be its dry run's
                print(f"[stage {len(times) + 1}/{max(len(plan), len(times) + 1)}] {current}",
                      flush=True)
            elif UP_TO_DATE.match(line):
                up_to_date += 1
            elif match := SKIPPED.match(line.rstrip()):
                skips[(match["stage"], reason_key(match["why"]))] += 1
            sys.stdout.write(line)
            sys.stdout.flush()
    end = time.perf_counter()
    if current:
        times[current] = end - since
    print("\n".join(summary(times, up_to_date, skips, end - start, dvc.returncode)), flush=True)
    if dvc.returncode == 0:
        record_stages(Path.cwd(), times)
    return dvc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
