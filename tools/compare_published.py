"""Compare the committed results with the reference release's published values.

Usage: python tools/compare_published.py [PUBLISHED_DIR]
       (default reference/v1.3.0/results: the previous release's published tables, imported
       from its public repository; `python tools/imports.py` or
       `dvc pull reference/v1.3.0/results.dvc` brings them)

Prints two Markdown tables for docs/methods.md: the largest per-run difference per method over
every shared metric column, and the median full rho / near rho per (dataset, method) against
the published medians.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
ID = ["dataset", "snr", "method", "seed", "stochastic", "n", "d"]
HEADLINE = {"full_shepard": "full ρ", "shepard_near__vs_ambient": "near ρ"}
ORDER = ["PCA", "Isomap", "PyMDE", "PCC", "t-SNE", "UMAP", "DREAMS", "toorPIA"]
DATASETS = ["density", "clusters", "transition", "outliers", "populations"]


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, float_precision="round_trip")


def per_run_differences(ours: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Max |ours - published| per method over all shared metric columns and seeds."""
    merged = ours.merge(published, on=["dataset", "method", "seed"], suffixes=("", "_pub"))
    columns = [c for c in ours.columns if c not in ID and f"{c}_pub" in merged]
    rows = []
    for method in ORDER:
        sub = merged[merged.method == method]
        diff = np.abs(sub[columns].to_numpy(float) - sub[[f"{c}_pub" for c in columns]]
                      .to_numpy(float))
        headline = np.abs(sub[list(HEADLINE)].to_numpy(float)
                          - sub[[f"{c}_pub" for c in HEADLINE]].to_numpy(float))
        rows.append({"method": method, "runs": len(sub),
                     "max diff, all columns": np.nanmax(diff),
                     "max diff, full/near ρ": np.nanmax(headline)})
    return pd.DataFrame(rows)


def median_differences(ours: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Our median vs the published median of full and near rho per (dataset, method)."""
    key = ["dataset", "method", "metric"]
    merged = ours.merge(published, on=key, suffixes=("", "_pub"))
    merged = merged[merged.metric.isin(list(HEADLINE))]
    rows = []
    for dataset in DATASETS:
        for method in ORDER:
            sub = merged[(merged.dataset == dataset) & (merged.method == method)]
            row = {"dataset": dataset, "method": method}
            for metric, label in HEADLINE.items():
                r = sub[sub.metric == metric].iloc[0]
                row[f"{label} ours"] = r["median"]
                row[f"{label} published"] = r["median_pub"]
                row[f"{label} |diff|"] = abs(r["median"] - r["median_pub"])
            rows.append(row)
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    def cell(v):
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1e-3 and v != 0 else f"{v:.3f}"
        return str(v)
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def main() -> int:
    published = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "reference/v1.3.0/results"
    if not (published / "metrics_per_run.csv").is_file():
        print(f"compare_published: {published / 'metrics_per_run.csv'} not found; bring the "
              "published tables with `dvc pull reference/v1.3.0/results.dvc`", file=sys.stderr)
        return 2
    print(markdown(per_run_differences(read(REPO / "results" / "metrics_per_run.csv"),
                                       read(published / "metrics_per_run.csv"))))
    print()
    print(markdown(median_differences(read(REPO / "results" / "metrics_aggregated.csv"),
                                      read(published / "metrics_aggregated.csv"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
