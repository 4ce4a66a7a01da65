"""The generated comparison with a previous release: verdicts from hand-made tables, and the
committed comparison says every exactly reproducible (table, method) pair is exact."""

from __future__ import annotations

import pandas as pd
import pytest

from drfidelity.crosscheck.comparison import compare, to_markdown
from drfidelity.core.layout import RELEASES, comparison_paths, release_root
from pipeline_helpers import REPO


def write(folder, name: str, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / name, index=False)


def per_run(value_of) -> list[dict]:
    return [{"dataset": "density", "snr": 1.0, "method": method, "seed": seed,
             "stochastic": method == "UMAP", "full_shepard": value_of(method, seed),
             "shepard_p5__vs_ambient": 0.5}
            for method, seeds in (("PCA", [0]), ("UMAP", [0, 1, 2])) for seed in seeds]


def aggregated(median_of) -> list[dict]:
    return [{"dataset": "density", "snr": 1.0, "method": method, "metric": "full_shepard",
             "stochastic": method == "UMAP", "n_runs": 1, "median": median_of(method),
             "mean": 0, "std": 0, "ci_lo": median_of(method) - 0.01,
             "ci_hi": median_of(method) + 0.01} for method in ("PCA", "UMAP")]


def test_verdicts(tmp_path):
    ours, published = tmp_path / "ours", tmp_path / "published"
    write(published, "metrics_per_run.csv", per_run(lambda m, s: 0.6 + 0.01 * s))
    write(published, "metrics_aggregated.csv", aggregated(lambda m: 0.6))
    # PCA moves by 1e-12 (exact), UMAP seed 2 by 0.05 while its median stays in the CI
    write(ours, "metrics_per_run.csv",
          per_run(lambda m, s: 0.6 + 0.01 * s + (1e-12 if m == "PCA" else 0.05 * (s == 2))))
    write(ours, "metrics_aggregated.csv", aggregated(lambda m: 0.605 if m == "UMAP" else 0.6))
    summary = compare(ours, published).set_index("method")
    assert summary.loc["PCA", "verdict"].startswith("exact")
    assert summary.loc["PCA", "cells"] == 2
    assert summary.loc["UMAP", "medians_within_ci"] == 1
    assert abs(summary.loc["UMAP", "max_full_rho_diff"] - 0.05) < 1e-12
    assert "1/1 medians inside the published CI" in summary.loc["UMAP", "verdict"]

    write(ours, "metrics_per_run.csv", per_run(lambda m, s: 0.6 + 0.01 * s + 1e-6))
    write(ours, "metrics_aggregated.csv", aggregated(lambda m: 0.7))
    summary = compare(ours, published).set_index("method")
    assert summary.loc["PCA", "verdict"].startswith("DIFFERS: 1 cell(s) beyond tolerance")
    assert summary.loc["UMAP", "verdict"].startswith("0/1 medians inside the published CI")
    page = to_markdown(compare(ours, published), "v0")
    assert "## `metrics_per_run.csv`" in page and "| PCA | 1 | 2 |" in page


def test_new_and_missing_rows_are_counted(tmp_path):
    ours, published = tmp_path / "ours", tmp_path / "published"
    write(published, "metrics_per_run.csv", per_run(lambda m, s: 0.5))
    rows = per_run(lambda m, s: 0.5)
    write(ours, "metrics_per_run.csv", [r for r in rows if r["seed"] != 2]
          + [{**rows[0], "method": "DREAMS"}])
    summary = compare(ours, published).set_index("method")
    assert summary.loc["UMAP", "missing_rows"] == 1
    assert summary.loc["DREAMS", "verdict"].startswith("new in this release")


@pytest.mark.parametrize("release", RELEASES)
def test_committed_comparison_finds_every_exact_pair_exact(release):
    """Each release's committed comparison, in its folder, against its own published tables."""
    summary = pd.read_csv(comparison_paths(release_root(REPO, release), release)[0])
    exact = summary[summary["method"].isin(["PCA", "Isomap", "t-SNE", "toorPIA"])
                    & (summary["rows"] > 0)]
    assert len(exact) > 20 and exact["verdict"].str.startswith("exact").all(), \
        exact[~exact["verdict"].str.startswith("exact")][["table", "method", "verdict"]]
    assert exact["cells"].sum() > 10000
