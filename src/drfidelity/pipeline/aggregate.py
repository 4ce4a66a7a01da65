"""Stage ``aggregate``: per-dataset run tables -> ``results/metrics_per_run.csv`` and
``results/metrics_aggregated.csv``.

The inputs are the explicit list derived from ``params.datasets``: a table left behind by a
dataset that was removed from params is never counted, and a missing one is an error.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from drfidelity.aggregation import aggregate_runs
from drfidelity.pipeline.files import write_csv
from drfidelity.pipeline.params import Params
from drfidelity.pipeline.score import per_run_path, skipped_path


def results_dir(root: Path) -> Path:
    return root / "results"


def run(params: Params, root: Path) -> None:
    tables, skipped = [], []
    for dataset in params.datasets:
        path = per_run_path(root, dataset)
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: run `dvc repro score@{dataset}`")
        tables.append(pd.read_csv(path, float_precision="round_trip"))
        skipped.append(pd.read_csv(skipped_path(root, dataset)))
    per_run = pd.concat(tables, ignore_index=True, sort=False)
    boot = params.bootstrap
    aggregated = aggregate_runs(per_run, n_boot=boot.n_boot, alpha=boot.alpha, seed=boot.seed)
    out = results_dir(root)
    write_csv(out / "metrics_per_run.csv", per_run)
    write_csv(out / "metrics_aggregated.csv", aggregated)
    write_csv(out / "skipped_methods.csv", pd.concat(skipped, ignore_index=True))
    print(f"[aggregate] {len(per_run)} runs -> {len(aggregated)} aggregated rows", flush=True)
