"""Stage ``report``: aggregated results -> ``REPORT.md`` and ``paper/tables/{dataset}.tex``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from drfidelity.methods import METHODS
from drfidelity.pipeline.files import write_array_dir, write_text
from drfidelity.pipeline.params import Params, snr_label
from drfidelity.report.latex import latex_table
from drfidelity.report.markdown import render_report
from drfidelity.report.tables import ranking_table

TITLES = {
    "density": "Non-uniform density",
    "clusters": "Distinct dense clusters",
    "transition": "Continuous closed-loop transition",
    "outliers": "Off-subspace outliers",
    "populations": "Imbalanced two populations",
    "random_walk": "High-dimensional random walks",
    "noise_dims": "Signal in a few dimensions among noise dimensions",
}
BLURBS = {
    "density": "Uniform region, dense core and thin shell: does the map keep the core's scale "
               "and the near pairs' order?",
    "clusters": "Seven Gaussian clusters on orthogonal axes, 20× further apart than their "
                "internal spacing: near band = within-cluster pairs.",
    "transition": "Seven dense states joined by a closed loop of bridges.",
    "outliers": "Five clusters plus three pairs of outliers displaced off the bulk's subspace; "
                "the third scored column ranks Spearman ρ over the outlier-involving pairs.",
    "populations": "A 95% majority and a 5% minority, each with five clusters, in orthogonal "
                   "subspaces.",
    "random_walk": "Independent random walks; the map should keep each trajectory's shape.",
    "noise_dims": "Three tight blobs in three signal columns among standard-normal noise columns.",
}


def run(params: Params, root: Path) -> None:
    aggregated = pd.read_csv(root / "results" / "metrics_aggregated.csv",
                             float_precision="round_trip")
    skipped = pd.read_csv(root / "results" / "skipped_methods.csv")
    snr = snr_label(params.snr)
    stochastic = [m for m in params.methods if METHODS[m].stochastic]
    deterministic = [m for m in params.methods if not METHODS[m].stochastic]
    caption_note = (
        f"SNR$={snr}$, $N={params.n}$, $D={params.d}$. Composite: 5/4/3/2/1 points for places "
        f"1--5 per scored column; bold = best, italic = worst, \\dag{{}} = outright failure. "
        f"Medians over {params.seeds} seeds with 95\\% bootstrap CIs for stochastic methods"
        + (f"; {', '.join(deterministic)} run once (deterministic)." if deterministic else ".")
    )
    sections, tex = [], {}
    for dataset in params.datasets:
        table = ranking_table(aggregated, dataset)
        sections.append((TITLES[dataset], BLURBS[dataset], table))
        tex[f"{dataset}.tex"] = latex_table(table, title=TITLES[dataset], caption_note=caption_note)
    write_array_dir(root / "paper" / "tables", {}, tex)
    config = [
        f"Datasets: {', '.join(params.datasets)}; N = {params.n}, D = {params.d}, "
        f"SNR = {snr}, data seed {params.data_seed}.",
        f"Methods: {', '.join(params.methods)}; stochastic methods "
        f"({', '.join(stochastic) or 'none'}) run seeds 0–{params.seeds - 1}, "
        "the others once.",
        f"Bootstrap: {params.bootstrap.n_boot} resamples, seed {params.bootstrap.seed}.",
        "Every metric is exact on all N(N−1)/2 pairs; per-run values are in "
        "`results/metrics_per_run.csv`, medians and CIs in `results/metrics_aggregated.csv`.",
    ]
    report = render_report(
        title="drfidelity — distance-fidelity benchmark report",
        config_lines=config, sections=sections, skipped=skipped,
        reproduce=["make repro        # = tools/setup-env.sh, then dvc pull (if reachable) and dvc repro",
                   "dvc exp run -S data.snr=4    # any other configuration"],
    )
    write_text(root / "REPORT.md", report)
    print(f"[report] REPORT.md and {len(sections)} paper tables written", flush=True)
