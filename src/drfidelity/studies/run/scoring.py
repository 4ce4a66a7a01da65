"""One table pair of a study -> ``results/studies/{stem}_per_run.csv`` and
``results/studies/{stem}_aggregated.csv`` (the previous release's file and column names).

The stage scores the maps of the study's jobs that go to that pair with the study's
``readouts``, handing it :data:`KIT` (the metric engine and the aggregation), and writes what
its ``tabulate`` makes of the rows. Rows follow the study's inputs in params order, then the
jobs in params order. Maps are refused when they were not made from the current input or do
not hold the jobs params asks for, so a removed method or seed never lingers in a table.
Methods that did not run are named on the console (or, for a study with
``not_operable_rows``, listed as unsupported rows with the reason, as the previous release
does), and so are the seeds a method could not run (a vendor's cache with fewer stored draws
than seeds): its rows are those of the seeds that ran, and its aggregated ``n_runs`` says how
many. A pair with nothing to score (every job left out by ``methods``/``datasets``, or
skipped) is written with its header only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from drfidelity.aggregation import aggregate_runs, bootstrap_median_ci
from drfidelity.core.files import read_array_dir, write_csv
from drfidelity.core.layout import (read_map, read_status, study_data_dir,
                                    study_embeddings_dir, study_map_stage, study_table_path)
from drfidelity.core.params import Params
from drfidelity.registry import METHODS
from drfidelity.datasets.inputs import GROUND_TRUTH
from drfidelity.core.job import Job
from drfidelity.metrics import Reference
from drfidelity.metrics.addplot import anchored_metrics
from drfidelity.metrics.labels import knn_label_accuracy, silhouette_2d
from drfidelity.metrics.timeseries import random_walk_readouts
from drfidelity.studies import table_pair
from drfidelity.studies.spec import Config, ScoringKit, StudySpec, input_meta, map_names

#: the columns of an aggregated table after its group keys
AGGREGATED = ["metric", "median", "ci_lo", "ci_hi", "n_runs"]


def aggregate_grouped(per_run: pd.DataFrame, keys: list[str], metrics: list[str],
                      params: Params) -> pd.DataFrame:
    """``keys + [metric, median, ci_lo, ci_hi, n_runs]``: the median over the finite runs of
    each group (sorted keys) with its bootstrap CI (``params.bootstrap``)."""
    boot = params.bootstrap
    rows = []
    for group_keys, group in per_run.groupby(keys, sort=True):
        for metric in metrics:
            values = group[metric].to_numpy(dtype=np.float64)
            finite = values[~np.isnan(values)]
            if finite.size == 0:
                continue
            lo, hi = bootstrap_median_ci(finite, n_boot=boot.n_boot, alpha=boot.alpha,
                                         seed=boot.seed)
            rows.append((*group_keys, metric, float(np.median(finite)), lo, hi, finite.size))
    return pd.DataFrame(rows, columns=[*keys, *AGGREGATED])


def canonical_reference(arrays: dict) -> Reference:
    """The high-D side of the canonical column set without the per-point columns, with
    whatever ground truth the input has."""
    truth = {kw: arrays[name] for kw, name in GROUND_TRUTH.items() if name in arrays}
    return Reference(arrays["X"], per_point=False, **truth)


def bootstrapped_runs(rows: pd.DataFrame, params: Params) -> pd.DataFrame:
    """:func:`drfidelity.aggregation.aggregate_runs` with the params' bootstrap."""
    boot = params.bootstrap
    return aggregate_runs(rows, n_boot=boot.n_boot, alpha=boot.alpha, seed=boot.seed)


#: what a study's ``readouts`` and ``tabulate`` are handed
KIT = ScoringKit(Reference=Reference, canonical_reference=canonical_reference,
                 knn_label_accuracy=knn_label_accuracy, silhouette_2d=silhouette_2d,
                 random_walk_readouts=random_walk_readouts, anchored_metrics=anchored_metrics,
                 aggregate_grouped=aggregate_grouped, aggregate_runs=bootstrapped_runs)
def load_maps(jobs: tuple[Job, ...], base: Path, key: str, fingerprint: str
              ) -> tuple[list[tuple], dict[str, str], dict[str, tuple[list[int], str]]]:
    """The (job, map) pairs of input ``key`` in job order, the skip reason per label none of
    whose seeds ran, and (seeds, first reason) per label some of whose seeds did not run, read
    from each method's folder below the study's maps ``base``; refused when a folder was made
    from other data or for other jobs, or a map is not the file its stage wrote
    (:func:`~drfidelity.core.layout.read_map`)."""
    status, folders, records, stages = {}, {}, {}, {}
    for method in sorted({job.method for job in jobs}):
        folder = folders[method] = base / method / key
        stages[method] = study_map_stage(base, method)
        record = records[method] = read_status(folder, stages[method])
        if record["data_fingerprint"] != fingerprint:
            raise ValueError(f"{folder} was computed on other data: run {stages[method]} "
                             "again")
        status.update(record["methods"])
    status = dict(sorted(status.items()))
    wanted: dict[str, list[int]] = {}
    for job in jobs:
        wanted.setdefault(job.name, []).append(job.seed)
    have = {label: sorted([*entry["seeds"], *map(int, entry.get("skipped", {}))])
            if entry["status"] == "ok" else wanted.get(label)
            for label, entry in status.items() if label in wanted}
    if have != {label: sorted(seeds) for label, seeds in wanted.items()}:
        raise ValueError(f"{base / key} holds maps {have}, params.yaml asks for {wanted}: run "
                         "study_embed again")
    runs, partly = [], {}
    for job in jobs:
        entry = status[job.name]
        if entry["status"] == "ok" and job.seed in entry["seeds"]:
            loaded = [read_map(folders[job.method], records[job.method], stem, job.name,
                               job.seed, stages[job.method]) for stem in map_names(job)]
            runs.append((job, loaded[0] if len(loaded) == 1 else tuple(loaded)))
        elif entry["status"] == "ok":
            partly.setdefault(job.name, []).append(job.seed)
    skipped = {label: e["reason"] for label, e in status.items()
               if label in wanted and e["status"] != "ok"}
    skipped_seeds = {label: (seeds, status[label]["skipped"][str(seeds[0])])
                     for label, seeds in partly.items()}
    return runs, skipped, skipped_seeds


def score_config(where: str, spec: StudySpec, config: Config, jobs: tuple[Job, ...],
                 arrays: dict, base: Path) -> list[dict]:
    runs, skipped, skipped_seeds = load_maps(jobs, base, config.key,
                                             input_meta(arrays)["fingerprint"])
    for label, reason in skipped.items():
        print(f"[{where}] {label} on {config.key or spec.name} not run: {reason}", flush=True)
    for label, (seeds, reason) in skipped_seeds.items():
        print(f"[{where}] {label} on {config.key or spec.name}: seeds "
              f"{', '.join(map(str, seeds))} not run: {reason}", flush=True)
    rows = []
    for (job, _), metrics in zip(runs, spec.readouts(config, arrays, runs, KIT)):
        row = {**config.ids, "method": job.name, "seed": job.seed,
               "stochastic": METHODS[job.method].stochastic}
        if spec.not_operable_rows:
            row.update(supported=True, note="")
        if spec.new_methods:
            row["new"] = job.method in spec.new_methods
        rows.append({**row, **metrics})
    if spec.not_operable_rows:
        rows += [{"method": label, "seed": 0, "stochastic": METHODS[label].stochastic,
                  "supported": False, "note": reason} for label, reason in skipped.items()]
    return rows


def score_tables(params: Params, target: str, root: Path) -> None:
    """Table pair ``target`` (``<study>/<stem>``) -> ``results/studies/{stem}_per_run.csv`` and
    ``results/studies/{stem}_aggregated.csv``."""
    spec, stem = table_pair(target)
    pair = spec.pair(stem)
    where = f"study_score {stem}"
    for note in spec.study_notes(params):
        print(f"[{where}] {note}", flush=True)
    rows, ids = [], []
    for config in spec.configs(params):
        ids = list(config.ids)
        jobs = spec.jobs_for(config, stem)
        if not jobs:
            continue
        arrays = read_array_dir(study_data_dir(root, spec.name) / config.key)
        rows += score_config(where, spec, config, jobs, arrays,
                             study_embeddings_dir(root, spec.name))
    if not rows:
        print(f"[{where}] nothing to score: the tables hold their header only", flush=True)
    per_run = pd.DataFrame(rows) if rows else pd.DataFrame(
        columns=[*ids, "method", "seed", "stochastic", *pair.run_columns])
    for name, table in spec.tabulate(params, per_run, KIT).items():
        if name in (pair.per_run, pair.aggregated):
            write_csv(study_table_path(root, name), table)
    print(f"[{where}] {len(rows)} runs scored", flush=True)
