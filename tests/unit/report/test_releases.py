"""The report's section on what moved between releases (report.releases): move sizes worked by
hand, the ranking rules said from each release's params, table cells rendered as inline Markdown
in HTML, and a release's own report (a pointer, no section it never builds)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from drfidelity.pipeline.report import checkout_from
from drfidelity.crosscheck.release_diff import Release, ranking_both_ways
from drfidelity.report.document import Heading, Quote, Table, to_html, to_markdown
from drfidelity.report.releases import cause_table, move_sizes, release_pointer, rule_sentence
from drfidelity.report.studies import StudyResults, study_blocks

ROOT = Path(__file__).resolve().parents[3]
MINORITY = {"populations": ["minority_shepard__vs_ambient"]}
TAGS = ("v1.3.0", "v1.4.0")


def _cells() -> pd.DataFrame:
    """Table a.csv: moves of 0.5, 0.1, 2.0 and a text cell; b.csv: one move of 3."""
    rows = [("a.csv", "PCA", "r", "x", 1.0, 1.5, "new input"),
            ("a.csv", "PCA", "r", "y", 0.3, 0.2, "new input"),
            ("a.csv", "UMAP", "r", "x", -1.0, 1.0, "no provable cause"),
            ("a.csv", "UMAP", "r", "label", "old", "new", "no provable cause"),
            ("b.csv", "toorPIA", "r", "x", 10, 7, "new toorPIA maps")]
    return pd.DataFrame(rows, columns=["table", "method", "row", "column", "old", "new",
                                       "cause"])


def test_move_sizes_are_the_largest_and_median_absolute_moves_of_numeric_cells():
    sizes = move_sizes(_cells())
    assert sizes.loc["a.csv", "largest"] == 2.0
    assert abs(sizes.loc["a.csv", "median"] - 0.5) < 1e-12  # of 0.5, 0.1, 2.0; text skipped
    assert sizes.loc["b.csv"].tolist() == [3.0, 3.0]


def test_the_cause_table_shows_the_sizes_beside_the_counts():
    cells = _cells()
    summary = pd.DataFrame({"table": ["a.csv", "a.csv", "b.csv"],
                            "method": ["PCA", "UMAP", "toorPIA"],
                            "cause": ["new input", "no provable cause", "new toorPIA maps"],
                            "cells": [2, 2, 1], "rows": [0, 0, 1], "max_abs_diff": [0.5, 2, 3]})
    table = cause_table(summary, cells)
    headers = [c.header for c in table.columns]
    rows = {label: dict(zip(headers, (c.text for c in cells))) for label, cells in table.rows}
    assert rows["`a.csv`"] == {"new toorPIA maps": "·", "new input": "2",
                               "no provable cause": "2", "largest": "2", "median": "0.5",
                               "rows": "·", "cells": "·"}
    assert rows["`b.csv`"]["largest"] == "3" and rows["`b.csv`"]["rows"] == "1"


def _ranking(tmp_path: Path, old_rule: dict, new_rule: dict) -> pd.DataFrame:
    """ranking_both_ways of two releases with the same populations medians and these rules."""
    metrics = ("full_shepard", "shepard_near__vs_ambient", "minority_shepard__vs_ambient")
    rows = [("populations", m, metric, v) for m, values in
            {"PCA": (0.9, 0.1, 0.2), "UMAP": (0.8, 0.3, 0.9)}.items()
            for metric, v in zip(metrics, values)]
    (tmp_path / "results").mkdir(exist_ok=True)
    pd.DataFrame(rows, columns=["dataset", "method", "metric", "median"]).to_csv(
        tmp_path / "results" / "metrics_aggregated.csv", index=False)
    release = [Release(tag, tmp_path / "results", tmp_path, tmp_path, rule)
               for tag, rule in zip(TAGS, (old_rule, new_rule))]
    return ranking_both_ways(*release)


def test_the_rule_sentence_follows_each_release_s_params(tmp_path):
    added = rule_sentence(_ranking(tmp_path, {}, MINORITY), *TAGS)
    assert ("v1.3.0's rule (`ranking` in `params.yaml`) scores full ρ and near ρ on every "
            "dataset.") in added
    assert ("v1.4.0's rule (`ranking` in `releases/v1.4.0/params.yaml`) adds minority ρ on "
            "populations.") in added
    same = rule_sentence(_ranking(tmp_path, MINORITY, MINORITY), *TAGS)
    assert "full ρ, near ρ and minority ρ on every dataset" in same and "is the same." in same
    dropped = rule_sentence(_ranking(tmp_path, MINORITY, {}), *TAGS)
    assert "drops minority ρ on populations." in dropped


def test_table_cells_are_inline_markdown_in_html_too():
    """The cause table's first column is `code` in REPORT.md; HTML must not show backticks."""
    summary = pd.DataFrame({"table": ["b.csv"], "method": ["toorPIA"],
                            "cause": ["new toorPIA maps"], "cells": [1], "rows": [0],
                            "max_abs_diff": [3.0]})
    html = to_html([Table(cause_table(summary, _cells()))], title="t")
    assert "<td><code>b.csv</code></td>" in html and "`" not in html


def test_committed_html_tables_show_no_backticks():
    for report in (ROOT / "REPORT.html", ROOT / "releases" / "v1.4.0" / "REPORT.html"):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", report.read_text())
        assert cells and [c for c in cells if "`" in c] == []


def test_a_release_report_points_to_the_root_section():
    checkout = checkout_from(ROOT / "releases" / "v1.4.0")
    assert checkout == "../.." and checkout_from(ROOT) is None
    assert checkout_from(ROOT / "releases" / "living") == "../.."
    blocks = release_pointer("v1.3.0", "v1.4.0", checkout)
    assert blocks[0] == Heading(2, "What changed from v1.3.0 to v1.4.0")
    link = "../../REPORT.{}#what-changed-from-v130-to-v140"
    assert f"]({link.format('md')})" in to_markdown(blocks)
    assert f'href="{link.format("html")}"' in to_html(blocks, title="t")


def test_a_release_report_leaves_out_the_scale_study_it_never_builds():
    """The checkout's root keeps its note while the frozen study has not run."""
    def titles(studies):
        return [b.text for b in study_blocks(studies) if isinstance(b, Heading)]

    here = study_blocks(StudyResults())
    assert "Scale: cost against N" in titles(StudyResults())
    assert any(isinstance(b, Quote) and "Not built" in b.text and "scale" in b.text
               for b in here)
    assert "Scale: cost against N" not in titles(StudyResults(scale=False))


def test_committed_release_report_has_the_pointer_and_no_not_built_section():
    text = (ROOT / "releases" / "v1.4.0" / "REPORT.md").read_text()
    assert "Not built" not in text
    assert "(../../REPORT.md#what-changed-from-v130-to-v140)" in text
    assert "## Scale: cost against N" in (ROOT / "REPORT.md").read_text()


def test_committed_living_report_reproduces_no_release_and_points_to_the_frozen_one():
    """The living configuration published nothing: its report says so, links the frozen
    report, checks no published claim and names its seeds from its params."""
    from drfidelity.core.params import load_params

    folder = ROOT / "releases" / "living"
    text = (folder / "REPORT.md").read_text()
    seeds = load_params(folder / "params.yaml").seeds
    assert "This is the living configuration" in text and f" {seeds} seeds " in text
    assert "[REPORT.md](../../REPORT.md)" in text
    assert "The published claims, checked" not in text and "comparison_v1" not in text
    assert "(../../REPORT.md#what-changed-from-v130-to-v140)" in text
