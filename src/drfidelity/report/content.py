"""What the report says, built from the results, the figure facts and the parameters.

Every number in a sentence or caption is read from ``results/metrics_aggregated.csv``,
``results/skipped_methods.csv``, ``figures/{dataset}/facts.json``, ``params.yaml`` or a
constant of the code it describes; :func:`findings` computes them once, for REPORT and the paper's macros.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from drfidelity.core.layout import comparison_paths
from drfidelity.core.params import Params, snr_label
from drfidelity.registry import METHODS
from drfidelity.datasets.registry import DATASETS, knob_values
from drfidelity.report.captions import figure_caption
from drfidelity.report.claims import claims, tuning_table
from drfidelity.report.document import Block, Bullets, Figure, Heading, Para, Quote, Table, slug
from drfidelity.report.guide import (CLAIMS, claims_section, dataset_count, methodology,
                                     reading_guide, rebuild_section, run_once_sentence)
from drfidelity.report.inputs import Inputs
from drfidelity.report.movement import HEADING as MOVEMENT, Rule, movement_section, moved, steps
from drfidelity.report.ranking import rank_stability
from drfidelity.report.releases import release_pointer, release_section, title as release_title
from drfidelity.report.studies import STUDIES_HEADING, study_blocks
from drfidelity.report.tables import TRUTH_PAIRS, and_list, fixed, interval_words, truth_table

UPSTREAM = "DR Fidelity Benchmark {} (toorpia/dr-fidelity-benchmark, MIT)"


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
        "movement": None if inputs.frozen is None else _movement(inputs, list(per)),
        "claims": ([] if inputs.published_aggregated is None else claims(
            inputs.params, inputs.aggregated, inputs.published_aggregated, inputs.per_run,
            tuning_table(inputs.studies.tables))),
    }


def _movement(inputs: Inputs, datasets: list[str]) -> tuple[list, list]:
    """(steps, moved places) from the frozen ranking to this one, over the datasets both
    rank."""
    frozen_runs, frozen = inputs.frozen
    here = Rule(inputs.params.methods, inputs.params.seeds, inputs.params.ranking)
    shared = [d for d in datasets if d in set(frozen_runs["dataset"])]
    found = steps(frozen_runs, frozen, inputs.per_run, here, shared)
    return found, moved(found, shared)


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
        + run_once_sentence(params),
        "Every metric is exact on all N(N−1)/2 pairs; per-run values are in "
        "`results/metrics_per_run.csv`, medians and CIs in `results/metrics_aggregated.csv`.",
    ]


def headline(found: dict) -> str:
    n = found["n_datasets"]
    (sigma_m, sigma_k), (near_m, near_k) = found["sigma_top"], found["near_top"]
    crush, crush_ds, crush_m = found["worst_crush"]
    parts = []
    if sigma_m:
        parts.append(f"**{sigma_m}** has the highest Σ (shared or alone) on {dataset_count(sigma_k, n)}")
    if near_m:
        parts.append(f"**{near_m}** keeps the near structure best (highest first-mode near-band "
                     f"ρ) on {dataset_count(near_k, n)}")
    text = "; ".join(parts) + "."
    text += (f" The method with the best full ρ is not the one with the best near ρ on "
             f"{dataset_count(found['full_not_near'], n)}: a high global ρ does not say that near "
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
            f"ambient data, the full-ρ leader is the same on {dataset_count(holds['full'], n)} and the "
            f"near-ρ leader on {dataset_count(holds['near'], n)}")
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
            f"{dataset_count(len(above), len(found['datasets']))}, where its lead rewards following "
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
                             figure_caption("gallery", dataset, facts) + missing))
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
        blocks.append(Figure(facts["files"][key], figure_caption(key, dataset, facts) + missing))
    return blocks


def table_summary(f: dict) -> str:
    text = f"Σ leader: {and_list(f['sigma_winners'])} ({f['sigma_max']} points)."
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
            + (f"Near ρ above that ({and_list(above)}) rewards following the noise."
               if above else "No method's near ρ exceeds it."))


# ------------------------------------------------------------------------- whole report

TITLE = "drfidelity — distance-fidelity benchmark report"


def _links(headings: list[str]) -> str:
    """"[a](#a) · [b](#b)": links to the report's headings."""
    return " · ".join(f"[{h}](#{slug(h)})" for h in headings)


def _intro(inputs: Inputs) -> str:
    """What this configuration rebuilds: a published release (and where the comparison with
    it is), or, for the living configuration, none (and where the frozen one's report is)."""
    if inputs.published is None:
        return ("This is the living configuration: the frozen benchmark's datasets and metrics, "
                "rebuilt by the same DVC pipeline with the methods researchers compare against "
                f"today and {inputs.params.seeds} seeds for each stochastic method. It "
                "reproduces no published release, so no value here is checked against a "
                f"published one; the frozen configuration's report is [REPORT.md]"
                f"({inputs.checkout or '.'}/REPORT.md). DREAMS is our own loop (see the "
                "methodology notes).")
    comparison = comparison_paths(Path("."), inputs.published)[1].as_posix()
    return (f"This benchmark re-implements the {UPSTREAM.format(inputs.published)} in a DVC "
            f"pipeline; its published values are the tests' reference and the [generated "
            f"comparison]({comparison}) shows where we agree. DREAMS is our own loop (see the "
            "methodology notes).")


def report_blocks(inputs: Inputs, found: dict) -> list[Block]:
    params = inputs.params
    blocks: list[Block] = [Heading(1, TITLE), Para(_intro(inputs)), Bullets(tuple(config_lines(params))),
                           Quote("**Headline.** " + headline(found))]
    stability = stability_text(found)
    if stability:
        blocks.append(Quote("**Rank stability.** " + stability))
    if len(inputs.skipped):
        blocks.append(Quote("**Methods not run here:** " + "; ".join(
            f"{r.method} on {r.dataset}: {r.reason}" for r in inputs.skipped.itertuples())))
    studies = study_blocks(inputs.studies)
    blocks.append(Para("Contents: " + _links(
        ["Reading guide"] + ([CLAIMS] if found["claims"] else [])
        + ([MOVEMENT] if found["movement"] else [])
        + [DATASETS[d].title for d in params.datasets]
        + [STUDIES_HEADING] + [release_title(old, new) for old, new, _ in inputs.releases]
        + ["Methodology notes"])))
    blocks += reading_guide(inputs, found)
    blocks += claims_section(inputs, found)
    if found["movement"]:
        blocks += movement_section(*found["movement"], inputs.frozen[1], inputs.checkout)
    for dataset in params.datasets:
        blocks += dataset_section(dataset, inputs, found)
    blocks += [Heading(2, STUDIES_HEADING), Para(
        "Other data and other questions, each a pipeline stage of its own: "
        + _links([b.text for b in studies if isinstance(b, Heading) and b.level == 2]))]
    blocks += studies
    for old, new, tables in inputs.releases:
        blocks += (release_section(tables, old, new) if inputs.checkout is None
                   else release_pointer(old, new, inputs.checkout))
    blocks += methodology(inputs, found)
    blocks += rebuild_section(params)
    return blocks
