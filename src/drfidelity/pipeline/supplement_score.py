"""Stage ``supplement_score``: one study's maps -> its per-run and aggregated tables under
``results/`` (the previous release's file and column names), or, for ``{study}:{config}``,
that input's per-run rows in ``results/per_run/{study}_{config}.csv`` (the aggregate stage
gathers them).

Rows follow the study's inputs in params order, then the jobs in params order. Maps are
refused when they were not made from the current input or do not hold the jobs params asks
for, so a removed method or seed never lingers in a table. Methods that did not run are
named on the console; the add-plot test lists them as unsupported rows with the reason (as
the previous release does).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from drfidelity.methods import METHODS
from drfidelity.pipeline.files import read_array_dir, write_csv
from drfidelity.pipeline.layout import (data_dir, study_data_dir, study_embeddings_dir,
                                        study_per_run_path)
from drfidelity.pipeline.params import Params
from drfidelity.pipeline.studies import Config, Study, input_meta, map_names, select, study
from drfidelity.pipeline.study_scores import SCORES
from drfidelity.pipeline.study_tables import TABLES, write_study_tables

TARGET = "study"  # what the stage runs on (see drfidelity.pipeline)


def load_maps(config: Config, folder: Path, fingerprint: str
              ) -> tuple[list[tuple], dict[str, str]]:
    """The (job, map) pairs of an input in job order and the skip reason per label, refused
    when the folder was made from other data or for other jobs."""
    path = folder / "status.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run the supplement_embed stage first")
    record = json.loads(path.read_text())
    if record["data_fingerprint"] != fingerprint:
        raise ValueError(f"{folder} was computed on other data: run supplement_embed again")
    status = record["methods"]
    wanted: dict[str, list[int]] = {}
    for job in config.jobs:
        wanted.setdefault(job.name, []).append(job.seed)
    have = {label: entry.get("seeds", wanted.get(label)) for label, entry in status.items()}
    if have != wanted:
        raise ValueError(f"{folder} holds maps {have}, params.yaml asks for {wanted}: run "
                         "supplement_embed again")
    runs = []
    for job in config.jobs:
        if status[job.name]["status"] == "ok":
            loaded = [np.load(folder / f"{stem}.npy", allow_pickle=False)
                      for stem in map_names(job)]
            runs.append((job, loaded[0] if len(loaded) == 1 else tuple(loaded)))
    skipped = {label: e["reason"] for label, e in status.items() if e["status"] != "ok"}
    return runs, skipped


def score_config(spec: Study, config: Config, arrays: dict, folder: Path) -> list[dict]:
    runs, skipped = load_maps(config, folder, input_meta(arrays)["fingerprint"])
    for label, reason in skipped.items():
        print(f"[supplement_score {spec.name}] {label} on {config.key or spec.name} not run: "
              f"{reason}", flush=True)
    unsupported = spec.name == "addplot"
    rows = []
    for (job, _), metrics in zip(runs, SCORES[spec.name](config, arrays, runs)):
        row = {**config.ids, "method": job.name, "seed": job.seed,
               "stochastic": METHODS[job.method].stochastic}
        if unsupported:
            row.update(supported=True, note="")
        if spec.new_methods:
            row["new"] = job.method in spec.new_methods
        rows.append({**row, **metrics})
    if unsupported:
        rows += [{"method": label, "seed": 0, "stochastic": METHODS[label].stochastic,
                  "supported": False, "note": reason} for label, reason in skipped.items()]
    return rows


def gathered(root: Path, name: str, configs: list[Config]) -> pd.DataFrame:
    """The per-input rows of a study scored input by input, in params order (a missing file
    is an error, a file of an input no longer in params is never read)."""
    tables = []
    for config in configs:
        path = study_per_run_path(root, name, config.key)
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: run `drfidelity stage "
                                    f"supplement_score {name}:{config.key}` first")
        tables.append(pd.read_csv(path, float_precision="round_trip"))
    return pd.concat(tables, ignore_index=True)


def run(params: Params, name: str, root: Path) -> None:
    """Stage ``supplement_score {name}``. A study over main datasets is scored one dataset at
    a time (``{study}:{dataset}``, each its own stage); the study then gathers the rows."""
    name, only = select(name)
    spec = study(name)
    configs = [c for c in spec.configs(params) if only is None or c.key == only]
    if only is None and configs and all(c.main for c in configs):
        write_study_tables(root, name, TABLES[name](params, gathered(root, name, configs)))
        print(f"[supplement_score {name}] tables of {len(configs)} input(s) written",
              flush=True)
        return
    rows = []
    for config in configs:
        folder = data_dir(root, config.main) if config.main else \
            study_data_dir(root, name) / config.key
        arrays = read_array_dir(folder)
        maps = study_embeddings_dir(root, name) / config.key
        rows += score_config(spec, config, arrays, maps)
    if not rows:
        raise ValueError(f"supplement {name}: no map to score (every method was skipped; "
                         "see supplement_embed's status.json)")
    per_run = pd.DataFrame(rows)
    if only is not None:
        write_csv(study_per_run_path(root, name, only), per_run)
        print(f"[supplement_score {name}:{only}] {len(per_run)} runs", flush=True)
        return
    write_study_tables(root, name, TABLES[name](params, per_run))
    print(f"[supplement_score {name}] {len(per_run)} runs scored", flush=True)
