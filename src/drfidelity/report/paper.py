"""What the paper takes from the pipeline: its key figures and its table titles."""

from __future__ import annotations

from drfidelity.report.text import TITLES

#: (dataset, figure key) copied to ``paper/figures/{dataset}_{key}.png`` for ``paper/main.tex``.
PAPER_FIGURES = (
    ("clusters", "distance_distribution"), ("density", "recall_bias"),
    ("density", "gallery"), ("clusters", "gallery"), ("transition", "gallery"),
    ("outliers", "gallery"), ("populations", "gallery"),
    ("density", "shepard"), ("clusters", "shepard"),
    ("clusters", "rnx"), ("transition", "rnx"),
    ("clusters", "rank_error_quality"), ("clusters", "local_quality"),
    ("outliers", "score_scatter"),
)

#: supplement figures copied to ``paper/figures/supplement_{key}.png`` when drawn
#: (``paper/main.tex`` includes each only if the file exists).
PAPER_SUPPLEMENT_FIGURES = ("basemap_addplot_gallery", "trajectory_gallery", "dimension_curve",
                            "sweep_outliers_curve", "scale")


def paper_title(dataset: str, params) -> str:
    """Table title; the populations title carries the split, from its parameter."""
    if dataset == "populations":
        frac = params.dataset_params.get("populations", {}).get("minority_frac", 0.05)
        return f"{TITLES[dataset]} ({100 * (1 - frac):g}\\% vs.\\ {100 * frac:g}\\%)"
    return TITLES[dataset]
