"""The paper's compute-cost table, from the run times the last rebuild recorded.

``benchmarks/times/jobs.csv`` holds one row per map job (pipeline, stage, method, seed, input,
points, seconds, CPU) and ``benchmarks/times/stages.csv`` one row per stage (wall seconds,
CPU), both written by the pipeline as it runs. Times depend on the machine, so they are records
beside the pipeline, not outputs of it (a rebuild would never give the same bytes): this
tool, which ``make paper`` runs before LaTeX, turns them into ``paper/compute_cost.tex``, a
table per method of the main benchmark's and the studies' map time, and one line per kind of
stage. The caption names the CPUs the times were recorded on.

Usage: python3 tools/compute_cost.py [--times benchmarks/times] [--out paper/compute_cost.tex]
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections import defaultdict
from pathlib import Path

#: the pipeline whose times the table shows: the checkout's (v1.3.0's configuration); the
#: release reuses most of its maps, so its own job times are mostly 0 s
PIPELINE = "dvc.yaml"
#: stage kinds that make maps, and the part of the table each belongs to
MAP_KINDS = {"embed": "main", "study_embed": "studies"}


def read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if row["pipeline"] == PIPELINE]


def method_rows(jobs: list[dict[str, str]]) -> list[tuple[str, dict[str, list[float]]]]:
    """Per method, in order of first appearance: the seconds of its jobs by part (main
    benchmark, studies)."""
    found: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for job in jobs:
        part = MAP_KINDS.get(job["stage"].split("@")[0])
        if part:
            found[job["method"]][part].append(float(job["seconds"]))
    return list(found.items())


def stage_totals(stages: list[dict[str, str]]) -> dict[str, tuple[int, float]]:
    """Per kind of stage (the name before ``@``): how many stages and their summed wall
    seconds."""
    totals: dict[str, list] = {}
    for stage in stages:
        entry = totals.setdefault(stage["stage"].split("@")[0], [0, 0.0])
        entry[0] += 1
        entry[1] += float(stage["seconds"])
    return {kind: (count, seconds) for kind, (count, seconds) in totals.items()}


def duration(seconds: float) -> str:
    """Seconds as a short text: 0.04 s, 4.2 s, 3.5 min, 1.25 h."""
    if seconds < 1:
        return f"{seconds:.2f}\\,s"
    if seconds < 60:
        return f"{seconds:.1f}\\,s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}\\,min"
    return f"{seconds / 3600:.2f}\\,h"


def percent(share: float) -> str:
    return f"{100 * share:.0f}\\%"


def escape(text: str) -> str:
    return text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&")


def heaviest(jobs: list[dict[str, str]], count: int = 2) -> list[tuple[str, float]]:
    """The ``count`` methods whose map jobs take the most seconds in all, with their share of
    every map job's seconds."""
    totals = {method: sum(sum(seconds) for seconds in parts.values())
              for method, parts in method_rows(jobs)}
    whole = sum(totals.values()) or 1.0
    return [(method, seconds / whole) for method, seconds in
            sorted(totals.items(), key=lambda item: -item[1])[:count]]


def latex(jobs: list[dict[str, str]], stages: list[dict[str, str]]) -> str:
    """Macros for the prose (``\\ComputeHeaviest``: the two costliest methods and their share
    of the map time; ``\\ComputeMapShare``: the map stages' share of all stage time), then the
    table float: methods (maps, median and total per part), then the stage kinds."""
    top = heaviest(jobs)
    walls = stage_totals(stages)
    total = sum(seconds for _, seconds in walls.values())
    maps = sum(walls.get(kind, (0, 0.0))[1] for kind in MAP_KINDS)
    names = " and ".join(escape(method) for method, _ in top)
    lines = [f"\\newcommand{{\\ComputeHeaviest}}{{{names} "
             f"({percent(sum(share for _, share in top))} of the map jobs' time)}}",
             f"\\newcommand{{\\ComputeMapShare}}{{{percent(maps / (total or 1.0))}}}",
             r"\begin{table}[tbp]\centering\small",
             r"\begin{tabular}{lrrrrr}", r"\toprule",
             r" & \multicolumn{3}{c}{main benchmark} & \multicolumn{2}{c}{studies} \\",
             r"\cmidrule(lr){2-4}\cmidrule(lr){5-6}",
             r"method & maps & median per map & total & maps & total \\", r"\midrule"]
    for method, parts in method_rows(jobs):
        main, studies = parts.get("main", []), parts.get("studies", [])
        cells = ([str(len(main)), duration(statistics.median(main)), duration(sum(main))]
                 if main else ["--"] * 3)
        cells += [str(len(studies)), duration(sum(studies))] if studies else ["--"] * 2
        lines.append(f"{escape(method)} & {' & '.join(cells)} \\\\")
    lines += [r"\midrule", r"stage & \multicolumn{2}{r}{stages} & wall & & \\", r"\midrule"]
    for kind, (count, seconds) in sorted(stage_totals(stages).items(),
                                         key=lambda item: -item[1][1]):
        lines.append(f"\\texttt{{{escape(kind)}}} & \\multicolumn{{2}}{{r}}{{{count}}} & "
                     f"{duration(seconds)} & & \\\\")
    cpus = sorted({row["cpu"] for row in jobs + stages})
    lines += [r"\bottomrule", r"\end{tabular}",
              r"\caption{Compute cost of the pipeline (\texttt{dvc.yaml}, the previous "
              r"release's configuration), from the times its last rebuild of each stage "
              r"recorded (\texttt{benchmarks/times/}). Top: per method, the map jobs of the "
              r"main benchmark (one per dataset and seed) and of the studies, each job one "
              r"process on one core; a toorPIA job reads stored maps. Bottom: the stages' "
              f"wall time by kind, {duration(total)} in all, with map stages running "
              r"\texttt{jobs} jobs side by side. Recorded on "
              f"{escape(', '.join(cpus))} (2 cores); times on another machine differ, and "
              r"records made while the machine was shared carry its load.}",
              r"\label{tab:compute}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=Path, default=Path("benchmarks/times"))
    parser.add_argument("--out", type=Path, default=Path("paper/compute_cost.tex"))
    args = parser.parse_args(argv)
    jobs, stages = read(args.times / "jobs.csv"), read(args.times / "stages.csv")
    args.out.write_text(latex(jobs, stages), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
