"""Per-run metric rows -> medians with bootstrap confidence intervals.

The bootstrap uses a fresh generator with the same seed for every cell, as the reference
release does: cells of equal size share one resampling pattern, and re-aggregating unchanged
rows reproduces their numbers exactly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: columns that say which run a row is (``injected``: the map was read from external_embeddings/,
#: not computed), not what it scored
ID_COLUMNS = ("dataset", "snr", "method", "seed", "stochastic", "n", "d", "injected")
GROUP_COLUMNS = ["dataset", "snr", "method"]
AGGREGATED_COLUMNS = ["dataset", "snr", "method", "metric", "stochastic", "n_runs", "median",
                      "mean", "std", "ci_lo", "ci_hi"]


def bootstrap_median_ci(values, *, n_boot: int = 2000, alpha: float = 0.05,
                        seed: int = 12345) -> tuple[float, float]:
    """Percentile-bootstrap CI of the median: resample with replacement ``n_boot`` times,
    take each resample's median, return the (alpha/2, 1 - alpha/2) percentiles (linear
    interpolation). NaNs are dropped; no value -> (nan, nan); one value v -> (v, v)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return (np.nan, np.nan)
    if v.size == 1:
        return (float(v[0]), float(v[0]))
    rng = np.random.default_rng(seed)
    boot = np.median(rng.choice(v, size=(n_boot, v.size), replace=True), axis=1)
    lo, hi = np.percentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(lo), float(hi))


def finite_std(values) -> float:
    """Population standard deviation (ddof 0) of the finite values; NaN when there are none."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    return float(np.std(v)) if v.size else float("nan")


def aggregate_runs(per_run: pd.DataFrame, *, n_boot: int = 2000, alpha: float = 0.05,
                   seed: int = 12345) -> pd.DataFrame:
    """One row per (dataset, snr, method, metric) with median, mean, population std, CI and
    the number of finite runs. Metrics with no finite value in a group are left out (that is
    how dataset-specific columns vanish for other datasets)."""
    missing = [c for c in GROUP_COLUMNS if c not in per_run.columns]
    if missing:
        raise ValueError(f"per-run table lacks id column(s) {missing}")
    metrics = [c for c in per_run.columns if c not in ID_COLUMNS]
    rows = []
    for (dataset, snr, method), group in per_run.groupby(GROUP_COLUMNS, sort=True):
        stochastic = group["stochastic"].iloc[0]
        for metric in metrics:
            values = group[metric].to_numpy(dtype=np.float64)
            finite = values[~np.isnan(values)]
            if finite.size == 0:
                continue
            lo, hi = bootstrap_median_ci(finite, n_boot=n_boot, alpha=alpha, seed=seed)
            rows.append((dataset, snr, method, metric, stochastic, finite.size,
                         float(np.median(finite)), float(np.mean(finite)), finite_std(finite),
                         lo, hi))
    return pd.DataFrame(rows, columns=AGGREGATED_COLUMNS)
