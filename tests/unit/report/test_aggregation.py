"""Aggregation (benchmark.md §4) against the published tables and hand-worked cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from drfidelity.aggregation import AGGREGATED_COLUMNS, aggregate_runs, bootstrap_median_ci
from drfidelity.report.tables import interval_words, lowest_median_chance


def test_bootstrap_degenerate_cases():
    assert np.isnan(bootstrap_median_ci([])).all()
    assert np.isnan(bootstrap_median_ci([np.nan, np.nan])).all()
    assert bootstrap_median_ci([0.25, np.nan]) == (0.25, 0.25)


def test_bootstrap_matches_a_hand_written_resampling():
    values = np.array([0.3, 0.1, 0.7])
    rng = np.random.default_rng(12345)
    boot = np.median(values[rng.integers(0, 3, size=(2000, 3))], axis=1)
    # Generator.choice on an array draws the same integers as Generator.integers(0, n).
    assert bootstrap_median_ci(values) == tuple(np.percentile(boot, [2.5, 97.5]))


def test_bootstrap_is_the_same_for_every_cell():
    a = bootstrap_median_ci([1.0, 2.0, 4.0])
    b = bootstrap_median_ci([10.0, 20.0, 40.0])
    assert b == pytest.approx(tuple(10 * x for x in a), rel=1e-15)


def test_few_runs_give_their_range_and_the_report_says_so():
    """A resampled median of 3 runs is the lowest with probability 7/27 (2 of 3 draws or all
    3: 6/27 + 1/27), far above 2.5 %, so the 95 % interval is the runs' range; with 7 runs
    (0.0102) it is not. The bootstrap itself agrees, and the report's words follow."""
    assert lowest_median_chance(3) == pytest.approx(7 / 27, abs=1e-15)
    assert lowest_median_chance(2) == pytest.approx(1 / 4, abs=1e-15)
    rng = np.random.default_rng(7)
    for runs, is_range in ((2, True), (3, True), (5, True), (7, False), (10, False)):
        for _ in range(20):
            values = rng.normal(size=runs)
            lo, hi = bootstrap_median_ci(values, n_boot=2000, alpha=0.05, seed=12345)
            assert ((lo, hi) == (values.min(), values.max())) == is_range, (runs, values)
        assert interval_words(runs, 0.05).startswith("the range of") == is_range
    assert interval_words(1, 0.05) == "the 95% bootstrap interval of the median over the runs"


def test_aggregate_skips_all_nan_metrics_and_counts_finite_runs():
    per_run = pd.DataFrame({
        "dataset": ["a"] * 3, "snr": [1.0] * 3, "method": ["M"] * 3, "seed": [0, 1, 2],
        "stochastic": [True] * 3, "n": [10] * 3, "d": [5] * 3,
        "x": [1.0, 2.0, np.nan], "only_nan": [np.nan] * 3})
    out = aggregate_runs(per_run)
    assert list(out.columns) == AGGREGATED_COLUMNS
    assert out["metric"].tolist() == ["x"]
    row = out.iloc[0]
    assert (row.n_runs, row["median"], row["mean"], row["std"]) == (2, 1.5, 1.5, 0.5)


def test_reproduces_published_aggregated_table(published_results):
    """Aggregating the published per-run table gives the published aggregated table."""
    published = published_results
    per_run = pd.read_csv(published / "metrics_per_run.csv", float_precision="round_trip")
    expected = pd.read_csv(published / "metrics_aggregated.csv", float_precision="round_trip")
    ours = aggregate_runs(per_run)
    assert len(ours) == len(expected) == 3680
    key = ["dataset", "snr", "method", "metric"]
    merged = ours.merge(expected, on=key, suffixes=("", "_pub"), validate="one_to_one")
    assert len(merged) == len(expected)
    for column in ("n_runs", "median", "mean", "std", "ci_lo", "ci_hi"):
        np.testing.assert_allclose(merged[column], merged[f"{column}_pub"], rtol=0, atol=1e-15,
                                   err_msg=column)
    assert (merged["stochastic"] == merged["stochastic_pub"]).all()
