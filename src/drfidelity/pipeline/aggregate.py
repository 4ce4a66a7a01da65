"""Stage ``aggregate``: per-dataset run tables -> ``results/metrics_per_run.csv`` and
``results/metrics_aggregated.csv``; the per-dataset skipped-method, stability and bridge-gap
tables -> ``results/skipped_methods.csv``, ``stability.csv`` and ``bridge_gaps.csv``; the
per-dataset noise ceilings -> ``results/noise_ceiling.csv``.

The inputs are the explicit list derived from ``params.datasets``: a table left behind by a
dataset that was removed from params is never counted, and a missing one is an error.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from drfidelity.aggregation import aggregate_runs
from drfidelity.core.files import write_csv
from drfidelity.core.layout import (bridges_path, ceiling_path, per_run_path, results_dir,
                                    skipped_path, stability_path)
from drfidelity.core.params import Params
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def gather(params: Params, root: Path, path_of) -> pd.DataFrame:
    """The per-dataset tables at ``path_of(root, dataset)`` for the datasets of params, in
    order, as one table (header-only tables add no rows; a missing one is an error)."""
    tables = []
    for dataset in params.datasets:
        path = path_of(root, dataset)
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: run the stage that writes it (`dvc repro`)")
        tables.append(pd.read_csv(path, float_precision="round_trip"))
    rows = [t for t in tables if len(t)]
    return pd.concat(rows, ignore_index=True, sort=False) if rows else tables[0]


def run(params: Params, root: Path) -> None:
    per_run = gather(params, root, per_run_path)
    boot = params.bootstrap
    aggregated = aggregate_runs(per_run, n_boot=boot.n_boot, alpha=boot.alpha, seed=boot.seed)
    out = results_dir(root)
    write_csv(out / "metrics_per_run.csv", per_run)
    write_csv(out / "metrics_aggregated.csv", aggregated)
    write_csv(out / "skipped_methods.csv", gather(params, root, skipped_path))
    write_csv(out / "stability.csv", gather(params, root, stability_path))
    write_csv(out / "bridge_gaps.csv", gather(params, root, bridges_path))
    write_csv(out / "noise_ceiling.csv", gather(params, root, ceiling_path))
    print(f"[aggregate] {len(per_run)} runs -> {len(aggregated)} aggregated rows", flush=True)
