"""Stage ``headline``: ``results/metrics_aggregated.csv`` -> the DVC metrics file
``results/headline.json`` (per method: Σ summed over the datasets it ran on and the mean of its
full ρ medians; per dataset the Σ leader) and the same per-method numbers as the DVC plot
``results/headline.csv`` (one bar per method and experiment in ``dvc plots diff``).

A stage of its own, right after ``aggregate``, so that an experiment which stops at the
ranking table (the quick profile) writes the metrics it changed: ``dvc metrics diff`` and
``dvc exp show`` then show that run's values, never the committed run's.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from drfidelity.core.files import dumps_json, write_csv, write_text
from drfidelity.core.layout import results_dir
from drfidelity.core.params import Params
from drfidelity.report.tables import headline
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, root: Path) -> None:
    aggregated = pd.read_csv(results_dir(root) / "metrics_aggregated.csv",
                             float_precision="round_trip")
    metrics = headline(aggregated, params.datasets, params.ranking)
    write_text(results_dir(root) / "headline.json", dumps_json(metrics))
    ran = [method for method in metrics if method != "winner"]
    write_csv(results_dir(root) / "headline.csv",
              pd.DataFrame([{"method": m, **metrics[m]} for m in ran],
                           columns=["method", "full_rho", "sigma"]))
    print(f"[headline] {len(ran)} methods on {len(params.datasets)} datasets -> "
          f"results/headline.json, results/headline.csv", flush=True)
