"""Stage ``report``: results and figure facts -> ``REPORT.md``, ``REPORT.html``,
``paper/tables/{dataset}.tex`` (and the studies' paper tables, the claims and the
hyper-parameter tables), ``paper/macros.tex`` and the paper's figures.

The figures stages' ``figures/{dataset}/facts.json`` and ``figures/studies/facts.json``
hold the numbers the captions quote; without them (figures not built) the report says so and
shows the tables only. Each study table (``report.studies.tables()``) is optional:
an absent one makes its section a one-line "not built" note. Run in a release's folder, the
stage leaves out what only the checkout's root builds (the scale study) and points to the root
report for what moved between releases.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from drfidelity.core.files import write_array_dir, write_text
from drfidelity.core.layout import (RELEASES, facts_path, paper_paths, published_release,
                                    published_results_dir, release_diff_paths,
                                    report_paths, results_dir, study_figures_dir,
                                    study_table_path)
from drfidelity.core.params import Params, load_params, snr_label
from drfidelity.report.claims import claims_latex, claims_macros, tuning_table
from drfidelity.report.content import TITLE, findings, report_blocks
from drfidelity.report.guide import points_rule, run_once
from drfidelity.report.inputs import Inputs
from drfidelity.report.movement import Rule
from drfidelity.report.document import to_html, to_markdown
from drfidelity.metrics import bands
from drfidelity.metrics.cluster_scale import MIN_CLUSTER_POINTS
from drfidelity.figures.settings import POINTWISE_KAPPA_S, POINTWISE_KAPPA_T, RECALL_K
from drfidelity.report.latex import escape, latex_macros, latex_table, setup_macros
from drfidelity.report.paper import PAPER_FIGURES, paper_title
from drfidelity.metrics.bridges import TORN_RATIO
from drfidelity.report.studies import (MAIN_TABLES, StudyResults, study_macros,
                                       study_paper_figures, study_paper_tables,
                                       tables as study_tables)
from drfidelity.report.ranking import TOP_POINTS
from drfidelity.report.scale import TABLES as SCALE_TABLES
from drfidelity.core.storage import atomic_write
from drfidelity.report.tables import CI_MIN_WIDTH, CRUSH_LIMIT, interval_words
from drfidelity.report.tuning import tuning, tuning_latex, tuning_macros
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def ranking_rules(params: Params) -> str:
    """The ranking tables' rules (composite points, marks, CIs), stated once in the paper's
    text (macro ``\\RankingRules``) rather than in every caption."""
    deterministic = run_once(params)
    return (
        f"Composite: {points_rule()} points for places 1--{TOP_POINTS} per scored column "
        "(exact ties keep the canonical method order); rows sorted by $\\Sigma$, then full "
        "$\\rho$. \\textbf{Bold} = best in the column, \\textit{italic} = worst (ties all "
        "marked, $\\Sigma$ included); \\dag{} = outright failure (a near or outlier $\\rho$ "
        "whose bootstrap CI lies below 0, or the largest tightest-cluster crush when above "
        f"${CRUSH_LIMIT}\\times$). Medians over {params.seeds} seeds; in brackets, where "
        f"at least {CI_MIN_WIDTH:g} wide, "
        + escape(interval_words(params.seeds, params.bootstrap.alpha))
        + (f"; {', '.join(deterministic)} run once (deterministic)" if deterministic else "")
        + "."
    )


def caption_note(params: Params, skipped: list[tuple[str, str]]) -> str:
    """What a paper ranking table's caption adds to its title: the input, where the rules are
    stated, the source file and any method not run."""
    note = (f"SNR$={snr_label(params.snr)}$, $N={params.n}$, $D={params.d}$; columns, points "
            "and marks as in Section~\\ref{sec:ranking}. From "
            "\\texttt{results/metrics\\_aggregated.csv}.")
    if skipped:
        note += " Not run: " + "; ".join(f"{escape(m)} ({escape(r)})" for m, r in skipped) + "."
    return note


def paper_constants(params: Params) -> dict[str, object]:
    """The code constants the paper's definitions quote, by macro name."""
    return {
        "RankingRules": ranking_rules(params), "PointsRule": points_rule(),
        "TopPoints": TOP_POINTS, "CrushLimit": CRUSH_LIMIT,
        "BandPercentiles": ", ".join(map(str, bands.PERCENTILES)),
        "BandBins": bands.HIST_BINS, "BandSmooth": bands.SMOOTH_WIDTH,
        "BandOrder": bands.MODE_ORDER, "BandRelHeight": f"{100 * bands.MODE_REL_HEIGHT:g}",
        "BandDip": f"{100 * bands.VALLEY_DIP:g}", "BandFallback": bands.FALLBACK_PERCENTILE,
        "TightMinPoints": MIN_CLUSTER_POINTS, "KappaS": POINTWISE_KAPPA_S,
        "KappaT": POINTWISE_KAPPA_T, "TornRatio": f"{TORN_RATIO:.3f}",
    }


def load_studies(root: Path, params: Params, at_checkout: bool = True) -> StudyResults:
    """The study tables that exist, the scale study's too at the checkout's root
    (``at_checkout``: a release's pipeline never builds it), and the study figures'
    facts (if drawn)."""
    main = MAIN_TABLES + (SCALE_TABLES if at_checkout else ())
    paths = {name: (results_dir(root) / f"{name}.csv" if name in main
                    else study_table_path(root, name))
             for name in study_tables() + main}
    tables = {name: pd.read_csv(path, float_precision="round_trip")
              for name, path in paths.items() if path.exists()}
    facts = study_figures_dir(root) / "facts.json"
    return StudyResults(tables, json.loads(facts.read_text()) if facts.exists() else None,
                       params, scale=at_checkout)


def checkout_from(root: Path) -> str | None:
    """The checkout's root relative to ``root``: "../.." from a configuration's folder
    ``releases/<name>`` (a later release or the living one), None at the checkout's root."""
    here = root.resolve()
    return "../.." if here.parent.name == "releases" else None


def load_release_diffs(root: Path) -> list[tuple[str, str, dict | None]]:
    """The release_diff stage's tables per two consecutive releases (None where absent)."""
    found = []
    for old, new in zip(RELEASES, RELEASES[1:]):
        paths = release_diff_paths(root, old, new)
        tables = ({part: pd.read_csv(path, float_precision="round_trip")
                   for part, path in paths.items()}
                  if all(p.exists() for p in paths.values()) else None)
        found.append((old, new, tables))
    return found


def frozen_ranking(checkout: Path) -> tuple[pd.DataFrame, Rule]:
    """The checkout's runs and what decides their ranking: the frozen ranking the living
    configuration's report starts from."""
    frozen = load_params(checkout / "params.yaml", NAMES)
    return (pd.read_csv(results_dir(checkout) / "metrics_per_run.csv",
                        float_precision="round_trip"),
            Rule(frozen.methods, frozen.seeds, frozen.ranking))


def run(params: Params, root: Path) -> None:
    aggregated = pd.read_csv(results_dir(root) / "metrics_aggregated.csv",
                             float_precision="round_trip")
    skipped = pd.read_csv(results_dir(root) / "skipped_methods.csv")
    facts = {}
    for dataset in params.datasets:
        path = facts_path(root, dataset)
        if path.exists():
            facts[dataset] = json.loads(path.read_text())
        else:
            print(f"[report] {path} not found: {dataset} without figures "
                  f"(run `drfidelity stage figures {dataset}` first)", flush=True)
    published = published_release(root)
    # the checkout's own stages (release_diff, scale) run at its root only: a release's report
    # points to what moved between releases and leaves the scale study out
    checkout = checkout_from(root)
    studies = load_studies(root, params, at_checkout=checkout is None)
    diffs = (load_release_diffs(root) if checkout is None
             else [(old, new, None) for old, new in zip(RELEASES, RELEASES[1:])])
    per_run = pd.read_csv(results_dir(root) / "metrics_per_run.csv",
                          float_precision="round_trip")
    published_table = published_results_dir(root) / "metrics_aggregated.csv"
    ceiling = results_dir(root) / "noise_ceiling.csv"
    inputs = Inputs(params, aggregated, skipped, facts, studies, diffs, published, per_run,
                    pd.read_csv(published_table, float_precision="round_trip")
                    if published_table.exists() else None, checkout,
                    pd.read_csv(ceiling, float_precision="round_trip")
                    if ceiling.exists() else None)
    if published is None and checkout is not None:
        inputs.frozen = frozen_ranking(root / checkout)
    found = findings(inputs)
    blocks = report_blocks(inputs, found)
    markdown, html = report_paths(root)
    write_text(markdown, to_markdown(blocks))
    write_text(html, to_html(blocks, title=TITLE))

    tables = {f"{dataset}.tex": latex_table(f["table"], title=paper_title(dataset, params),
                                            caption_note=caption_note(params, f["skipped"]))
              for dataset, f in found["datasets"].items()}
    tables.update(study_paper_tables(studies, params))
    if found["claims"]:
        tables["claims.tex"] = claims_latex(found["claims"], published)
    study = tuning_table(studies.tables)
    tuned = [] if study is None else tuning(study, aggregated, params)
    if tuned:
        tables["hyperparams.tex"] = tuning_latex(tuned)
    skipped_text = ("; ".join(f"{escape(r.method)} on {escape(r.dataset)} ({escape(r.reason)})"
                              for r in skipped.itertuples()) or "none")
    figures = {}
    for dataset, key in PAPER_FIGURES:
        if dataset in facts:
            figures[f"{dataset}_{key}.png"] = (root / facts[dataset]["files"][key]).read_bytes()
    drawn = (studies.facts or {}).get("files", {})
    for key in study_paper_figures():
        if key in drawn:
            figures[f"study_{key}.png"] = (root / drawn[key]).read_bytes()
    tables_dir, macros, figures_dir = paper_paths(root)
    write_array_dir(tables_dir, {}, tables)
    write_text(macros, latex_macros(found, params, skipped_text, RECALL_K,
                                    study_macros(studies)
                                    + claims_macros(found["claims"]) + tuning_macros(tuned)
                                    + setup_macros(params, paper_constants(params))))
    for stale in sorted(figures_dir.glob("*.png")):
        if stale.name not in figures:
            stale.unlink()
    for name, data in figures.items():
        atomic_write(figures_dir / name, data)
    print(f"[report] REPORT.md, REPORT.html, {len(tables)} paper tables, "
          f"{len(figures)} paper figures written", flush=True)
