"""``dvc repro`` with a readable log: ``[stage i/n]`` before each stage and a one-screen summary.

DVC's own output passes through unchanged; this adds, before each ``Running stage`` line, its
place in the run out of the stages DVC is going to run (``dvc repro --dry`` with the same
arguments says how many), and at the end one table: each stage that ran with its wall time,
how many were up to date, and what the stages skipped and why (a method left out by
``methods``, toorPIA without its maps, ...), each reason once with how often it came. The exit
status is dvc's.

Usage: python tools/repro.py [ARGS...]     (ARGS as for ``dvc repro``, e.g. --force)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

RUNNING = re.compile(r"^Running stage '([^']+)':")
UP_TO_DATE = re.compile(r"^Stage '([^']+)' didn't change, skipping")
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
    frozen = {name for target in targets or ["dvc.yaml"] if target.endswith("dvc.yaml")
              for name, stage in yaml.safe_load(Path(target).read_text())["stages"].items()
              if stage.get("frozen")}
    changed = [name for name in changed if name not in frozen]
    return changed if len(changed) > len(names) else names


def reason_key(why: str) -> str:
    """A skip reason without what varies between jobs (the paths it names), so it groups."""
    return re.sub(r"\S*/\S*", "<path>", why)


def summary(times: dict[str, float], up_to_date: int, skips: Counter, total: float,
            status: int) -> list[str]:
    lines = [f"repro: {'done' if status == 0 else f'FAILED (exit {status})'} in "
             f"{total / 60:.1f} min: {len(times)} stage(s) ran, {up_to_date} up to date"]
    for name, seconds in sorted(times.items(), key=lambda item: -item[1])[:12]:
        lines.append(f"  {seconds:8.1f} s  {name}")
    if len(times) > 12:
        rest = sum(sorted(times.values(), reverse=True)[12:])
        lines.append(f"  {rest:8.1f} s  the other {len(times) - 12} stages")
    for (stage, why), count in sorted(skips.items())[:10]:
        lines.append(f"  skipped in {stage}: {why}" + (f" ({count}x)" if count > 1 else ""))
    if len(skips) > 10:
        lines.append(f"  ... and {len(skips) - 10} more skip reasons (see the log above)")
    return lines


def main(args: list[str]) -> int:
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
    return dvc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
