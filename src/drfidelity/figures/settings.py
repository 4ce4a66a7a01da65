"""What a figure draws that its caption also says: the drawing wing's settings.

The painters (:mod:`drfidelity.figures.dataset`, :mod:`drfidelity.figures.studies`) draw with
these values and the captions (:mod:`drfidelity.report.captions`) and the paper's macros quote
them, so a caption never types a number the figure does not use. The numbers a figure measures
(band radius, AUCs, ...) are in its ``facts.json`` instead. This module imports no plotting
library: the report stage reads it without drawing.
"""

from __future__ import annotations

from drfidelity.datasets.registry import DATASETS

#: neighbourhood of interest and tolerated rank error of the point-wise quality colouring
#: (kappa_s = the k of the reference block's recall@15, tolerance of the same size).
POINTWISE_KAPPA_S = 15
POINTWISE_KAPPA_T = 15
#: neighbour rank whose distance the recall-bias figure histograms (recall@15's k).
RECALL_K = 15
#: the point-wise quality's colour scale, the same on every dataset so that the maps compare:
#: 0..1 on a square-root scale (typical Q'_i lie at 0.05-0.4, which a linear 0..1 scale
#: leaves all dark).
POINTWISE_VMAX = 1.0
POINTWISE_GAMMA = 0.5
#: bottom of the rank-error quality's log colour scale (smaller values share its colour)
RANK_QUALITY_FLOOR = 0.01
#: the level whose boundary is drawn on every rank-error quality panel
RANK_QUALITY_LEVEL = 0.5

#: (metric, axis label) of the score scatter's x axis unless a dataset's spec names its own.
SCATTER_X_DEFAULT = ("shepard_near__vs_ambient", "near-band Shepard ρ (median)")
HEATMAP_METRICS = (("shepard_near__vs_ambient", "near ρ"), ("full_shepard", "full ρ"),
                   ("recall_k15", "recall@15"), ("trust_k15", "trust@15"),
                   ("cont_k15", "cont.@15"))


def heatmap_metrics(dataset: str) -> tuple[tuple[str, str], ...]:
    """The summary heat map's (metric, label) columns for ``dataset``: near and full ρ, the
    dataset's own scored columns (outlier ρ, minority ρ, ...: what it exists for), then the
    biased k-NN reference block."""
    own = tuple((c.metric, c.header) for c in DATASETS[dataset].scored
                if c.metric not in dict(HEATMAP_METRICS))
    return HEATMAP_METRICS[:2] + own + HEATMAP_METRICS[2:]


#: Figure key -> file stem: the previous release's names where it had the figure, new names
#: for the rank-based figures it lacked; a dataset's ``figure_stems`` override some.
FIGURE_STEMS = {
    "gallery": "embeddings",
    "distance_distribution": "distance_distribution",
    "recall_bias": "recall_bias",
    "shepard": "shepard_scatter",
    "score_scatter": "score_scatter",
    "summary_heatmap": "summary_heatmap",
    "rnx": "rnx_curves",
    "rank_error_quality": "rank_error_quality",
    "local_quality": "local_quality",
}


def figure_names(dataset: str) -> dict[str, str]:
    """Figure key -> file stem of ``dataset``'s figures (SNR suffix added by the caller)."""
    return {**FIGURE_STEMS, **DATASETS[dataset].figure_stems}


def scatter_axis(dataset: str) -> tuple[str, str]:
    """(metric, axis label) of the x axis of ``dataset``'s score scatter."""
    return DATASETS[dataset].scatter or SCATTER_X_DEFAULT


def dataset_heading(title: str, snr: str, n: int | str, d: int | str) -> str:
    """What every figure says it shows: the data, its SNR and its size."""
    return f"{title} — SNR = {snr}, N = {n}, D = {d}"


#: a step drawn as a jump (thin, dashed) when the map stretches it beyond this multiple of the
#: series' median step in the map: the map tore the walk apart there
JUMP_FACTOR = 5.0
#: the metrics of a multi-metric panel (hyper-parameter sensitivity): colours no method has
#: (near-black, brown, olive), so a metric is never read as a method
METRIC_LOOKS = (("#222222", "-", "o"), ("#8c564b", "--", "s"), ("#bcbd22", ":", "^"))
