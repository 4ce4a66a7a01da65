"""Each supplement's per-run rows -> its results files, with the previous release's names.

Aggregated tables hold, per group, the median over the finite runs with its bootstrap CI
(:func:`drfidelity.aggregation.bootstrap_median_ci`, a fresh generator per cell) and the
number of runs, for the metrics the previous release aggregated in that study (benchmark
spec §4.3). Data seeds of the noise-dims probe are pooled, as there.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from drfidelity.aggregation import aggregate_runs, bootstrap_median_ci
from drfidelity.core.registry import METHODS
from drfidelity.core.files import dumps_json, write_csv, write_text
from drfidelity.core.layout import results_dir, study_curve_path, study_headline_path
from drfidelity.core.params import Params
from drfidelity.studies.registry import TOORPIA_EMBEDDING_ARM

ADDPLOT_METRICS = ["anomaly_radius_ratio_med", "anomaly_radius_ratio_min",
                   "attribution_accuracy", "angle_to_own_med", "pair_angle_med",
                   "add_bulk_radius_ratio"]
#: per sweep knob: results file stem and the aggregated metrics
SWEEP_TABLES = {
    "outlier_factor": ("sweep_outliers",
                       ["full_shepard", "shepard_p5__vs_ambient", "outlier_shepard__vs_ambient",
                        "pair_angle_2d_max"]),
    "minority_frac": ("sweep_populations",
                      ["full_shepard", "shepard_p5__vs_ambient", "minority_shepard__vs_ambient",
                       "within_majority_shepard__vs_ambient",
                       "within_minority_shepard__vs_ambient",
                       "cross_population_shepard__vs_ambient"]),
}
NOISE_DIMS_METRICS = ["shepard_p100__vs_truth", "shepard_p20__vs_truth", "full_shepard",
                      "shepard_p5__vs_ambient", "knn_acc_k10", "silhouette_2d",
                      "tight_over_compression", "recall_k15"]
#: the hyper-parameter study's readouts in the previous release's two orders: the columns of
#: its per-run table, and the metric rows of its aggregated table
HYPERPARAM_RUN_METRICS = ["shepard_near__vs_ambient", "full_shepard", "recall_k15"]
HYPERPARAM_METRICS = ["full_shepard", "shepard_near__vs_ambient", "recall_k15"]


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


def addplot(params: Params, per_run: pd.DataFrame) -> dict[str, pd.DataFrame]:
    rows = per_run.drop(columns=["stochastic"])
    supported = rows[rows["supported"]]
    return {"addplot_per_run.csv": rows,
            "addplot_aggregated.csv": aggregate_grouped(supported, ["method"], ADDPLOT_METRICS,
                                                        params)}


def random_walk(params: Params, per_run: pd.DataFrame) -> dict[str, pd.DataFrame]:
    rows = per_run.drop(columns=["lag"])
    boot = params.bootstrap
    return {"random_walk_per_run.csv": rows,
            "random_walk_aggregated.csv": aggregate_runs(rows, n_boot=boot.n_boot,
                                                         alpha=boot.alpha, seed=boot.seed)}


def sweep(knob: str):
    stem, metrics = SWEEP_TABLES[knob]

    def tables(params: Params, per_run: pd.DataFrame) -> dict[str, pd.DataFrame]:
        return {f"{stem}_per_run.csv": per_run,
                f"{stem}_aggregated.csv": aggregate_grouped(per_run, ["method", knob], metrics,
                                                            params)}

    return tables


def noise_dims(params: Params, per_run: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Two table pairs: the generic methods with toorPIA's csvform arm (seeded like a
    stochastic method), and toorPIA's embedding arm alone."""
    per_run = per_run.sort_values(["dim", "data_seed", "method", "seed"], kind="stable")
    per_run = per_run.assign(stochastic=per_run["stochastic"] | (per_run["method"] == "toorPIA"))
    arm = per_run["method"] == TOORPIA_EMBEDDING_ARM
    tables = {}
    for stem, rows in (("dimsweep", per_run[~arm]), ("dimsweep_embedding", per_run[arm])):
        rows = rows.reset_index(drop=True)
        tables[f"{stem}_per_run.csv"] = rows
        tables[f"{stem}_aggregated.csv"] = aggregate_grouped(rows, ["method", "dim"],
                                                             NOISE_DIMS_METRICS, params)
    return tables


def hyperparams(params: Params, per_run: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The gathered per-dataset rows (``method`` is the method, not the job label) and their
    medians per (dataset, method, knob, value)."""
    rows = per_run.assign(method=per_run["method"].str.split("/").str[0])
    rows = rows[["dataset", "method", "knob", "value", "seed", *HYPERPARAM_RUN_METRICS]]
    # integer knobs stay integers ("5", not "5.0"), whatever the CSV round trip made of them
    values = [int(v) if isinstance(METHODS[m].defaults.get(k), int) and float(v).is_integer()
              else float(v) for m, k, v in zip(rows["method"], rows["knob"], rows["value"])]
    rows = rows.assign(value=pd.Series(values, index=rows.index, dtype=object))
    return {"hyperparam_sensitivity_per_run.csv": rows,
            "hyperparam_sensitivity_aggregated.csv": aggregate_grouped(
                rows, ["dataset", "method", "knob", "value"], HYPERPARAM_METRICS, params)}


#: per study, the columns its table functions read besides the ids, method, seed and stochastic
#: (what a header-only table of a pair with no runs is made from)
RUN_COLUMNS = {"addplot": ["supported", "note", *ADDPLOT_METRICS], "random_walk": ["n", "d"],
               "sweep_outlier_factor": SWEEP_TABLES["outlier_factor"][1],
               "sweep_minority_frac": SWEEP_TABLES["minority_frac"][1],
               "noise_dims": NOISE_DIMS_METRICS,
               "hyperparams": ["knob", "value", *HYPERPARAM_RUN_METRICS]}

TABLES = {"addplot": addplot, "random_walk": random_walk,
          "sweep_outlier_factor": sweep("outlier_factor"),
          "sweep_minority_frac": sweep("minority_frac"), "noise_dims": noise_dims,
          "hyperparams": hyperparams}


# ------------------------------------------------------- DVC metrics (headlines) and plots

#: per study: (aggregated table, its group columns besides method, the headline metrics)
HEADLINES = {
    "addplot": ("addplot_aggregated.csv", [], ["anomaly_radius_ratio_med",
                                               "attribution_accuracy"]),
    "random_walk": ("random_walk_aggregated.csv", [], ["full_shepard",
                                                       "within_series_near_shepard"]),
    "sweep_outlier_factor": ("sweep_outliers_aggregated.csv", ["outlier_factor"],
                             ["outlier_shepard__vs_ambient"]),
    "sweep_minority_frac": ("sweep_populations_aggregated.csv", ["minority_frac"],
                            ["minority_shepard__vs_ambient"]),
    "noise_dims": ("dimsweep_aggregated.csv", ["dim"], ["knn_acc_k10"]),
    "hyperparams": ("hyperparam_sensitivity_aggregated.csv", ["dataset", "knob", "value"],
                    ["full_shepard"]),
}
#: studies whose medians are curves over a knob: (x column, series columns, y metrics)
CURVES = {
    "sweep_outlier_factor": ("outlier_factor", ["method"],
                             ["full_shepard", "outlier_shepard__vs_ambient"]),
    "sweep_minority_frac": ("minority_frac", ["method"],
                            ["full_shepard", "minority_shepard__vs_ambient"]),
    "noise_dims": ("dim", ["method"], ["knn_acc_k10", "full_shepard"]),
    "hyperparams": ("value", ["dataset", "method", "knob"],
                    ["full_shepard", "shepard_near__vs_ambient"]),
}


def headline(study: str, table: pd.DataFrame) -> dict:
    """Per method, the study's headline medians (``metric@group`` where the study has groups)
    read off its aggregated ``table``, for ``dvc metrics show/diff``."""
    _, group, metrics = HEADLINES[study]
    result: dict[str, dict[str, float]] = {}
    for row in table[table["metric"].isin(metrics)].itertuples(index=False):
        row = row._asdict()
        where = ",".join(f"{row[g]:g}" if isinstance(row[g], float) else str(row[g])
                         for g in group)
        key = f"{row['metric']}@{where}" if where else row["metric"]
        result.setdefault(row["method"], {})[key] = row["median"]
    return result


def curve(study: str, table: pd.DataFrame) -> pd.DataFrame:
    """One row per (series, x) with the median of each plotted metric of the aggregated
    ``table``: the data of ``dvc plots show`` (``series`` names the line: method, and knob and
    dataset where the study has them)."""
    x, series, metrics = CURVES[study]
    wide = table[table["metric"].isin(metrics)].pivot_table(
        index=[*series, x], columns="metric", values="median", sort=True).reset_index()
    label = wide[series].astype(str).agg(" ".join, axis=1)
    return pd.DataFrame({"series": label, x: wide[x],
                         **{m: wide[m] for m in metrics if m in wide}})


def _number(text: str) -> int | float:
    """A knob value as written in a table: "5" is the integer 5, "5.0" the float."""
    return int(text) if text.lstrip("-").isdigit() else float(text)


def write_summaries(root) -> list[str]:
    """Each study's headline medians (DVC metrics) and, for a study over a knob, its median
    curves (DVC plots), read off its aggregated table; the studies written."""
    done = []
    for study, (name, _, _) in HEADLINES.items():
        path = results_dir(root) / name
        if not path.exists():
            continue
        x = CURVES.get(study, (None,))[0]
        table = pd.read_csv(path, float_precision="round_trip",
                            dtype={x: str} if x else None)
        if x:
            table[x] = table[x].map(_number).astype(object)
            write_csv(study_curve_path(root, study), curve(study, table))
        write_text(study_headline_path(root, study), dumps_json(headline(study, table)))
        done.append(study)
    return done
