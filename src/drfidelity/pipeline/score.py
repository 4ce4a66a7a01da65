"""Stage ``score``: every embedding of one dataset -> ``results/per_run/{dataset}.csv``.

The high-dimensional side of every metric (distances, sorted orders, bands, neighbour sets)
depends only on the dataset, so one :class:`~drfidelity.metrics.Reference` is built per
dataset and reused for all methods and seeds. Methods that were skipped in ``embed`` are
listed with their reason in ``results/per_run/{dataset}.skipped.csv``. The last column,
``injected``, is True for maps read from ``external_embeddings/`` (toorPIA's maps, or
coordinates a user injected) rather than computed by this run.

Two readouts of the same maps that are not one value per run get tables of their own: the
run-to-run stability of every method with two or more runs (``{dataset}.stability.csv``) and,
on data with states and bridges (path time ``t`` and labels with bridge points as -1: the
transition dataset), the bottleneck gap of every
bridge in every map (``{dataset}.bridges.csv``); either is header-only where it does not apply.

The noise ceiling (``{dataset}.ceiling.csv``) scores the dataset's noise-free geometry
(``X_truth``, in all its dimensions) as if it were a map: what a map that drew the truth
perfectly would score against the noisy ambient data. It bounds what the ambient columns can
reward for the geometry alone (near ρ of the truth against the ambient data is low where the
noise dominates the near pairs). Columns against the truth itself are left out (1 by
construction).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from drfidelity.core.files import write_csv
from drfidelity.core.layout import (bridges_path, ceiling_path, load_data, load_embeddings,
                                    per_run_path, skipped_path, stability_path)
from drfidelity.core.params import Params
from drfidelity.datasets.inputs import GROUND_TRUTH
from drfidelity.datasets.registry import DATASETS
from drfidelity.metrics import Reference
from drfidelity.metrics.bridges import bridge_gaps
from drfidelity.metrics.readouts import (STABILITY_METRICS, noise_ceiling, probe_readouts,
                                         stability_row)
from drfidelity.registry import METHODS
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = "dataset"  # what the stage runs on (see drfidelity.pipeline)


STABILITY_COLUMNS = (["dataset", "snr", "method", "n_runs", "position_dispersion",
                      "mean_pairwise_disparity"] + [f"{m}__std" for m in STABILITY_METRICS])
BRIDGE_COLUMNS = ["method", "seed", "bridge", "gap", "gap_nn", "gap_ratio", "torn"]
CEILING_IDS = ["dataset", "snr", "n", "d"]


def run(params: Params, dataset: str, root: Path) -> None:
    _, arrays = load_data(params, dataset, root)
    status, embeddings = load_embeddings(params, root, dataset)
    start = time.perf_counter()
    reference = Reference(arrays["X"], per_point=True,
                          **{kw: arrays[key] for kw, key in GROUND_TRUTH.items() if key in arrays})
    n, d = arrays["X"].shape
    has_bridges = "t" in arrays and "labels" in arrays and bool((arrays["labels"] == -1).any())
    readouts = DATASETS[dataset].readouts
    rows, skipped, stability, bridges = [], [], [], []
    for name in params.methods:
        if status[name]["status"] != "ok":
            skipped.append({"dataset": dataset, "method": name, "reason": status[name]["reason"]})
            continue
        runs = []
        for seed, Y in sorted(embeddings[name].items()):
            ids = {"dataset": dataset, "snr": params.snr, "method": name, "seed": seed,
                   "stochastic": METHODS[name].stochastic, "n": n, "d": d}
            injected = str(seed) in status[name].get("injected", {})
            runs.append({**ids, **reference.score(Y), **probe_readouts(readouts, arrays, Y),
                         "injected": injected})
            if has_bridges:
                bridges += [{"method": name, "seed": seed, **gap}
                            for gap in bridge_gaps(Y, arrays["labels"], arrays["t"])]
        rows += runs
        if len(runs) >= 2:
            maps = [Y for _, Y in sorted(embeddings[name].items())]
            stability.append({"dataset": dataset, "snr": params.snr, "method": name,
                              **stability_row(maps, runs)})
    write_csv(per_run_path(root, dataset), pd.DataFrame(rows))
    write_csv(skipped_path(root, dataset),
              pd.DataFrame(skipped, columns=["dataset", "method", "reason"]))
    write_csv(stability_path(root, dataset), pd.DataFrame(stability, columns=STABILITY_COLUMNS))
    write_csv(bridges_path(root, dataset), pd.DataFrame(bridges, columns=BRIDGE_COLUMNS))
    ceiling = noise_ceiling(reference, arrays)
    write_csv(ceiling_path(root, dataset),
              pd.DataFrame([{"dataset": dataset, "snr": params.snr, "n": n, "d": d, **ceiling}])
              if ceiling else pd.DataFrame(columns=CEILING_IDS))
    print(f"[score {dataset}] {len(rows)} runs scored in {time.perf_counter() - start:.1f}s"
          + (f"; skipped: {', '.join(s['method'] for s in skipped)}" if skipped else ""),
          flush=True)
