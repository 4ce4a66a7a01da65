"""One screen that compares experiments: the params they changed and their headline metrics.

``dvc exp show`` puts every params key, metric and dependency hash of the project in its own
column (about 2,000 characters wide here), and keeps the committed run's metrics in an
experiment that did not write them. This reads ``dvc exp show --json`` and prints the
experiments of the current commit as columns, next to the commit itself (the baseline):

* the params whose values differ between any two of them (dotted keys), and nothing else;
* the headline metrics of ``results/headline.json``: per method its mean full ρ and its Σ,
  per dataset the Σ leader. A method an experiment did not run shows ``-``: since the
  ``headline`` stage writes the whole file, an experiment never shows the baseline's values
  as its own.

As many of the newest experiments as fit the width are shown (``--width``, default 120); the
last line says how many were left out. Queued, running and failed experiments are named as
such.

Usage: python tools/exps.py [--width COLUMNS] [--json FILE]   (``make exps``)
       python tools/exps.py --run results/headline.json       (one run's metrics alone)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

METRICS = "results/headline.json"
PARAMS = "params.yaml"
#: the label column and the width of one experiment's column
LABEL, CELL = 32, 12


def flatten(tree, prefix: str = "") -> dict[str, object]:
    """Dotted keys to leaves; a list is one leaf."""
    if not isinstance(tree, dict):
        return {prefix: tree}
    found = {}
    for key, value in tree.items():
        found.update(flatten(value, f"{prefix}{key}." if isinstance(value, dict) else
                             f"{prefix}{key}"))
    return found


def _file(rev: dict, path: str) -> dict:
    data = rev.get("data") or {}
    for kind in ("params", "metrics"):
        entry = (data.get(kind) or {}).get(path)
        if entry is not None:
            return entry.get("data") or {}
    return {}


def columns(show: list[dict]) -> tuple[list[dict], int]:
    """The baseline (the commit) and its experiments, newest first, from
    ``dvc exp show --json``; each ``{"name", "state", "params", "metrics"}``. Also how many
    experiments there are."""
    commit = next((row for row in show if row.get("rev") != "workspace"), None)
    if commit is None:
        return [], 0
    found = [{"name": commit.get("name") or commit["rev"][:7], "state": "baseline",
              "params": flatten(_file(commit, PARAMS)), "metrics": _file(commit, METRICS)}]
    for experiment in commit.get("experiments") or []:
        rev = experiment["revs"][0]
        executor = (experiment.get("executor") or {}).get("state")
        state = ("failed" if rev.get("error") or executor == "failed"
                 else executor if executor in ("queued", "running") else "done")
        found.append({"name": experiment.get("name") or rev.get("name") or rev["rev"][:7],
                      "state": state, "params": flatten(_file(rev, PARAMS)),
                      "metrics": _file(rev, METRICS)})
    return found, len(found) - 1


def short(value, width: int = CELL - 1) -> str:
    """A cell: floats to 3 decimals, lists joined by commas, cut to ``width`` with '…'."""
    if value is None:
        text = "-"
    elif isinstance(value, float):
        text = f"{value:.3f}"
    elif isinstance(value, list):
        text = ",".join(str(item) for item in value)
    else:
        text = str(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def rows(shown: list[dict]) -> list[tuple[str, list[str]]]:
    """The table's rows: (label, one cell per column); a label without cells is a heading."""
    changed = sorted({key for column in shown for key in column["params"]
                      if len({json.dumps(c["params"].get(key), sort_keys=True)
                              for c in shown}) > 1})
    table: list[tuple[str, list[str]]] = [("", [c["name"] for c in shown]),
                                          ("", [c["state"] for c in shown])]
    table.append(("params (changed)" if changed else "params (none changed)", []))
    table += [(f"  {key}", [short(c["params"].get(key)) for c in shown]) for key in changed]
    methods = list(dict.fromkeys(method for c in shown for method in c["metrics"]
                                 if method != "winner"))
    for field, heading in (("full_rho", "full ρ (mean over datasets)"),
                           ("sigma", "Σ (summed over datasets)")):
        table.append((heading, []))
        table += [(f"  {method}", [short((c["metrics"].get(method) or {}).get(field))
                                   for c in shown]) for method in methods]
    datasets = list(dict.fromkeys(d for c in shown for d in c["metrics"].get("winner") or {}))
    table.append(("Σ leader", []))
    table += [(f"  {dataset}", [short((c["metrics"].get("winner") or {}).get(dataset))
                                for c in shown]) for dataset in datasets]
    return table


def one_run(path: Path) -> str:
    """One run's ``results/headline.json`` as a ranking (what kick-the-tires ends on): the
    methods by Σ, then full ρ, and each dataset's Σ leader."""
    metrics = json.loads(path.read_text())
    leaders = metrics.pop("winner", {})
    order = sorted(metrics, key=lambda m: (-metrics[m]["sigma"], -metrics[m]["full_rho"]))
    lines = [f"{'method':<10}{'Σ':>5}{'full ρ':>9}   (Σ: ranking points summed over the "
             f"datasets; full ρ: mean over them)"]
    lines += [f"{method:<10}{metrics[method]['sigma']:>5}{metrics[method]['full_rho']:>9.3f}"
              for method in order]
    lines.append("Σ leader: " + " · ".join(f"{d} {m}" for d, m in leaders.items()))
    return "\n".join(lines)


def render(found: list[dict], total: int, width: int) -> str:
    fits = max(1, (width - LABEL) // CELL - 1)  # experiment columns beside the baseline
    shown = found[:1] + found[1:1 + fits]
    lines = [f"{short(label, LABEL - 1):<{LABEL}}" + "".join(f"{cell:>{CELL}}" for cell in cells)
             if cells else label for label, cells in rows(shown)]  # a heading is never cut
    lines = [line.rstrip() for line in lines]
    if total == 0:
        lines.append("no experiments of this commit yet: `dvc exp run ...` (docs/pipeline.md)")
    elif total > len(shown) - 1:
        lines.append(f"{total - (len(shown) - 1)} older experiments not shown "
                     f"(wider: --width; all: dvc exp show)")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="Compare the current commit's experiments on one screen: changed params "
                    "and headline metrics (results/headline.json).")
    parser.add_argument("--width", type=int, default=120,
                        help="the screen's width in characters (default 120)")
    parser.add_argument("--json", type=Path,
                        help="read this `dvc exp show --json` output instead of running it")
    parser.add_argument("--run", type=Path, metavar="HEADLINE",
                        help="show one run's results/headline.json instead (no experiments)")
    args = parser.parse_args(argv)
    if args.run is not None:
        print(one_run(args.run))
        return 0
    if args.json is not None:
        text = args.json.read_text()
    else:
        shown = subprocess.run(["dvc", "exp", "show", "--json"], capture_output=True, text=True)
        if shown.returncode != 0:
            last = (shown.stderr.strip().splitlines() or ["no message"])[-1]
            print(f"exps.py: dvc exp show failed: {last}", file=sys.stderr)
            return 2
        text = shown.stdout
    found, total = columns(json.loads(text))
    if not found:
        print("exps.py: no commit in `dvc exp show`", file=sys.stderr)
        return 2
    print(render(found, total, args.width))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
