"""Stage ``score``: every embedding of one dataset -> ``results/per_run/{dataset}.csv``.

The high-dimensional side of every metric (distances, sorted orders, bands, neighbour sets)
depends only on the dataset, so one :class:`~drfidelity.metrics.Reference` is built per
dataset and reused for all methods and seeds. Methods that were skipped in ``embed`` are
listed with their reason in ``results/per_run/{dataset}.skipped.csv``. The last column,
``injected``, is True for maps read from ``external_embeddings/`` (toorPIA's maps, or
coordinates a user injected) rather than computed by this run.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from drfidelity.metrics import Reference
from drfidelity.metrics.labels import knn_label_accuracy, silhouette_2d
from drfidelity.metrics.timeseries import random_walk_readouts
from drfidelity.methods import METHODS
from drfidelity.pipeline import embed
from drfidelity.pipeline.files import read_array_dir, write_csv
from drfidelity.pipeline.generate import data_dir
from drfidelity.pipeline.params import Params

#: dataset arrays that metrics take as ground truth, by the keyword of ``Reference``.
GROUND_TRUTH = {"truth": "X_truth", "labels": "labels", "outlier_idx": "outlier_idx",
                "outlier_dir": "outlier_dir", "population": "population"}


def probe_readouts(dataset: str, arrays: dict, Y) -> dict[str, float]:
    """Columns of the two probes, beside the common set: the
    trajectory readouts where series and time are known, label separation on noise_dims."""
    if "series" in arrays and "t" in arrays:
        return random_walk_readouts(arrays["X"], Y, arrays["series"], arrays["t"])
    if dataset == "noise_dims":
        return {"knn_acc_k10": knn_label_accuracy(Y, arrays["labels"]),
                "silhouette_2d": silhouette_2d(Y, arrays["labels"])}
    return {}


def per_run_path(root: Path, dataset: str) -> Path:
    return root / "results" / "per_run" / f"{dataset}.csv"


def skipped_path(root: Path, dataset: str) -> Path:
    return root / "results" / "per_run" / f"{dataset}.skipped.csv"


def run(params: Params, dataset: str, root: Path) -> None:
    arrays = read_array_dir(data_dir(root, dataset))
    status, embeddings = embed.load(params, root, dataset)
    start = time.perf_counter()
    reference = Reference(arrays["X"], per_point=True,
                          **{kw: arrays[key] for kw, key in GROUND_TRUTH.items() if key in arrays})
    n, d = arrays["X"].shape
    rows, skipped = [], []
    for name in params.methods:
        if status[name]["status"] != "ok":
            skipped.append({"dataset": dataset, "method": name, "reason": status[name]["reason"]})
            continue
        for seed, Y in embeddings[name].items():
            ids = {"dataset": dataset, "snr": params.snr, "method": name, "seed": seed,
                   "stochastic": METHODS[name].stochastic, "n": n, "d": d}
            injected = str(seed) in status[name].get("injected", {})
            rows.append({**ids, **reference.score(Y), **probe_readouts(dataset, arrays, Y),
                         "injected": injected})
    write_csv(per_run_path(root, dataset), pd.DataFrame(rows))
    write_csv(skipped_path(root, dataset),
              pd.DataFrame(skipped, columns=["dataset", "method", "reason"]))
    print(f"[score {dataset}] {len(rows)} runs scored in {time.perf_counter() - start:.1f}s"
          + (f"; skipped: {', '.join(s['method'] for s in skipped)}" if skipped else ""),
          flush=True)
