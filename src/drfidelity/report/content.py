"""What the report says, built from the results, the figure facts and the parameters.

Every number in a sentence or caption is read from ``results/metrics_aggregated.csv``,
``results/skipped_methods.csv``, ``figures/{dataset}/facts.json``, ``params.yaml`` or a
constant of the code it describes; :func:`findings` computes them once, for REPORT and the paper's macros.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from drfidelity.datasets.registry import DATASETS, knob_values
from drfidelity.metrics import bands
from drfidelity.core.layout import RELEASES, comparison_paths
from drfidelity.core.registry import METHODS
from drfidelity.core.params import Params, snr_label
from drfidelity.report import figures as fig
from drfidelity.report.claims import claims, claims_table, tuning_table, verdict_counts
from drfidelity.report.document import (Block, Bullets, Code, Figure, Heading, Para, Quote,
                                        Table, slug)
from drfidelity.report.ranking import TOP_POINTS, rank_stability, scored_columns
from drfidelity.report.releases import release_pointer, release_section, title as release_title
from drfidelity.report.supplements import (TORN_RATIO, Supplements, study_glossary,
                                           supplement_blocks)
from drfidelity.report.tables import (CI_MIN_WIDTH, CRUSH_LIMIT, TRUTH_PAIRS, RankingTable,
                                      fixed, interval_words, ranking_table, truth_table)

UPSTREAM = "DR Fidelity Benchmark {} (toorpia/dr-fidelity-benchmark, MIT)"


@dataclass
class Inputs:
    params: Params
    aggregated: pd.DataFrame
    skipped: pd.DataFrame
    facts: dict  # dataset -> figures/{dataset}/facts.json (absent: figures not built)
    supplements: Supplements = field(default_factory=Supplements)
    #: per two consecutive imported releases: (older, newer, the release_diff stage's tables
    #: or None when they are absent)
    releases: list[tuple[str, str, dict | None]] = field(default_factory=list)
    #: the previous project's release this configuration rebuilds (compared with)
    published: str = RELEASES[0]
    #: ``results/metrics_per_run.csv`` (None: no rank-stability readout)
    per_run: pd.DataFrame | None = None
    #: the published release's ``metrics_aggregated.csv`` (None: its claims are not checked)
    published_aggregated: pd.DataFrame | None = None
    #: from a release's root, the checkout's root (relative): its report tells what moved
    #: between the releases, this one points there; None at the checkout's root
    checkout: str | None = None
    #: ``results/noise_ceiling.csv``: per dataset, its noise-free geometry scored as a map
    #: (None: not built)
    ceiling: pd.DataFrame | None = None

    def table(self, dataset: str) -> RankingTable:
        return ranking_table(self.aggregated, dataset, self.params.ranking)

    def median(self, dataset: str, method: str, metric: str) -> float:
        a = self.aggregated
        rows = a[(a.dataset == dataset) & (a.method == method) & (a.metric == metric)]
        return float(rows["median"].iloc[0]) if len(rows) else math.nan

    def ceiling_of(self, dataset: str) -> dict[str, float]:
        """The noise ceiling's columns of ``dataset`` ({} where it has no truth or none was
        built)."""
        if self.ceiling is None:
            return {}
        rows = self.ceiling[self.ceiling.dataset == dataset]
        return {} if rows.empty else {k: float(v) for k, v in rows.iloc[0].items()
                                      if k not in ("dataset", "snr") and pd.notna(v)}

    def skipped_on(self, dataset: str) -> list[tuple[str, str]]:
        rows = self.skipped[self.skipped.dataset == dataset]
        return [(r.method, r.reason) for r in rows.itertuples()]


def _best(values: dict[str, float]) -> tuple[str | None, float]:
    finite = {m: v for m, v in values.items() if not math.isnan(v)}
    if not finite:
        return None, math.nan
    method = max(finite, key=finite.get)  # first in canonical order on ties
    return method, finite[method]


def findings(inputs: Inputs) -> dict[str, Any]:
    """Per dataset: the table, Σ winners, near/full ρ leaders, worst crush, band share; and
    the counts across datasets the headline quotes."""
    per: dict[str, dict[str, Any]] = {}
    for dataset in inputs.params.datasets:
        table = inputs.table(dataset)
        methods = [m for m, _ in table.rows]
        sigma_col = [c.key for c in table.columns].index("total")
        sigma = {m: int(cells[sigma_col].text) for m, cells in table.rows}
        top = max(sigma.values()) if sigma else 0
        (_, full_key, full_truth), (_, near_key, near_truth) = TRUTH_PAIRS
        near = {m: inputs.median(dataset, m, near_key) for m in methods}
        full = {m: inputs.median(dataset, m, full_key) for m in methods}
        truth = {key: _best({m: inputs.median(dataset, m, key) for m in methods})
                 for key in (full_truth, near_truth)}
        crush = {m: inputs.median(dataset, m, "tight_over_compression") for m in methods}
        pct = [inputs.median(dataset, m, "near_band_pct__vs_ambient") for m in methods]
        pct = next((p for p in pct if not math.isnan(p)), math.nan)
        headers = [c.header for c in table.columns]
        per[dataset] = {
            "table": table, "methods": methods, "sigma": sigma,
            "sigma_winners": [m for m in methods if sigma[m] == top], "sigma_max": top,
            "near_leader": _best(near), "full_leader": _best(full), "crush": _best(crush),
            "near_truth_leader": truth[near_truth], "full_truth_leader": truth[full_truth],
            "truth_table": truth_table(inputs.aggregated, dataset, methods,
                                       inputs.ceiling_of(dataset)),
            "ceiling": inputs.ceiling_of(dataset), "near": near,
            "near_pct": pct, "outvote": (100 - pct) / pct if pct > 0 else math.nan,
            "failures": [(m, headers[i]) for m, cells in table.rows
                         for i, c in enumerate(cells) if c.mark == "crit"],
            "skipped": inputs.skipped_on(dataset),
        }
    n = len(per)
    sigma_wins = Counter(m for f in per.values() for m in f["sigma_winners"])
    near_wins = Counter(f["near_leader"][0] for f in per.values() if f["near_leader"][0])
    crushes = [(f["crush"][1], d, f["crush"][0]) for d, f in per.items()
               if f["crush"][0] is not None]
    worst_crush = max(crushes) if crushes else (math.nan, None, None)
    return {
        "datasets": per, "n_datasets": n,
        "sigma_top": sigma_wins.most_common(1)[0] if sigma_wins else (None, 0),
        "near_top": near_wins.most_common(1)[0] if near_wins else (None, 0),
        "full_not_near": sum(1 for f in per.values()
                             if f["full_leader"][0] != f["near_leader"][0]),
        # per ρ, the datasets whose leader is the same against the truth, and who leads there
        "truth_holds": {rho: sum(1 for f in per.values() if f[f"{rho}_truth_leader"][0]
                                 == f[f"{rho}_leader"][0]) for rho in ("full", "near")},
        "near_truth_top": Counter(f["near_truth_leader"][0] for f in per.values()
                                  if f["near_truth_leader"][0]).most_common(),
        "worst_crush": worst_crush,
        "n_methods": len({m for f in per.values() for m in f["methods"]}),
        "rank_stability": (None if inputs.per_run is None else rank_stability(
            inputs.per_run, list(per), inputs.params.ranking, list(METHODS))),
        "claims": ([] if inputs.published_aggregated is None else claims(
            inputs.params, inputs.aggregated, inputs.published_aggregated, inputs.per_run,
            tuning_table(inputs.supplements.tables))),
    }


def points_rule() -> str:
    """"5/4/3/2/1": the points of places 1..TOP_POINTS."""
    return "/".join(str(TOP_POINTS - i) for i in range(TOP_POINTS))


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _count(k: int, n: int) -> str:
    return f"{k} of {n} dataset{'s' if n != 1 else ''}"


def config_lines(params: Params) -> list[str]:
    stochastic = [m for m in params.methods if METHODS[m].stochastic]
    return [
        f"Datasets: {', '.join(params.datasets)}; N = {params.n}, D = {params.d}, "
        f"SNR = {snr_label(params.snr)}, data seed {params.data_seed}.",
        f"Methods: {', '.join(params.methods)}; stochastic methods "
        f"({', '.join(stochastic) or 'none'}) run "
        + (f"seeds 0–{params.seeds - 1}" if params.seeds > 1 else "seed 0")
        + ", the others once.",
        f"Intervals: in brackets after a median, "
        f"{interval_words(params.seeds, params.bootstrap.alpha)}; "
        f"{params.bootstrap.n_boot} resamples, seed {params.bootstrap.seed}. "
        + _run_once(params),
        "Every metric is exact on all N(N−1)/2 pairs; per-run values are in "
        "`results/metrics_per_run.csv`, medians and CIs in `results/metrics_aggregated.csv`.",
    ]


def run_once(params: Params) -> list[str]:
    """The run's deterministic methods, which run once: a single value, no interval."""
    return [m for m in params.methods if not METHODS[m].stochastic]


def _run_once(params: Params) -> str:
    once = run_once(params)
    if not once:
        return ""
    return (f"{_and(once)} {'runs' if len(once) == 1 else 'run'} once (deterministic): a "
            "single value, no interval.")


def headline(found: dict) -> str:
    n = found["n_datasets"]
    (sigma_m, sigma_k), (near_m, near_k) = found["sigma_top"], found["near_top"]
    crush, crush_ds, crush_m = found["worst_crush"]
    parts = []
    if sigma_m:
        parts.append(f"**{sigma_m}** has the highest Σ (shared or alone) on {_count(sigma_k, n)}")
    if near_m:
        parts.append(f"**{near_m}** keeps the near structure best (highest first-mode near-band "
                     f"ρ) on {_count(near_k, n)}")
    text = "; ".join(parts) + "."
    text += (f" The method with the best full ρ is not the one with the best near ρ on "
             f"{_count(found['full_not_near'], n)}: a high global ρ does not say that near "
             "pairs are kept.")
    text += " " + truth_sentence(found)
    if crush_m is not None and crush > 1:
        text += (f" The largest crush of a tightest cluster is **{crush_m}** on {crush_ds}: "
                 f"relative to the whole map it is {crush:.1f}× smaller than in the data.")
    return text


def stability_text(found: dict) -> str | None:
    """The rank-stability readout: does a dataset's Σ leader (and its whole row order) stay
    when one seed is left out, and the top summed Σ when one dataset is?"""
    stability = found["rank_stability"]
    if stability is None:
        return None
    texts = []
    seeds = stability["seeds"]
    if stability["n_seeds"] > 1:
        def kept(what: str) -> str:
            return ", ".join(f"{d} {c[what]} of {c['n']}" for d, c in seeds.items())

        texts.append(f"Leaving out one of the {stability['n_seeds']} seeds of the stochastic "
                     f"methods, the Σ leader of each dataset stays in {kept('leader')} "
                     f"rankings, and its whole row order in {kept('order')}.")
    if len(stability["datasets"]) > 1:
        top = stability["all"]
        same = [d for d, t in stability["datasets"].items() if t == top]
        other = {d: t for d, t in stability["datasets"].items() if t != top}
        opening = "Leaving out one dataset, the highest Σ summed over the others is "
        if not other:
            text = (f"{opening}{'+'.join(top)}'s whichever of the {len(same)} is left out, as "
                    "over all of them")
        else:
            text = opening + "; ".join(f"{'+'.join(t)}'s without {d}"
                                       for d, t in stability["datasets"].items())
            text += f" (over all of them: {'+'.join(top)}'s)"
        texts.append(text + ".")
    return " ".join(texts) or None


def truth_sentence(found: dict) -> str:
    """Which of the headline's leaders hold when the maps are scored against the ground truth
    (the points before the noise) rather than the noisy ambient data."""
    n, holds = found["n_datasets"], found["truth_holds"]
    text = (f"Scored against the ground truth (the points before the noise) instead of the "
            f"ambient data, the full-ρ leader is the same on {_count(holds['full'], n)} and the "
            f"near-ρ leader on {_count(holds['near'], n)}")
    if holds["near"] < n and found["near_truth_top"]:
        text += (" (near-ρ leaders against the truth: "
                 + ", ".join(f"{m} on {k}" for m, k in found["near_truth_top"]) + ")")
    return text + "." + ceiling_sentence(found)


def ceiling_sentence(found: dict) -> str:
    """On how many datasets the near-ρ leader scores above the noise-free geometry itself
    (the noise ceiling), with the ceilings: there its lead rests on following the noise."""
    near_key = TRUTH_PAIRS[1][1]
    ceilings = {d: f["ceiling"][near_key] for d, f in found["datasets"].items()
                if near_key in f["ceiling"]}
    if not ceilings:
        return ""
    above = [d for d, c in ceilings.items()
             if found["datasets"][d]["near_leader"][1] > c]
    return (f" The noise-free geometry itself, scored as a map, reaches near ρ "
            + ", ".join(f"{fixed(c)} on {d}" for d, c in ceilings.items())
            + f" against the ambient data; the near-ρ leader scores above that on "
            f"{_count(len(above), len(found['datasets']))}, where its lead rewards following "
            "the noise.")


# ------------------------------------------------------------------------- per-dataset text

def blurb(dataset: str, params: Params) -> str:
    """The sentence under the dataset's heading, from the knobs its data was made with."""
    spec = DATASETS[dataset]
    if spec.blurb is None:
        return spec.title
    return spec.blurb(knob_values(dataset, params.dataset_params.get(dataset)))


def _missing_note(skipped: list[tuple[str, str]]) -> str:
    if not skipped:
        return ""
    return " Not shown: " + "; ".join(f"{m} ({reason})" for m, reason in skipped) + "."


def dataset_section(dataset: str, inputs: Inputs, found: dict) -> list[Block]:
    f = found["datasets"][dataset]
    facts = inputs.facts.get(dataset)
    snr = snr_label(inputs.params.snr)
    title = DATASETS[dataset].title
    blocks: list[Block] = [Heading(2, title), Quote(blurb(dataset, inputs.params)),
                           Heading(3, f"{title} — SNR = {snr}")]
    missing = _missing_note(f["skipped"])
    if facts is not None:
        blocks.append(Figure(facts["files"]["gallery"],
                             fig.figure_caption("gallery", dataset, facts) + missing))
    blocks.append(Table(f["table"]))
    blocks.append(Para(table_summary(f) + missing))
    blocks.append(Para(f"{title}: full and near ρ against the ambient data (what the ranking "
                       "scores, noise included) and against the ground truth."))
    blocks.append(Table(f["truth_table"]))
    blocks.append(Para(truth_summary(f)))
    if facts is None:
        blocks.append(Quote(f"Figures not built in this run: `drfidelity stage figures "
                            f"{dataset}` (run by `dvc repro`) draws them."))
        return blocks
    for key in ("distance_distribution", "score_scatter", "shepard", "summary_heatmap", "rnx",
                "rank_error_quality", "local_quality", "recall_bias"):
        blocks.append(Figure(facts["files"][key], fig.figure_caption(key, dataset, facts) + missing))
    return blocks


def table_summary(f: dict) -> str:
    text = f"Σ leader: {_and(f['sigma_winners'])} ({f['sigma_max']} points)."
    near_m, near_v = f["near_leader"]
    full_m, full_v = f["full_leader"]
    if near_m:
        text += (f" Best near ρ: {near_m} ({fixed(near_v)}); best full ρ: {full_m} "
                 f"({fixed(full_v)}).")
    if f["failures"]:
        text += " Outright failures (⚠): " + "; ".join(f"{m} — {col}" for m, col in
                                                       f["failures"]) + "."
    else:
        text += " No outright failure."
    return text


def truth_summary(f: dict) -> str:
    """The dataset's full- and near-ρ leaders against the truth, beside the ambient ones."""
    parts = []
    for rho in ("full", "near"):
        (ambient, _), (truth, value) = f[f"{rho}_leader"], f[f"{rho}_truth_leader"]
        if truth is None:
            continue
        if truth == ambient:
            parts.append(f"{truth} has the best {rho} ρ both ways ({fixed(value)} against "
                         "the truth)")
        else:
            parts.append(f"the best {rho} ρ is {truth}'s ({fixed(value)}), where against the "
                         f"ambient data it is {ambient}'s")
    text = ("Against the ground truth, " + "; ".join(parts) + ".") if parts else ""
    return " ".join(t for t in (text, ceiling_summary(f)) if t)


def ceiling_summary(f: dict) -> str:
    """What the noise-free geometry itself scores against the ambient data, and which methods'
    near ρ exceeds it: structure no map of the truth has, so it comes from the noise."""
    ceiling = f["ceiling"]
    (_, full_key, _), (_, near_key, _) = TRUTH_PAIRS
    if full_key not in ceiling or near_key not in ceiling:
        return ""
    above = [m for m, v in f["near"].items() if v > ceiling[near_key]]
    return (f"The noise-free geometry itself, scored as a map, reaches full ρ "
            f"{fixed(ceiling[full_key])} and near ρ {fixed(ceiling[near_key])} against the "
            "ambient data (the last row): what drawing the truth perfectly earns. "
            + (f"Near ρ above that ({_and(above)}) rewards following the noise."
               if above else "No method's near ρ exceeds it."))


# ------------------------------------------------------------------------- whole report

def _guide_dataset(found: dict, key: str) -> str:
    """The first dataset of the run whose spec offers figure ``key`` to the reading guide,
    else the first dataset."""
    return next((d for d in found["datasets"] if key in DATASETS[d].guide),
                next(iter(found["datasets"])))


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
    if ds in facts:
        blocks.append(Figure(facts[ds]["files"]["distance_distribution"],
                             fig.figure_caption("distance_distribution", ds, facts[ds])))
    dr = _guide_dataset(found, "recall_bias")
    blocks += [Heading(3, "Why recall@k is biased"), Para(
        "recall@k, trustworthiness and continuity ask each point for its k nearest neighbours, "
        "whatever the local density: in a dense core the k-th neighbour is close, in a sparse "
        "shell far. They reward maps that equalise density (t-SNE-like maps) and are shown as a "
        "greyed reference block, not scored.")]
    if dr in facts:
        blocks.append(Figure(facts[dr]["files"]["recall_bias"],
                             fig.figure_caption("recall_bias", dr, facts[dr])))
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
        + _run_once(inputs.params),
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
        "(noise included; the ranking scores these) / of the same points before the noise "
        "(the ground truth); the near band is then the truth's own first-mode band.",
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
    extra = [f"**{c.points}** on {d}" for d in found["datasets"]
             for c in scored_columns(d, params.ranking)]
    return f" (and {_and(extra)})" if extra else ""


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
        f"the data); the point-wise maps use κ_s = {fig.POINTWISE_KAPPA_S}, "
        f"κ_t = {fig.POINTWISE_KAPPA_T}.",
        "**DREAMS** is our own optimisation loop over openTSNE (t-SNE regularised toward the "
        "PCA map), not the authors' fork, which does not install in the pinned environment; "
        "see docs/methods.md.",
        f"**toorPIA.** {toorpia}",
        f"**Scope.** Synthetic data with known geometry, N = {params.n}, D = {params.d}, "
        f"SNR = {snr_label(params.snr)}; {found['n_methods']} methods at the settings of "
        "`params.yaml`; the supplements above probe other data (random "
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


TITLE = "drfidelity — distance-fidelity benchmark report"
SUPPLEMENTS = "Supplements"


def _links(headings: list[str]) -> str:
    """"[a](#a) · [b](#b)": links to the report's headings."""
    return " · ".join(f"[{h}](#{slug(h)})" for h in headings)


def report_blocks(inputs: Inputs, found: dict) -> list[Block]:
    params = inputs.params
    comparison = comparison_paths(Path("."), inputs.published)[1].as_posix()
    intro = (f"This benchmark re-implements the {UPSTREAM.format(inputs.published)} in a DVC "
             f"pipeline; its published values are the tests' reference and the [generated "
             f"comparison]({comparison}) "
             "shows where we agree. DREAMS is our own loop (see the methodology notes).")
    blocks: list[Block] = [Heading(1, TITLE), Para(intro), Bullets(tuple(config_lines(params))),
                           Quote("**Headline.** " + headline(found))]
    stability = stability_text(found)
    if stability:
        blocks.append(Quote("**Rank stability.** " + stability))
    if len(inputs.skipped):
        blocks.append(Quote("**Methods not run here:** " + "; ".join(
            f"{r.method} on {r.dataset}: {r.reason}" for r in inputs.skipped.itertuples())))
    supplements = supplement_blocks(inputs.supplements)
    blocks.append(Para("Contents: " + _links(
        ["Reading guide"] + ([CLAIMS] if found["claims"] else [])
        + [DATASETS[d].title for d in params.datasets]
        + [SUPPLEMENTS] + [release_title(old, new) for old, new, _ in inputs.releases]
        + ["Methodology notes"])))
    blocks += reading_guide(inputs, found)
    blocks += claims_section(inputs, found)
    for dataset in params.datasets:
        blocks += dataset_section(dataset, inputs, found)
    blocks += [Heading(2, SUPPLEMENTS), Para(
        "Other data and other questions, each a pipeline stage of its own: "
        + _links([b.text for b in supplements if isinstance(b, Heading) and b.level == 2]))]
    blocks += supplements
    for old, new, tables in inputs.releases:
        blocks += (release_section(tables, old, new) if inputs.checkout is None
                   else release_pointer(old, new, inputs.checkout))
    blocks += methodology(inputs, found)
    blocks += rebuild_section(params)
    return blocks
