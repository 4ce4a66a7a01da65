"""The report's explaining sections: the reading guide (glossary, why full ρ and recall@k
mislead, how to read the tables), the published claims, the methodology notes and how each
output is rebuilt; and the phrases the report's sentences share.
"""

from __future__ import annotations

from drfidelity.core.params import Params, snr_label
from drfidelity.registry import METHODS
from drfidelity.datasets.registry import DATASETS
from drfidelity.figures.settings import POINTWISE_KAPPA_S, POINTWISE_KAPPA_T
from drfidelity.metrics import bands
from drfidelity.metrics.bridges import TORN_RATIO
from drfidelity.report.captions import figure_caption
from drfidelity.report.claims import claims_table, verdict_counts
from drfidelity.report.document import Block, Bullets, Code, Figure, Heading, Para, Quote, Table
from drfidelity.report.inputs import Inputs
from drfidelity.report.ranking import TOP_POINTS, TRUTH_RANKABLE, scored_columns
from drfidelity.report.studies import STUDIES_HEADING, study_glossary
from drfidelity.report.tables import (CI_MIN_WIDTH, CRUSH_LIMIT, and_list, fixed,
                                      interval_words)


def points_rule() -> str:
    """"5/4/3/2/1": the points of places 1..TOP_POINTS."""
    return "/".join(str(TOP_POINTS - i) for i in range(TOP_POINTS))


def dataset_count(k: int, n: int) -> str:
    """"3 of 5 datasets"."""
    return f"{k} of {n} dataset{'s' if n != 1 else ''}"


def run_once(params: Params) -> list[str]:
    """The run's deterministic methods, which run once: a single value, no interval."""
    return [m for m in params.methods if not METHODS[m].stochastic]


def run_once_sentence(params: Params) -> str:
    """The sentence saying which methods run once (none: "")."""
    once = run_once(params)
    if not once:
        return ""
    return (f"{and_list(once)} {'runs' if len(once) == 1 else 'run'} once (deterministic): a "
            "single value, no interval.")



def _guide_dataset(found: dict, key: str) -> str:
    """The first dataset of the run whose spec offers figure ``key`` to the reading guide,
    else the first dataset."""
    return next((d for d in found["datasets"] if key in DATASETS[d].guide),
                next(iter(found["datasets"])))


def _guide_figure(facts: dict, dataset: str, key: str) -> list[Block]:
    """``dataset``'s figure ``key`` with its caption, or nothing when its figures are not
    built."""
    if dataset not in facts:
        return []
    return [Figure(facts[dataset]["files"][key], figure_caption(key, dataset, facts[dataset]))]


def reading_guide(inputs: Inputs, found: dict) -> list[Block]:
    seeds = inputs.params.seeds
    blocks: list[Block] = [Heading(2, "Reading guide"), Heading(3, "Glossary"), Para(
        "Every label of the tables and figures below, defined once. All distances are "
        "Euclidean and exact on all N(N−1)/2 pairs; ambient = the noisy data the methods saw."),
        Bullets(glossary(inputs.params))]
    facts = inputs.facts
    ds = _guide_dataset(found, "distance_distribution")
    f = found["datasets"][ds]
    blocks += [Heading(3, "Why the full ρ hides near structure"), Para(
        f"On {ds}, {f['near_pct']:.1f}% of the pairs lie in the first-mode near band; in a "
        f"Spearman ρ over all pairs the other pairs out-vote them {f['outvote']:.1f} : 1. A map "
        "that keeps the far layout and scrambles every neighbourhood still scores a high full ρ. "
        "The primary near column is therefore Spearman ρ over the near-band pairs only, at one "
        "fixed radius for all points.")]
    blocks += _guide_figure(facts, ds, "distance_distribution")
    dr = _guide_dataset(found, "recall_bias")
    blocks += [Heading(3, "Why recall@k is biased"), Para(
        "recall@k, trustworthiness and continuity ask each point for its k nearest neighbours, "
        "whatever the local density: in a dense core the k-th neighbour is close, in a sparse "
        "shell far. They reward maps that equalise density (t-SNE-like maps) and are shown as a "
        "greyed reference block, not scored.")]
    blocks += _guide_figure(facts, dr, "recall_bias")
    blocks += [Heading(3, "How to read the tables"), Bullets((
        f"**full pts / near pts**{_extra_points(found, inputs.params)}: {points_rule()} points "
        f"for places 1–{TOP_POINTS} in that column (exact ties keep the canonical method "
        "order); **Σ** is their sum. "
        "Rows are sorted by Σ, then full ρ.",
        "**bold** = best in the column, *italic* = worst (ties all marked), including Σ; "
        "⚠ = outright failure: a near or outlier ρ below 0 beyond doubt (its bootstrap CI "
        "below 0; a single run: its value), or the column's largest tightest-cluster "
        f"crush when it exceeds {CRUSH_LIMIT}×. In REPORT.html: green = best, light red = "
        "worst, dark red = outright failure; the greyed columns are the biased reference block.",
        "**tight-cluster scale ×**: best = closest to 1, no worst mark.",
        f"Values: medians over seeds; in brackets, where runs > 1 and it is at least "
        f"{CI_MIN_WIDTH:g} wide, {interval_words(seeds, inputs.params.bootstrap.alpha)}. "
        + run_once_sentence(inputs.params),
    ))]
    return blocks


CLAIMS = "The published claims, checked"


def claims_section(inputs: Inputs, found: dict) -> list[Block]:
    """The published release's leaders, each reproduced or not and probed (see
    :mod:`drfidelity.report.claims`); nothing when they were not checked."""
    if not found["claims"]:
        return []
    counts = verdict_counts(found["claims"])
    return [Heading(2, CLAIMS), Para(
        f"Each leader of the {inputs.published} ranking tables, found by this code's rule from "
        "its published medians, and what this build says of it. **Reproduced here**: the same "
        "leader; *exactly* when its value and the runner-up's are the published ones within the "
        "comparison's tolerance, *within spread* when each value that moved lies inside its "
        "published interval, *leader only* otherwise (the values that moved are named). Then "
        "three probes: the same ρ scored against the ground truth (the points before the "
        "noise), every ranking with one seed of the stochastic methods left out, and (where the "
        "hyper-parameter study ran) every studied method at its best setting. A reproduced "
        "claim that fails a probe is *fragile*."), Quote(
        f"Of {sum(counts.values())} claims: "
        + ", ".join(f"{k} {v}" for v, k in counts.items()) + "."),
        Table(claims_table(found["claims"]))]


def ranks_truth(params: Params) -> bool:
    """Whether the rule ``params.ranking`` scores a ρ against the ground truth."""
    truth = {c.metric for c in TRUTH_RANKABLE}
    return any(c.metric in truth for d in params.datasets
               for c in scored_columns(d, params.ranking))


def glossary(params: Params) -> tuple[str, ...]:
    """One bullet per label the report uses, in the order the report first uses them."""
    return (
        "**band**: the pairs whose ambient distance is at most a radius, one radius for "
        "every point; **fixed bands** p5 … p100 end at a percentile of the ambient distances.",
        "**first-mode (near) band**: the band ending at the valley after the first peak of the "
        "histogram of ambient distances — the pairs inside the data's smallest structures "
        f"(the {bands.FALLBACK_PERCENTILE}th percentile when the histogram has no clear first "
        "peak).",
        "**full ρ** (column *full · global*): Spearman ρ between ambient and map distances "
        "over all pairs (global layout). **near ρ** (*near · first-mode band*): the same over "
        "the first-mode band only (near structure).",
        "**vs ambient / vs truth**: a ρ against the distances of the data the methods saw "
        f"(noise included{'' if ranks_truth(params) else '; the ranking scores these'}) / of "
        "the same points before the noise (the ground truth); the near band is then the "
        "truth's own first-mode band"
        + ("; the ranking scores both ("
           + ", ".join(f"**{c.points}**" for c in TRUTH_RANKABLE) + ")."
           if ranks_truth(params) else "."),
        "**outlier ρ / minority ρ** (minority-pair ρ): the same over the pairs that involve "
        "an outlier / a minority point; **within-majority, within-minority, cross-population "
        "ρ**: over the pairs with both ends in the majority, both in the minority, one in each.",
        "**scale ×** (*tight-cluster scale ×*): for the data's tightest cluster, its median "
        "within-cluster distance over the median of all distances, in the data, divided by "
        "the same ratio in the map: 1 = kept, above 1 = crushed (that many times smaller "
        "relative to the whole map), below 1 = inflated.",
        "**full pts, near pts, outlier pts, Σ**: ranking points per scored column and their "
        "sum (see *How to read the tables*).",
        "**recall@k**: share of each point's k nearest ambient neighbours that are among its "
        "k nearest map neighbours; **trust@k** (trustworthiness): penalises map neighbours "
        "that are far in the data; **continuity@k** (cont.): penalises data neighbours that "
        "are far in the map (reference block, biased: see *Why recall@k is biased*).",
        "**R_NX(K)**: share of K-neighbourhoods kept, rescaled so that 0 = random map and "
        "1 = perfect; **AUC**: its area on a log-K axis. **Q′(κ_s, κ_t)**: share of pairs "
        "within κ_s neighbours (in the data or the map) whose rank changes by at most κ_t; "
        "**Q′ᵢ**: the same per point.",
        "**position dispersion**: after aligning a method's maps of different seeds "
        "(Procrustes), the mean over points of the spread of their positions; **full ρ std**: "
        "the standard deviation of full ρ over seeds; **full fidelity std**: that of the full "
        "stress fidelity, 1 − stress over all pairs, stress = √(Σ(a − αb)² ÷ Σa²) with a the "
        "ambient and b the map distances and α the best scale.",
        *study_glossary(params),
        f"**gap ratio / torn**: the smallest radius at which two neighbouring states connect "
        "through their bridge in the map, over their centroid distance; torn above "
        f"{fixed(TORN_RATIO)}.",
    )


def _extra_points(found: dict, params: Params) -> str:
    """The tables guide's note on the scored columns some datasets of the run add, e.g.
    " (and **outlier pts** on outliers)"."""
    datasets = list(found["datasets"])
    on: dict[str, list[str]] = {}
    for dataset in datasets:
        for column in scored_columns(dataset, params.ranking):
            on.setdefault(column.points, []).append(dataset)
    by_datasets: dict[tuple[str, ...], list[str]] = {}
    for points, where in on.items():
        by_datasets.setdefault(tuple(where), []).append(f"**{points}**")
    extra = [f"{and_list(names)} on "
             + ("every dataset" if len(where) > 1 and list(where) == datasets
                else and_list(list(where)))
             for where, names in by_datasets.items()]
    return f" (and {and_list(extra)})" if extra else ""


def methodology(inputs: Inputs, found: dict) -> list[Block]:
    params = inputs.params
    percentiles = ", ".join(f"p{p}" for p in bands.PERCENTILES)
    skipped = sorted({(m, r) for m, r in zip(inputs.skipped.method, inputs.skipped.reason)})
    toorpia = ("toorPIA is a closed web service without a seed: its maps are data, pulled from "
               "the DVC remote and checked against `external_embeddings.manifest.json`.")
    if skipped:
        toorpia += " In this run: " + "; ".join(f"{m} not run — {r}" for m, r in skipped) + "."
    return [Heading(2, "Methodology notes"), Bullets((
        f"**Bands.** Fixed bands at the {percentiles} percentiles of the ambient distances; the "
        f"first-mode near band ends at the valley after the first mode of a {bands.HIST_BINS}-bin "
        f"histogram smoothed twice with a {bands.SMOOTH_WIDTH}-bin boxcar (modes: maxima over "
        f"±{bands.MODE_ORDER} bins reaching {100 * bands.MODE_REL_HEIGHT:g}% of the highest; the "
        f"valley must lie below the median and dip under {100 * bands.VALLEY_DIP:g}% of the "
        f"mode), else the {bands.FALLBACK_PERCENTILE}th percentile.",
        "**Fixed radius, not k.** One radius for every point keeps the comparison fair across "
        "densities; the per-point (variable-radius) ρ is computed for contrast only.",
        "**Not circular.** Every column that earns points compares the map with the noisy "
        "ambient data the methods saw; the same metrics against the clean, noise-free data "
        "are stored beside them in `results/metrics_per_run.csv`.",
        "**Rank-based quality** (new here): co-ranking matrix, R_NX(K) and its log-K AUC (Lee & "
        "Verleysen 2009), and the two-parameter rank-error quality Q′(κ_s, κ_t) with its "
        "point-wise form (Lueks et al. 2011), all from `drfidelity.metrics`. Q′ is divided by "
        "the size of the region of interest, so it is a share in [0, 1] (1 for a map equal to "
        f"the data); the point-wise maps use κ_s = {POINTWISE_KAPPA_S}, "
        f"κ_t = {POINTWISE_KAPPA_T}.",
        "**DREAMS** is our own optimisation loop over openTSNE (t-SNE regularised toward the "
        "PCA map), not the authors' fork, which does not install in the pinned environment; "
        "see docs/methods.md.",
        f"**toorPIA.** {toorpia}",
        f"**Scope.** Synthetic data with known geometry, N = {params.n}, D = {params.d}, "
        f"SNR = {snr_label(params.snr)}; {found['n_methods']} methods at the settings of "
        f"`params.yaml`; the {STUDIES_HEADING.lower()} above probe other data (random "
        "walks, noise dimensions, sweeps) with the same methods.",
    ))]


def rebuild_section(params: Params) -> list[Block]:
    return [Heading(2, "How each table and figure is rebuilt"), Bullets((
        "Ranking tables: `drfidelity stage report` (the `report` stage) from "
        "`results/metrics_aggregated.csv` and `results/skipped_methods.csv`; the same model "
        "renders REPORT.md, REPORT.html and `paper/tables/*.tex`.",
        "Figures: `drfidelity stage figures <dataset>` from `data/`, `embeddings/` (lowest seed "
        "per method) and the results tables, one dataset at a time; the numbers quoted in captions "
        "are in `figures/<dataset>/facts.json`.",
        "A self-contained REPORT.html (figures inlined): "
        "`python -m drfidelity.report.standalone REPORT.html REPORT.standalone.html`.",
        "The paper: `make paper` (LaTeX, not needed by `dvc repro`).",
    )), Heading(2, "Reproduce"), Code((
        "make repro        # = tools/setup-env.sh, then dvc pull (if reachable) and dvc repro",
        f"dvc exp run -S data.snr={4 if params.snr == 1 else 1}    # any other configuration",
    ))]

