"""The study sections and the add-plot paper table, from the previous release's study
tables: its published numbers (spec §8.4–8.10) come back, every method is listed, an absent
table is a one-line note, and the report stage writes what it says."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from drfidelity.pipeline import report as report_stage
from drfidelity.pipeline import study_figures
from drfidelity.core.params import load_params
from drfidelity.report.document import to_markdown
from drfidelity.report.latex import latex_tabular
from drfidelity.report import kit
from drfidelity.report.studies import (StudyResults, bridge_table, stability_tables,
                                           study_blocks, tables)
from drfidelity.studies import addplot, noise_dims, random_walk

from pipeline_helpers import REPO
from test_study_figures import SKIP_REASON, build_study_workspace

#: spec §8.4, toorPIA's REPORT row (the published paper table lacks it).
TOORPIA_ADDPLOT = ["9.702", "8.617", "1.000", "1.014", "1.730", "0.930"]


@pytest.fixture(scope="module")
def published(published_results) -> dict[str, pd.DataFrame]:
    folder = published_results
    return {n: pd.read_csv(folder / f"{n}.csv", float_precision="round_trip") for n in tables()}


def addplot_table(aggregated, per_run):
    frames = {"addplot_aggregated": aggregated}
    if per_run is not None:
        frames["addplot_per_run"] = per_run
    return addplot.table(StudyResults(frames), kit.KIT)


def timeseries_table(aggregated):
    return random_walk.table(aggregated, None, kit.KIT)


def noise_dims_table(generic, embedding):
    return noise_dims.table(generic, embedding, kit.KIT)


def texts(table) -> dict[str, list[str]]:
    return {method: [c.text for c in cells] for method, cells in table.rows}


def tex_rows(tex: str) -> dict[str, list[str]]:
    """method -> cells of a booktabs body (a \\multicolumn row is one cell)."""
    lines = tex.splitlines()
    body = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    return {cells[0]: cells[1:] for cells in
            ([c.strip() for c in line.rstrip("\\ ").split(" & ")] for line in body)}


def test_addplot_table_lists_all_eight_methods_and_matches_the_published_cells(
        published, published_paper_tables):
    table = addplot_table(published["addplot_aggregated"], published["addplot_per_run"])
    tex = latex_tabular(table, caption=addplot.caption(95), headers=addplot.LATEX_HEADERS)
    ours = tex_rows(tex)
    theirs = tex_rows((published_paper_tables / "addplot.tex").read_text())
    assert list(ours) == ["PCA", "Isomap", "PyMDE", "PCC", "t-SNE", "UMAP", "DREAMS", "toorPIA"]
    assert "toorPIA" not in theirs  # the previous release's generator dropped it
    for method in ("PCA", "Isomap", "UMAP", "DREAMS", "PyMDE", "PCC", "t-SNE"):
        assert ours[method] == theirs[method], method
    assert ours["toorPIA"] == TOORPIA_ADDPLOT
    header = next(l for l in tex.splitlines() if l.startswith("method &"))
    assert header == theirs_header(published_paper_tables)
    assert r"\label{tab:addplot}" in tex and "addplot\\_aggregated.csv" in tex


def theirs_header(paper_tables: Path) -> str:
    text = (paper_tables / "addplot.tex").read_text()
    return next(l for l in text.splitlines() if l.startswith("method &"))


def test_unsupported_rows_in_the_aggregated_table_still_read_not_operable(published):
    aggregated = pd.concat([published["addplot_aggregated"], pd.DataFrame(
        [{"method": "PCC", "metric": "anomaly_radius_ratio_med", "supported": False,
          "note": "no transform"}])])
    rows = texts(addplot_table(aggregated, None))
    assert rows["PCC"] == ["not operable: no transform"] and rows["PCA"][0] == "0.966"


def test_markdown_and_html_span_the_not_operable_cell(published):
    from drfidelity.report.document import html_table
    from drfidelity.report.markdown import markdown_table

    table = addplot_table(published["addplot_aggregated"], published["addplot_per_run"])
    md = markdown_table(table)
    row = next(l for l in md.splitlines() if l.startswith("| t-SNE"))
    assert row == ("| t-SNE | not operable: sklearn TSNE has no out-of-sample transform "
                   "|  |  |  |  |  |")
    assert '<td colspan="6">not operable: pymde optimizes fit coordinates; no transform</td>' \
        in html_table(table)


def test_timeseries_table_is_the_published_one(published):
    table = timeseries_table(published["random_walk_aggregated"])
    rows = texts(table)
    assert list(rows) == ["toorPIA", "PCC", "DREAMS", "PCA", "PyMDE", "Isomap", "UMAP", "t-SNE"]
    assert rows["toorPIA"] == ["0.924", "0.897", "0.970", "0.627"]
    assert rows["t-SNE"] == ["0.524 [0.484, 0.580]", "0.366 [0.324, 0.437]",
                             "0.873 [0.848, 0.911]", "0.951 [0.949, 0.952]"]
    marks = {m: [c.mark for c in cells] for m, cells in table.rows}
    assert marks["DREAMS"][3] == "best" and marks["PCC"][3] == "worst"


def test_step_structure_is_best_closest_to_one():
    rows = [{"method": m, "metric": k, "median": v, "ci_lo": v, "ci_hi": v, "n_runs": 1}
            for m, full, step in (("PCA", 0.8, 1.4), ("UMAP", 0.5, 0.2), ("t-SNE", 0.4, 0.95))
            for k, v in (("full_shepard", full), ("step_structure", step))]
    table = timeseries_table(pd.DataFrame(rows))
    marks = {m: cells[-1].mark for m, cells in table.rows}
    assert marks == {"PCA": None, "UMAP": "worst", "t-SNE": "best"}


def test_noise_dims_table_is_the_published_one(published):
    rows = texts(noise_dims_table(published["dimsweep_aggregated"],
                                  published["dimsweep_embedding_aggregated"]))
    assert list(rows)[-2:] == ["toorPIA (embedding endpoint)", "toorPIA (CSV-form endpoint)"]
    assert "toorPIA" not in rows
    dims = [6, 40, 80, 200, 250, 300, 400, 768, 1500, 2000]
    cell = {m: dict(zip(dims, v)) for m, v in rows.items()}
    assert cell["PCA"][80] == "0.918" and cell["DREAMS"][250] == "—"
    assert cell["PyMDE"][40] == "0.555 [0.480, 0.687]"
    assert cell["toorPIA (embedding endpoint)"][200] == "0.754"
    assert cell["toorPIA (CSV-form endpoint)"][2000] == "0.736 [0.645, 0.882]"


def test_noise_dims_section_states_the_axis_alignment_and_no_rotated_rows(published):
    """The frozen probe (no rotated inputs): the quote says where the signal sits, in words;
    no "(rotated)" row or paragraph."""
    s = StudyResults(published, params=load_params(REPO / "params.yaml"))
    text = to_markdown(noise_dims.section(s, kit.KIT))
    assert "The signal sits in the first 3 columns, axis-aligned (not rotated" in text
    assert "(rotated)" not in text
    assert "(rotated)" not in noise_dims.paper_tables(s, kit, s.params)["noise_dims.tex"]
    general = to_markdown(noise_dims.section(StudyResults(published), kit.KIT))
    assert "The signal sits in the first columns, axis-aligned" in general


def test_stability_and_bridge_tables_are_the_published_ones(published):
    density = texts(stability_tables(published["stability"])["density"])
    assert density["PCC"] == ["3", "0.0103", "0.0033", "0.0018"]
    assert density["t-SNE"] == ["3", "0.0130", "0.0134", "0.0042"]
    bridges = texts(bridge_table(published["bridge_gaps"]))
    assert bridges["toorPIA"] == ["0.126", "0.137", "0.096", "0.135", "0.106", "0.109",
                                  "0.097", "0"]
    assert {m: v[-1] for m, v in bridges.items()} == {
        "PCA": "0", "Isomap": "0", "PyMDE": "0", "PCC": "0", "t-SNE": "4", "UMAP": "4",
        "DREAMS": "3", "toorPIA": "0"}


def test_every_absent_study_is_a_one_line_note():
    text = to_markdown(study_blocks(StudyResults()))
    notes = [l for l in text.splitlines() if l.startswith("> Not built in this run")]
    assert len(notes) == 9   # 8 studies and the scale study
    assert not [l for l in text.splitlines() if l and not l.startswith(("## ", "> Not built"))]


def test_captions_quote_the_figure_facts(published):
    facts = {"files": {"geometry_explainer": "figures/studies/geometry_explainer.png",
                       "dimension_curve": "figures/studies/dimension_curve.png",
                       "basemap_addplot_gallery": "figures/studies/g.png"},
             "geometry_explainer": {"n_series": 7, "length": 123, "d": 45,
                                    "radius_exponent": 0.4321, "step_angle_median": 88.88,
                                    "cross_angle_median": None, "pythagoras_median": 1.0234},
             "dimension_curve": {"ambient": {"6": 1.0, "2000": 0.9876}},
             "basemap_addplot_gallery": {"skipped": {"toorPIA": SKIP_REASON}}}
    text = to_markdown(study_blocks(StudyResults(published, facts)))
    assert "7 series × 123 steps in D = 45" in text and "exponent 0.43" in text
    assert "median 88.9°" in text and "median —°" in text and "ratio 1.023" in text
    assert "0.988 at D = 2000" in text
    assert f"Not drawn: toorPIA ({SKIP_REASON})" in text
    assert "![" in text and "figures/studies/g.png" in text


def test_report_stage_writes_the_studies_and_the_addplot_table(published_results,
                                                                    tmp_path):
    root = build_study_workspace(tmp_path / "ws", published_results)
    for name in ("metrics_aggregated.csv", "metrics_per_run.csv", "skipped_methods.csv",
                 "scale_runs.csv", "scale_exponents.csv", "scale_machine.json"):
        shutil.copyfile(REPO / "results" / name, root / "results" / name)
    params = load_params(REPO / "params.yaml")
    study_figures.run(params, root)
    report_stage.run(params, root)
    report = (root / "REPORT.md").read_text()
    for title in ("Time series (random walks)", "Run-to-run stability",
                  "Supplement — out-of-sample add-plot", "Supplement — noise dimensions",
                  "Bridge gaps (transition)", "Scale: cost against N"):
        assert f"## {title}" in report
    assert "Not built in this run" not in report
    figures = re.findall(r"\]\((figures/studies/[^)]+\.png)\)", report)
    assert len(set(figures)) == 13 and all((root / f).exists() for f in figures)
    tex = (root / "paper" / "tables" / "addplot.tex").read_text()
    assert tex_rows(tex)["toorPIA"] == TOORPIA_ADDPLOT
    assert sorted(p.name for p in (root / "paper" / "figures").glob("study_*.png")) == [
        "study_basemap_addplot_gallery.png", "study_dimension_curve.png",
        "study_scale.png", "study_sweep_outliers_curve.png",
        "study_trajectory_gallery.png"]
    assert "<td colspan=\"6\">" in (root / "REPORT.html").read_text()
    macros = (root / "paper" / "macros.tex").read_text()
    assert r"\newcommand{\AddplotDetected}{toorPIA ($8.62\times$)}" in macros
    assert r"\newcommand{\BridgesTorn}{t-SNE 4, UMAP 4, DREAMS 3}" in macros
    exponents = pd.read_csv(REPO / "results" / "scale_exponents.csv")
    engine = exponents[(exponents["subject"] == "metric engine")
                       & (exponents["quantity"] == "wall time")]["exponent"].iloc[0]
    assert f"metric engine ${engine:.2f}$" in macros and r"\newcommand{\ScaleDim}{50}" in macros


def test_report_stage_without_studies_notes_them_and_writes_no_addplot_table(tmp_path):
    (tmp_path / "results").mkdir()
    for name in ("metrics_aggregated.csv", "metrics_per_run.csv", "skipped_methods.csv"):
        shutil.copyfile(REPO / "results" / name, tmp_path / "results" / name)
    report_stage.run(load_params(REPO / "params.yaml"), tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    assert report.count("> Not built in this run") == 9   # with the scale study
    assert not (tmp_path / "paper" / "tables" / "addplot.tex").exists()
    macros = (tmp_path / "paper" / "macros.tex").read_text()
    assert r"\newcommand{\AddplotDetected}{---}" in macros
    assert r"\newcommand{\ScaleExponents}{---}" in macros
