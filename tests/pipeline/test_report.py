"""Ranking, highlighting and rendering from the published aggregated table; Σ marks in every
committed table; agreement with the v1.3.0 paper tables; computed prose and macros."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from drfidelity.core.layout import release_params_path, release_results_dir
from drfidelity.core.params import load_params
from drfidelity.report.latex import latex_cell, latex_table
from drfidelity.report.markdown import markdown_table
from drfidelity.report.ranking import composite_points
from drfidelity.report.tables import format_value, headline, ranking_table
from pipeline_helpers import REPO

# the v1.3.0 REPORT.md: rows in Σ order with (points per scored column, Σ).
PUBLISHED_RANKING = {
    "density": [("toorPIA", (4, 4), 8), ("DREAMS", (1, 5), 6), ("PCC", (5, 0), 5),
                ("PCA", (3, 1), 4), ("PyMDE", (2, 2), 4), ("t-SNE", (0, 3), 3),
                ("Isomap", (0, 0), 0), ("UMAP", (0, 0), 0)],
    "clusters": [("toorPIA", (5, 3), 8), ("DREAMS", (1, 5), 6), ("PyMDE", (4, 0), 4),
                 ("PCC", (3, 1), 4), ("PCA", (2, 2), 4), ("t-SNE", (0, 4), 4),
                 ("UMAP", (0, 0), 0), ("Isomap", (0, 0), 0)],
    "transition": [("PCC", (4, 3), 7), ("t-SNE", (2, 4), 6), ("toorPIA", (5, 0), 5),
                   ("DREAMS", (0, 5), 5), ("PCA", (3, 1), 4), ("UMAP", (0, 2), 2),
                   ("PyMDE", (1, 0), 1), ("Isomap", (0, 0), 0)],
    "outliers": [("toorPIA", (5, 3, 5), 13), ("PCA", (3, 2, 4), 9), ("PCC", (4, 1, 3), 8),
                 ("DREAMS", (1, 5, 0), 6), ("t-SNE", (0, 4, 1), 5), ("PyMDE", (2, 0, 0), 2),
                 ("Isomap", (0, 0, 2), 2), ("UMAP", (0, 0, 0), 0)],
    "populations": [("toorPIA", (5, 3), 8), ("DREAMS", (3, 5), 8), ("PCC", (4, 2), 6),
                    ("t-SNE", (0, 4), 4), ("PCA", (2, 1), 3), ("PyMDE", (1, 0), 1),
                    ("UMAP", (0, 0), 0), ("Isomap", (0, 0), 0)],
}
# the v1.3.0 REPORT.md: the outright-failure cells.
PUBLISHED_FAILURES = {
    "density": {("PCC", "near · first-mode band"), ("PCC", "tight-cluster scale ×"),
                ("Isomap", "near · first-mode band")},
    "clusters": {("PCC", "tight-cluster scale ×"), ("Isomap", "near · first-mode band")},
    "transition": set(),
    "outliers": set(),
    "populations": {("UMAP", "tight-cluster scale ×"), ("Isomap", "near · first-mode band")},
}


@pytest.fixture(scope="module")
def published(published_results) -> pd.DataFrame:
    return pd.read_csv(published_results / "metrics_aggregated.csv",
                       float_precision="round_trip")


@pytest.mark.parametrize("dataset", list(PUBLISHED_RANKING))
def test_rebuilds_published_points_and_order(published, dataset):
    table = ranking_table(published, dataset, {})
    n_scored = len(PUBLISHED_RANKING[dataset][0][1])
    got = [(method, tuple(int(c.text) for c in cells[:n_scored]), int(cells[n_scored].text))
           for method, cells in table.rows]
    assert got == PUBLISHED_RANKING[dataset]


def test_v1_4_0_rule_rebuilds_its_populations_ranking(imported_root):
    """v1.4.0's populations ranking (its notes: toorPIA 12 = 5/3/4, DREAMS 10, PCC 9, PCA 8,
    t-SNE 4, PyMDE 2, UMAP 0, Isomap 0) from its published medians under the ranking rule of
    releases/v1.4.0/params.yaml; a minority ρ below 0 would be an outright failure."""
    published = pd.read_csv(release_results_dir(imported_root, "v1.4.0") /
                            "metrics_aggregated.csv", float_precision="round_trip")
    rule = load_params(release_params_path(REPO, "v1.4.0")).ranking
    table = ranking_table(published, "populations", rule)
    assert [c.header for c in table.columns][:4] == ["full pts", "near pts", "minority pts", "Σ"]
    assert table.columns[-1].header == "minority ρ"
    got = [(method, tuple(int(c.text) for c in cells[:4])) for method, cells in table.rows]
    assert got == [("toorPIA", (5, 3, 4, 12)), ("DREAMS", (3, 5, 2, 10)), ("PCC", (4, 2, 3, 9)),
                   ("PCA", (2, 1, 5, 8)), ("t-SNE", (0, 4, 0, 4)), ("PyMDE", (1, 0, 1, 2)),
                   ("UMAP", (0, 0, 0, 0)), ("Isomap", (0, 0, 0, 0))]
    minority = published["metric"] == "minority_shepard__vs_ambient"
    negative = published.assign(median=published["median"].mask(minority, -0.5),
                                ci_hi=published["ci_hi"].mask(minority, -0.1))
    flagged = ranking_table(negative, "populations", rule)
    assert all(cells[-1].mark == "crit" for _, cells in flagged.rows)
    assert "minority ρ" not in [c.header for c in ranking_table(negative, "populations",
                                                                 {}).columns]


@pytest.mark.parametrize("dataset", list(PUBLISHED_FAILURES))
def test_rebuilds_published_failure_flags(published, dataset):
    table = ranking_table(published, dataset, {})
    headers = [c.header for c in table.columns]
    flagged = {(method, headers[i]) for method, cells in table.rows
               for i, cell in enumerate(cells) if cell.mark == "crit"}
    assert flagged == PUBLISHED_FAILURES[dataset]


def test_best_scale_is_closest_to_one_and_has_no_worst(published):
    table = ranking_table(published, "density", {})
    col = [c.header for c in table.columns].index("tight-cluster scale ×")
    marks = {method: cells[col].mark for method, cells in table.rows}
    assert marks["PCA"] == "best"          # 0.728 is closest to 1 in log terms
    assert "worst" not in marks.values()


def test_exact_ties_keep_canonical_order():
    medians = {"PCA": {"k": 0.5}, "Isomap": {"k": 0.5}, "UMAP": {"k": 0.1}}
    points = composite_points(medians, ["PCA", "Isomap", "UMAP"], ["k"])
    assert [points[m]["k"] for m in ("PCA", "Isomap", "UMAP")] == [5, 4, 3]


def test_missing_value_earns_no_points():
    medians = {"PCA": {"k": 0.5}, "Isomap": {}}
    points = composite_points(medians, ["PCA", "Isomap"], ["k"])
    assert points["Isomap"]["k"] is None and points["Isomap"]["total"] == 0


def test_cell_format_shows_wide_cis_only():
    assert format_value(0.81234, 0.8, 0.82, 3) == "0.812 [0.800, 0.820]"
    assert format_value(0.81234, 0.8122, 0.8124, 3) == "0.812"
    assert format_value(0.81234, 0.5, 0.9, 1) == "0.812"


def test_latex_cell_marks():
    assert latex_cell("0.812 [0.800, 0.820]", "best") == r"\textbf{0.812 {\scriptsize[0.800, 0.820]}}"
    assert latex_cell("-0.028", "crit") == r"-0.028\,\textsuperscript{\dag}"
    assert latex_cell("0.100", "worst") == r"\textit{0.100}"


def test_renderers_keep_every_method(published):
    table = ranking_table(published, "outliers", {})
    md = markdown_table(table)
    tex = latex_table(table, title="Off-subspace outliers", caption_note="note")
    for method, _ in table.rows:
        assert f"| {method} |" in md
        assert f"\n{method} & " in tex
    assert len(table.rows) == 8  # the previous release dropped the 8th row


# ---------------------------------------------------------------- Σ highlighting, every table

MD_MARK = re.compile(r"^(\*\*|\*)?(-?\d+)(?:\*\*|\*)?$")
TEX_MARK = re.compile(r"^(?:\\text(bf|it)\{)?(-?\d+)\}?$")


def assert_sigma_marks(sigmas: list[tuple[int, str | None]], where: str) -> None:
    """Bold exactly on the highest Σ, italic exactly on the lowest (when they differ)."""
    values = [v for v, _ in sigmas]
    for value, mark in sigmas:
        expected = None
        if len(set(values)) > 1:
            expected = "best" if value == max(values) else "worst" if value == min(values) else None
        assert mark == expected, f"{where}: Σ {value} marked {mark}, expected {expected}"


def markdown_sigmas(text: str) -> list[list[tuple[int, str | None]]]:
    tables, current, column = [], None, None
    for line in text.splitlines():
        if not line.startswith("|"):
            current = column = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if column is None:
            if "Σ" in cells:
                column, current = cells.index("Σ"), []
                tables.append(current)
            continue
        if set(cells[column]) <= {"-", " "}:
            continue
        match = MD_MARK.match(cells[column])
        assert match, f"unexpected Σ cell {cells[column]!r}"
        mark = {"**": "best", "*": "worst", None: None}[match.group(1)]
        current.append((int(match.group(2)), mark))
    return tables


def latex_sigmas(text: str) -> list[tuple[int, str | None]]:
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("method &"))
    column = [c.strip() for c in header.rstrip("\\ ").split("&")].index(r"$\Sigma$")
    body = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    out = []
    for line in body:
        cell = [c.strip() for c in line.rstrip("\\ ").split("&")][column]
        match = TEX_MARK.match(cell)
        assert match, f"unexpected Σ cell {cell!r}"
        out.append((int(match.group(2)), {"bf": "best", "it": "worst", None: None}[match.group(1)]))
    return out


@pytest.mark.parametrize("dataset", list(PUBLISHED_RANKING))
def test_sigma_is_bold_only_on_best_and_italic_only_on_worst(published, dataset):
    table = ranking_table(published, dataset, {})
    (sigmas,) = markdown_sigmas(markdown_table(table))
    assert_sigma_marks(sigmas, f"{dataset} markdown")
    assert_sigma_marks(latex_sigmas(latex_table(table, title="t", caption_note="n")),
                       f"{dataset} latex")
    assert [m for _, m in sigmas].count("best") >= 1 and "worst" in [m for _, m in sigmas]


def test_committed_report_and_paper_tables_mark_sigma_right():
    report = (REPO / "REPORT.md").read_text()
    tables = markdown_sigmas(report)
    # the ranking tables, one per dataset (the studies', claims and appendix tables have no Σ)
    ranking = [p for p in sorted((REPO / "paper" / "tables").glob("*.tex"))
               if p.stem in PUBLISHED_RANKING]
    assert len(tables) == len(ranking) >= 5
    for i, sigmas in enumerate(tables):
        assert_sigma_marks(sigmas, f"REPORT.md table {i + 1}")
    for path in ranking:
        assert_sigma_marks(latex_sigmas(path.read_text()), path.name)


def test_sigma_check_catches_the_old_all_bold_rule():
    with pytest.raises(AssertionError):
        assert_sigma_marks([(8, "best"), (6, "best"), (0, "best")], "all bold")


# ------------------------------------------------- agreement with the v1.3.0 paper tables

CELL_MARKUP = re.compile(r"\\text(?:bf|it)\{(.*)\}$")


def value_cells(tex: str) -> dict[str, list[str]]:
    """method -> value cells (points and Σ excluded) with bold/italic/dagger stripped."""
    lines = tex.splitlines()
    header = [c.strip() for c in next(l for l in lines if l.startswith("method &"))
              .rstrip("\\ ").split("&")]
    skip = {"full", "near", "outl.", r"$\Sigma$", "method"}
    keep = [i for i, h in enumerate(header) if h not in skip]
    rows = {}
    for line in lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]:
        cells = [c.strip() for c in line.rstrip("\\ ").split("&")]
        cleaned = []
        for i in keep:
            cell = cells[i].replace(r"\,\textsuperscript{\dag}", "")
            match = CELL_MARKUP.match(cell)
            cleaned.append(match.group(1) if match else cell)
        rows[cells[0]] = cleaned
    return rows


@pytest.mark.parametrize("dataset", list(PUBLISHED_RANKING))
def test_deterministic_value_cells_equal_the_published_paper_tables(published_paper_tables,
                                                                    dataset):
    ours = pd.read_csv(REPO / "results" / "metrics_aggregated.csv", float_precision="round_trip")
    mine = value_cells(latex_table(ranking_table(ours, dataset, {}), title="t", caption_note="n"))
    theirs = value_cells((published_paper_tables / f"{dataset}.tex").read_text())
    compared = 0
    for method in ("toorPIA", "PCA", "Isomap"):
        if method in theirs and method in mine:
            assert mine[method] == theirs[method], method
            compared += 1
    assert compared >= 2  # the published tables drop the last-ranked row (Isomap on three)


# ---------------------------------------------------------------- computed prose and macros

def published_inputs(published, skipped=None):
    from drfidelity.core.params import load_params
    from drfidelity.report.content import Inputs

    skipped = pd.DataFrame(skipped or [], columns=["dataset", "method", "reason"])
    return Inputs(load_params(REPO / "params.yaml"), published, skipped, {})


def test_findings_read_the_published_results(published):
    from drfidelity.report.content import findings, headline

    found = findings(published_inputs(published))
    assert found["near_top"] == ("DREAMS", 5)  # the v1.3.0 tables: DREAMS leads on all five
    assert found["datasets"]["density"]["sigma_winners"] == ["toorPIA"]
    assert found["datasets"]["populations"]["sigma_winners"] == ["toorPIA", "DREAMS"]
    crush, dataset, method = found["worst_crush"]
    assert (dataset, method) == ("density", "PCC") and crush == pytest.approx(93.468, abs=5e-4)
    assert found["datasets"]["clusters"]["near_pct"] == pytest.approx(100 * 70929 / 499500)
    text = headline(found)
    assert "**DREAMS**" in text and "5 of 5 datasets" in text and "93.5×" in text


def test_truth_sentences_follow_the_results(published):
    """Against the ground truth the published near-ρ leaders all change (DREAMS leads near ρ
    on 5 of 5 datasets against the ambient data, on none against the truth) and the full-ρ
    ones hold; the sentences say so, and say otherwise once the results do."""
    from drfidelity.report.content import findings, headline, truth_summary

    found = findings(published_inputs(published))
    assert found["truth_holds"] == {"full": 5, "near": 0}
    assert found["near_truth_top"] == [("PCA", 3), ("PCC", 1), ("toorPIA", 1)]
    text = headline(found)
    assert ("the full-ρ leader is the same on 5 of 5 datasets and the near-ρ leader on 0 of 5 "
            "datasets (near-ρ leaders against the truth: PCA on 3, PCC on 1, toorPIA on 1)"
            ) in text
    clusters = found["datasets"]["clusters"]
    assert truth_summary(clusters) == (
        "Against the ground truth, toorPIA has the best full ρ both ways (0.525 against the "
        "truth); the best near ρ is PCA's (0.277), where against the ambient data it is "
        "DREAMS's.")
    assert [c.header for c in clusters["truth_table"].columns] == ["vs ambient", "vs truth"] * 2
    assert [m for m, _ in clusters["truth_table"].rows] == clusters["methods"]

    # DREAMS's near ρ against the truth raised above everyone's on clusters
    changed = published.copy()
    row = ((changed.dataset == "clusters") & (changed.method == "DREAMS")
           & (changed.metric == "shepard_near__vs_truth"))
    changed.loc[row, ["median", "ci_lo", "ci_hi"]] = 0.9
    found = findings(published_inputs(changed))
    assert found["truth_holds"] == {"full": 5, "near": 1}
    assert "near-ρ leader on 1 of 5 datasets" in headline(found)
    assert truth_summary(found["datasets"]["clusters"]).endswith(
        "DREAMS has the best near ρ both ways (0.900 against the truth).")


def test_the_noise_ceiling_row_and_sentences_follow_the_results(published):
    """The truth scored as a map (results/noise_ceiling.csv): a last row of the truth table,
    a sentence per dataset naming the methods whose near ρ exceeds it, and one in the
    headline counting the datasets whose near-ρ leader does; all move with the numbers."""
    from dataclasses import replace

    from drfidelity.report.content import findings, headline, truth_summary
    from drfidelity.report.tables import CEILING_LABEL

    datasets = ["density", "clusters", "transition", "outliers", "populations"]
    ceiling = pd.DataFrame({"dataset": datasets, "snr": 1.0,
                            "full_shepard": [0.977, 0.804, 0.939, 0.944, 0.936],
                            "shepard_near__vs_ambient": [0.128, 0.115, 0.810, 0.473, 0.375]})
    inputs = replace(published_inputs(published), ceiling=ceiling)
    found = findings(inputs)
    clusters = found["datasets"]["clusters"]
    label, cells = clusters["truth_table"].rows[-1]
    assert label == CEILING_LABEL and [c.text for c in cells] == ["0.804", "—", "0.115", "—"]
    above = [m for m, v in clusters["near"].items() if v > 0.115]
    assert above and truth_summary(clusters).endswith(
        "The noise-free geometry itself, scored as a map, reaches full ρ 0.804 and near ρ "
        f"0.115 against the ambient data (the last row): what drawing the truth perfectly "
        f"earns. Near ρ above that ({', '.join(above[:-1])} and {above[-1]}) rewards "
        "following the noise.")
    leads = {d: f["near_leader"][1] for d, f in found["datasets"].items()}
    beyond = sum(leads[d] > c for d, c in zip(datasets, ceiling["shepard_near__vs_ambient"]))
    assert (f"the near-ρ leader scores above that on {beyond} of 5 datasets"
            in headline(found))

    # a ceiling above every method: no method follows the noise there, one dataset fewer
    raised = ceiling.assign(shepard_near__vs_ambient=ceiling["shepard_near__vs_ambient"]
                            .where(ceiling.dataset != "clusters", 0.99))
    found = findings(replace(inputs, ceiling=raised))
    assert truth_summary(found["datasets"]["clusters"]).endswith(
        "No method's near ρ exceeds it.")
    assert f"above that on {beyond - 1} of 5 datasets" in headline(found)
    # without the file: no row, no sentence
    found = findings(published_inputs(published))
    assert found["datasets"]["clusters"]["truth_table"].rows[-1][0] != CEILING_LABEL
    assert "noise-free geometry" not in headline(found)


def test_macros_and_report_name_a_missing_method_with_its_reason(published):
    from drfidelity.report.content import findings, report_blocks
    from drfidelity.report.document import to_markdown
    from drfidelity.report.latex import latex_macros

    reason = "no cache and TOORPIA_API_KEY unset"
    kept = published[published.method != "toorPIA"]
    inputs = published_inputs(kept, [("density", "toorPIA", reason)])
    found = findings(inputs)
    report = to_markdown(report_blocks(inputs, found))
    assert f"toorPIA on density: {reason}" in report and f"toorPIA not run — {reason}" in report
    macros = latex_macros(found, inputs.params, "toorPIA on density", 15)
    assert r"\newcommand{\DensityNearLeader}{DREAMS}" in macros
    assert r"\newcommand{\SkippedNote}{toorPIA on density}" in macros
    assert r"\newcommand{\OutliersScoredColumns}{3}" in macros


def test_headline_metrics_are_the_tables_numbers():
    """results/headline.json (the DVC metrics file): per method the tables' Σ summed over the
    datasets and the mean full rho median; per dataset the Σ leader; the committed file is
    that, and small enough for one screen (at most 40 metrics)."""
    aggregated = pd.read_csv(REPO / "results" / "metrics_aggregated.csv",
                             float_precision="round_trip")
    datasets = list(dict.fromkeys(aggregated.dataset))
    sigma, full, leaders = {}, {}, {}
    for dataset in datasets:
        table = ranking_table(aggregated, dataset, {})
        total = [c.key for c in table.columns].index("total")
        totals = {method: int(cells[total].text) for method, cells in table.rows}
        leaders[dataset] = {m for m, v in totals.items() if v == max(totals.values())}
        rows = aggregated[(aggregated.dataset == dataset) & (aggregated.metric == "full_shepard")]
        for method, value in totals.items():
            sigma[method] = sigma.get(method, 0) + value
            full.setdefault(method, []).append(float(rows[rows.method == method]["median"].iloc[0]))
    ours = headline(aggregated, datasets, {})
    assert {m: v["sigma"] for m, v in ours.items() if m != "winner"} == sigma
    assert {m: v["full_rho"] for m, v in ours.items() if m != "winner"} == pytest.approx(
        {m: sum(v) / len(v) for m, v in full.items()}, abs=1e-12)
    assert {d: set(w.split("+")) for d, w in ours["winner"].items()} == leaders
    assert sum(len(v) for v in ours.values()) <= 40
    committed = json.loads((REPO / "results" / "headline.json").read_text())
    assert committed == json.loads(json.dumps(ours))
    # the DVC plot: the same per-method numbers, one row per method
    plotted = pd.read_csv(REPO / "results" / "headline.csv", float_precision="round_trip")
    assert {row.method: {"full_rho": row.full_rho, "sigma": row.sigma}
            for row in plotted.itertuples()} == {m: v for m, v in ours.items() if m != "winner"}


def test_rounded_zero_is_unsigned_and_a_failure_needs_the_whole_ci_below_zero():
    from drfidelity.report.tables import Column, column_marks, fixed

    assert fixed(-0.0002) == "0.000" and fixed(-0.00004, 4) == "0.0000"
    assert fixed(-0.031) == "-0.031"
    assert format_value(-0.0002, -0.042, 0.037, 3) == "0.000 [-0.042, 0.037]"
    near = Column("shepard_near__vs_ambient", "near", "g", "higher")
    values = {"A": -0.031, "B": -0.056, "C": 0.4}
    marks = column_marks(near, values, {"A": 0.007, "B": -0.056, "C": 0.41})
    assert marks == {"B": "crit", "C": "best"}  # A's CI reaches above 0: no flag
    assert column_marks(near, values)["A"] == "crit"  # no CI: the median decides


def test_committed_report_links_resolve_and_prose_has_no_parameter_names():
    from drfidelity.core.params import load_params
    from drfidelity.report.document import slug

    report = (REPO / "REPORT.md").read_text()
    anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", report, re.M)}
    links = set(re.findall(r"\]\(#([^)]+)\)", report))
    assert "supplements" in links and sorted(links - anchors) == []
    assert "-0.000" not in report
    params = load_params(REPO / "params.yaml")
    names = {k for knobs in [*params.dataset_params.values(), *params.method_params.values(),
                             *params.studies.values()] for k in knobs if "_" in k}
    prose = re.sub(r"`[^`]*`|\]\([^)]*\)", "", report)
    assert sorted(n for n in names | {"basemap_csvform", "__vs_truth"} if n in prose) == []
    lag = params.studies["random_walk"]["lag"]
    assert f"|Δt| ≤ {lag}" in report and "**saw-tooth score**" in report
    assert "**full fidelity std**" in report


def test_rank_stability_recomputes_the_tables_ranking_and_counts_what_one_seed_moves():
    """With every run, the readout's ranking is the tables' (its medians are the table's);
    a seed that alone puts a method first is seen: leaving it out moves the leader."""
    from drfidelity.report.content import findings, stability_text
    from drfidelity.report.ranking import rank_stability

    per_run = pd.read_csv(REPO / "results" / "metrics_per_run.csv", float_precision="round_trip")
    aggregated = pd.read_csv(REPO / "results" / "metrics_aggregated.csv",
                             float_precision="round_trip")
    params = load_params(REPO / "params.yaml")
    readout = rank_stability(per_run, params.datasets, params.ranking, params.methods)
    found = findings(published_inputs(aggregated))
    for dataset in params.datasets:
        table = ranking_table(aggregated, dataset, params.ranking)
        left_out = rank_stability(per_run[per_run.dataset == dataset], [dataset],
                                  params.ranking, params.methods)
        assert left_out["all"] == tuple(found["datasets"][dataset]["sigma_winners"])
        assert readout["seeds"][dataset]["n"] == params.seeds
        assert readout["order"][dataset] == tuple(m for m, _ in table.rows)

    # two stochastic methods on one dataset: B wins on seed 2 alone, by far
    rows = [{"dataset": "clusters", "method": m, "seed": s, "stochastic": True,
             "full_shepard": v, "shepard_near__vs_ambient": v}
            for m, values in (("t-SNE", (0.5, 0.5, 0.1)), ("UMAP", (0.4, 0.4, 0.9)))
            for s, v in enumerate(values)]
    two = rank_stability(pd.DataFrame(rows), ["clusters"], {}, ["t-SNE", "UMAP"])
    # all seeds: medians 0.5 against 0.4, t-SNE leads; without seed 0 or 1 the medians are
    # 0.3 against 0.65 (UMAP leads); without seed 2, t-SNE still leads
    assert two["all"] == ("t-SNE",)
    assert two["seeds"]["clusters"] == {"leader": 1, "order": 1, "n": 3}
    text = stability_text({"rank_stability": two})
    assert "stays in clusters 1 of 3 rankings" in text
