"""One table pair of a study -> ``results/{stem}_per_run.csv`` and
``results/{stem}_aggregated.csv`` (the previous release's file and column names).

The stage scores the maps of the study's jobs that go to that pair. Rows follow the study's
inputs in params order, then the jobs in params order. Maps are refused when they were not
made from the current input or do not hold the jobs params asks for, so a removed method or
seed never lingers in a table. Methods that did not run are named on the console; the add-plot
test lists them as unsupported rows with the reason (as the previous release does). A pair
with nothing to score (every job left out by ``methods``/``datasets``, or skipped) is written
with its header only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from drfidelity.core.files import read_array_dir, write_csv
from drfidelity.core.layout import (read_status, results_dir, study_data_dir,
                                    study_embeddings_dir)
from drfidelity.core.params import Params
from drfidelity.core.registry import METHODS
from drfidelity.jobs.job import Job
from drfidelity.studies.registry import Config, Study, input_meta, map_names, study_of_table
from drfidelity.studies.scores import SCORES
from drfidelity.studies.tables import RUN_COLUMNS, TABLES


def load_maps(jobs: tuple[Job, ...], folder: Path, fingerprint: str
              ) -> tuple[list[tuple], dict[str, str]]:
    """The (job, map) pairs of an input in job order and the skip reason per label, refused
    when the folder was made from other data or for other jobs."""
    record = read_status(folder, "supplement_embed")
    if record["data_fingerprint"] != fingerprint:
        raise ValueError(f"{folder} was computed on other data: run supplement_embed again")
    status = record["methods"]
    wanted: dict[str, list[int]] = {}
    for job in jobs:
        wanted.setdefault(job.name, []).append(job.seed)
    have = {label: entry.get("seeds", wanted.get(label)) for label, entry in status.items()
            if label in wanted}
    if have != wanted:
        raise ValueError(f"{folder} holds maps {have}, params.yaml asks for {wanted}: run "
                         "supplement_embed again")
    runs = []
    for job in jobs:
        if status[job.name]["status"] == "ok":
            loaded = [np.load(folder / f"{stem}.npy", allow_pickle=False)
                      for stem in map_names(job)]
            runs.append((job, loaded[0] if len(loaded) == 1 else tuple(loaded)))
    skipped = {label: e["reason"] for label, e in status.items()
               if label in wanted and e["status"] != "ok"}
    return runs, skipped


def score_config(where: str, spec: Study, config: Config, jobs: tuple[Job, ...],
                 arrays: dict, folder: Path) -> list[dict]:
    runs, skipped = load_maps(jobs, folder, input_meta(arrays)["fingerprint"])
    for label, reason in skipped.items():
        print(f"[{where}] {label} on {config.key or spec.name} not run: {reason}", flush=True)
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


def score_tables(params: Params, stem: str, root: Path) -> None:
    """Table pair ``stem`` of its study -> ``results/{stem}_per_run.csv`` and
    ``results/{stem}_aggregated.csv``."""
    spec = study_of_table(stem)
    where = f"supplement_score {stem}"
    for note in spec.notes(params):
        print(f"[{where}] {note}", flush=True)
    rows, ids = [], []
    for config in spec.configs(params):
        ids = list(config.ids)
        jobs = spec.jobs_for(config, stem)
        if not jobs:
            continue
        arrays = read_array_dir(study_data_dir(root, spec.name) / config.key)
        maps = study_embeddings_dir(root, spec.name) / config.key
        rows += score_config(where, spec, config, jobs, arrays, maps)
    if not rows:
        print(f"[{where}] nothing to score: the tables hold their header only", flush=True)
    per_run = pd.DataFrame(rows) if rows else pd.DataFrame(
        columns=[*ids, "method", "seed", "stochastic", *RUN_COLUMNS[spec.name]])
    for name, table in TABLES[spec.name](params, per_run).items():
        if name.startswith(f"{stem}_"):
            write_csv(results_dir(root) / name, table)
    print(f"[{where}] {len(rows)} runs scored", flush=True)
