"""Stage ``figures``: one dataset's data, each method's representative map and the results ->
``figures/{dataset}/*.png`` and ``figures/{dataset}/facts.json``.

The representative map of a method is its lowest seed (the previous release's choice).
``facts.json`` holds the numbers the report's captions quote (band radius, AUCs, ...), so the
report stage needs neither the data nor the maps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from drfidelity.datasets.registry import DATASETS
from drfidelity.core.files import dumps_json, write_text
from drfidelity.core.layout import (facts_path, figures_dir, load_data, load_embeddings,
                                    results_dir)
from drfidelity.core.params import Params, snr_label
from drfidelity.figures.analysis import DatasetView
from drfidelity.figures.dataset import draw_all
from drfidelity.figures.settings import dataset_heading, figure_names
from drfidelity.core.storage import atomic_write
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = "dataset"  # what the stage runs on (see drfidelity.pipeline)

def representative_maps(params: Params, root: Path, dataset: str
                        ) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Lowest-seed map of every method that ran (refused when made from other data)."""
    _, embeddings = load_embeddings(params, root, dataset)
    seeds = {m: min(embeddings[m]) for m in params.methods if m in embeddings}
    return {m: embeddings[m][seed] for m, seed in seeds.items()}, seeds


def run(params: Params, dataset: str, root: Path) -> None:
    results = results_dir(root)
    aggregated = pd.read_csv(results / "metrics_aggregated.csv", float_precision="round_trip")
    per_run = pd.read_csv(results / "metrics_per_run.csv", float_precision="round_trip")
    _, arrays = load_data(params, dataset, root)
    maps, seeds = representative_maps(params, root, dataset)
    title = DATASETS[dataset].title
    view = DatasetView(dataset, title, arrays, maps, seeds,
                       aggregated[aggregated["dataset"] == dataset],
                       per_run[per_run["dataset"] == dataset],
                       dataset_heading(title, snr_label(params.snr), *arrays["X"].shape))
    pngs, dataset_facts = draw_all(view)
    suffix = f"_snr{snr_label(params.snr)}"
    files = {}
    folder = figures_dir(root, dataset)
    for key, stem in figure_names(dataset).items():
        path = folder / f"{stem}{suffix}.png"
        atomic_write(path, pngs[key])
        files[key] = path.relative_to(root).as_posix()
    for stale in sorted(folder.glob("*.png")):
        if stale.relative_to(root).as_posix() not in files.values():
            stale.unlink()
    write_text(facts_path(root, dataset),
               dumps_json({"files": files, "methods": list(maps), **dataset_facts}))
    print(f"[figures {dataset}] {len(files)} figures, {len(maps)} maps", flush=True)
