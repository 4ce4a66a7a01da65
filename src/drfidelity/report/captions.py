"""The captions of the figures, written from each figure stage's ``facts.json``.

Every number a caption quotes is one the figure stage measured (its facts) or drew with
(:mod:`drfidelity.figures.settings`); the prose lives here, in the writing wing, so editing a
caption reruns the report stage alone, never a figure stage.
"""

from __future__ import annotations

from drfidelity.datasets.registry import DATASETS
from drfidelity.figures.settings import (HEATMAP_METRICS, RANK_QUALITY_FLOOR, RANK_QUALITY_LEVEL,
                                         heatmap_metrics, scatter_axis)

#: gallery kind -> what its colours and markers mean (the caption's key)
GALLERY_KEYS = {
    "labels": "colour = true cluster",
    "local_density": "colour = latent log local density, bright = dense core",
    "cyclic_position": "colour = position along the loop, a cyclic colour map",
    "outlier_stars": "bulk coloured by cluster, faint; outliers as white stars labelled "
                     "o<direction><a|b>, or o<direction>ab where the pair's two members "
                     "coincide in the map — a pair should stay together and away from the bulk",
    "minority_triangles": "majority = dots, minority = black-edged triangles, colour = cluster",
}
#: score-scatter x metric -> what a point far up but left means (the caption's reading)
SCATTER_READINGS = {
    "shepard_near__vs_ambient": (
        "Spearman ρ over the pairs of the first-mode near band",
        "keeps the global layout and scrambles the near structure"),
    "outlier_shepard__vs_ambient": (
        "Spearman ρ over the pairs that touch an outlier",
        "keeps the bulk's layout and misplaces the outliers (how far out, and where)"),
    "minority_shepard__vs_ambient": (
        "Spearman ρ over the pairs that touch the minority population, minority–minority and "
        "minority–majority",
        "keeps the majority's layout and misplaces the minority"),
}


# ------------------------------------------------------------------------- a dataset's figures
# One caption per figure family, written from the dataset's facts (figures/<dataset>/facts.json)

def _caption_gallery(dataset: str, facts: dict) -> str:
    seed = min(facts["seeds"].values(), default=0)
    return (f"**Map gallery** (each method's seed-{seed} map; "
            f"{GALLERY_KEYS[DATASETS[dataset].gallery]}). Read: are the groups the data has "
            "kept apart, and kept at their relative sizes? Map axes have no units (a.u.).")


def _caption_distance(dataset: str, facts: dict) -> str:
    band = ("the fallback 5th percentile (no clear first mode)" if facts["near_fallback"]
            else "the first mode of the histogram")
    return (f"**Pair-distance distribution.** All {facts['n_pairs']:,} ambient distances; green "
            f"= the near band up to {facts['near_radius']:.2f} ({band}), "
            f"{facts['near_pct']:.1f}% of the pairs; dashed = fixed percentiles. Read: the far "
            f"pairs out-vote the near ones {facts['outvote_ratio']:.1f} : 1 in a full-pair ρ.")


def _caption_scatter(dataset: str, facts: dict) -> str:
    metric, label = scatter_axis(dataset)
    meaning, reading = SCATTER_READINGS[metric]
    return (f"**Scores.** x = {label}, the {meaning}; y = full ρ over all pairs; bars = "
            f"bootstrap CIs of the median over seeds. Read: up and to the right is better; a point far up "
            f"but left {reading}.")


def _caption_shepard(dataset: str, facts: dict) -> str:
    return ("**Shepard density**: map distance against ambient distance over all pairs, as "
            "hexagons coloured by their pair count on one log scale for all panels; dashed red "
            f"= the near-band radius {facts['near_radius']:.2f}. Read: a thin rising ridge left "
            "of the dashed line means near pairs keep their order; a flat or fanned blob there "
            "means the map scrambles them. Titles give the drawn run's full ρ.")


def _caption_heatmap(dataset: str, facts: dict) -> str:
    labels = [label for _, label in heatmap_metrics(dataset)[:-len(HEATMAP_METRICS) + 2]]
    return (f"**Summary** of the medians ({', '.join(labels)}, then the biased k-NN reference "
            "block; cont. = continuity). Read across a row for a method's profile; colours "
            "clip at 0.")


def _caption_rnx(dataset: str, facts: dict) -> str:
    best = facts["best_auc_method"]
    auc = facts["auc_log_rnx"].get(best, float("nan")) if best else float("nan")
    return (f"**R_NX(K)** (Lee & Verleysen 2009) of each drawn map on a log-K axis up to "
            f"K = N/2 = {facts['rnx_k_max']}; legend = AUC on log K over all K (small K "
            f"weighted most). Highest here: {best} ({auc:.3f}). Read: the curve's height at K "
            "tells how much of the K-neighbourhoods survives beyond chance (0 = random map, "
            "1 = perfect). Larger K are not drawn: R_NX divides by N − 1 − K, so near K = N a "
            "few swapped ranks swing it to ±1.")


def _caption_rank_quality(dataset: str, facts: dict) -> str:
    return ("**Rank-error quality Q′(κ_s, κ_t)** (Lueks et al. 2011): the share of pairs within "
            "κ_s neighbours (in the data or the map) whose rank error is at most κ_t; κ_s on a "
            "log axis, the tolerances 0, 1, 2, 5, 10, … one row each; colour on a log scale "
            f"from {RANK_QUALITY_FLOOR:g} to 1; the white outline closes the cells with "
            f"Q′ ≥ {RANK_QUALITY_LEVEL:g}, above it. Read: the lower the outline, the smaller the "
            "rank error that already keeps half the neighbourhoods; an outline that rises at "
            "small κ_s means local order is lost.")


def _caption_local(dataset: str, facts: dict) -> str:
    ks, kt = facts["pointwise_kappa"]
    ringed = " Red rings = the outliers." if DATASETS[dataset].gallery == "outlier_stars" else ""
    return (f"**Where each map can be trusted**: point-wise Q′ᵢ (κ_s = {ks}, κ_t = {kt}), "
            "counted from both ends of every pair, so tears and folds mark all points involved; "
            f"one square-root colour scale from 0 to {facts['pointwise_vmax']:g} for every map "
            f"and every dataset.{ringed} Read: dark points sit among neighbours they do not "
            "have in the data.")


def _caption_recall(dataset: str, facts: dict) -> str:
    return (f"**Why recall@k is biased.** Left: the same k gives very different radii in dense "
            f"and sparse regions (schematic). Right: each point's distance to its "
            f"{facts['recall_k']}-th ambient neighbour against the single near-band radius; "
            f"{facts['kth_inside_pct']:.0f}% of points have it inside the band. Read: recall@k "
            "asks every point for the same count of neighbours, whatever its local density.")


CAPTIONS = {"gallery": _caption_gallery, "distance_distribution": _caption_distance,
            "score_scatter": _caption_scatter, "shepard": _caption_shepard,
            "summary_heatmap": _caption_heatmap, "rnx": _caption_rnx,
            "rank_error_quality": _caption_rank_quality, "local_quality": _caption_local,
            "recall_bias": _caption_recall}


def figure_caption(key: str, dataset: str, facts: dict) -> str:
    """The caption of ``dataset``'s figure ``key`` from its facts (``facts.json``), headed by
    the data it shows (dataset, SNR, size) where the facts carry it."""
    text = CAPTIONS[key](dataset, facts)
    heading = facts.get("heading")
    return f"{text} ({heading}.)" if heading else text

