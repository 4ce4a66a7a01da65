"""Stage ``figures``: one dataset's data, each method's representative map and the results ->
``figures/{dataset}/*.png`` and ``figures/{dataset}/facts.json``.

The representative map of a method is its lowest seed (the previous release's choice).
``facts.json`` holds the numbers the report's captions quote (band radius, AUCs, ...), so the
report stage needs neither the data nor the maps.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from drfidelity.pipeline.files import dumps_json, fingerprint, read_array_dir, write_text
from drfidelity.pipeline.params import Params, snr_label
from drfidelity.report.figures import DatasetView, draw_all, figure_names
from drfidelity.report.style import write_bytes
from drfidelity.report.text import TITLES

FIGURES = Path("figures")


def representative_maps(root: Path, dataset: str, X: np.ndarray, methods
                        ) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Lowest-seed map of every method that ran, refused when made from other data."""
    base = root / "embeddings" / dataset
    status_path = base / "status.json"
    if not status_path.exists():
        raise FileNotFoundError(f"{status_path} is missing: run the embed stage first")
    record = json.loads(status_path.read_text())
    if record["data_fingerprint"] != fingerprint(X):
        raise ValueError(f"embeddings/{dataset} were computed on other data than data/{dataset}: "
                         "run the embed stage again")
    maps, seeds = {}, {}
    for method in methods:
        entry = record["methods"].get(method, {})
        if entry.get("status") == "ok":
            seeds[method] = min(entry["seeds"])
            maps[method] = np.load(base / method / f"seed{seeds[method]}.npy")
    return maps, seeds


def facts_path(root: Path, dataset: str) -> Path:
    return root / FIGURES / dataset / "facts.json"


def run(params: Params, dataset: str, root: Path) -> None:
    results = root / "results"
    aggregated = pd.read_csv(results / "metrics_aggregated.csv", float_precision="round_trip")
    per_run = pd.read_csv(results / "metrics_per_run.csv", float_precision="round_trip")
    arrays = read_array_dir(root / "data" / dataset)
    maps, seeds = representative_maps(root, dataset, arrays["X"], params.methods)
    view = DatasetView(dataset, TITLES[dataset], arrays, maps, seeds,
                       aggregated[aggregated["dataset"] == dataset],
                       per_run[per_run["dataset"] == dataset])
    pngs, dataset_facts = draw_all(view)
    suffix = f"_snr{snr_label(params.snr)}"
    files = {}
    for key, stem in figure_names(dataset).items():
        relative = FIGURES / dataset / f"{stem}{suffix}.png"
        write_bytes(root / relative, pngs[key])
        files[key] = relative.as_posix()
    for stale in sorted((root / FIGURES / dataset).glob("*.png")):
        if stale.relative_to(root).as_posix() not in files.values():
            stale.unlink()
    write_text(facts_path(root, dataset),
               dumps_json({"files": files, "methods": list(maps), **dataset_facts}))
    print(f"[figures {dataset}] {len(files)} figures, {len(maps)} maps", flush=True)
