"""What moved between two releases, and why: hand-built releases whose every move has a known
cause, then the real v1.3.0 and v1.4.0 imports against the differences the previous project's
v1.4.0 notes list (its tag message and changed files)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from drfidelity.core.layout import (release_maps_dir, release_paper_tables_dir,
                                    release_params_path, release_results_dir)
from drfidelity.core.params import load_params
from drfidelity.crosscheck.release_diff import Release, diff_releases, ranking_both_ways
from pipeline_helpers import REPO

MAP = "outliers/toorpia/embedding/n1000_d768_snr1/seed0.npy"


def per_run(rows: list[tuple], columns=("dataset", "method", "seed", "n", "full_shepard")):
    return pd.DataFrame(rows, columns=list(columns))


def aggregated(rows: list[tuple]):
    return pd.DataFrame(rows, columns=["dataset", "method", "metric", "median"])


def make_release(root: Path, tag: str, tables: dict[str, pd.DataFrame],
                 maps: dict[str, bytes] | None = None, paper: bytes = b"table",
                 ranking=None) -> Release:
    base = root / tag
    for name, table in tables.items():
        (base / "results").mkdir(parents=True, exist_ok=True)
        table.to_csv(base / "results" / name, index=False)
    for name, data in (maps or {}).items():
        (base / "maps" / name).parent.mkdir(parents=True, exist_ok=True)
        (base / "maps" / name).write_bytes(data)
    (base / "paper").mkdir(parents=True, exist_ok=True)
    (base / "paper" / "outliers.tex").write_bytes(paper)
    return Release(tag, base / "results", base / "paper", base / "maps", ranking or {})


def test_each_move_gets_the_cause_the_data_prove(tmp_path):
    old_runs = per_run([("outliers", "toorPIA", 0, 1000, 0.70), ("outliers", "PCA", 0, 1000, 0.5),
                        ("outliers", "DREAMS", 0, 1000, 0.6)])
    new_runs = per_run([("outliers", "toorPIA", 0, 1000, 0.75), ("outliers", "PCA", 0, 1000, 0.5),
                        ("outliers", "DREAMS", 0, 1000, 0.65)])
    old = make_release(tmp_path, "a", {"metrics_per_run.csv": old_runs}, {MAP: b"old map"})
    new = make_release(tmp_path, "b", {"metrics_per_run.csv": new_runs}, {MAP: b"new map"},
                       paper=b"regenerated")
    found = diff_releases(old, new)
    cells = found["cells"].set_index("method")
    assert cells.loc["toorPIA", "cause"] == "new toorPIA maps"
    assert cells.loc["DREAMS", "cause"] == "no provable cause"
    assert "PCA" not in cells.index
    [flag] = found["inconsistencies"].to_dict("records")
    assert flag["kind"] == "moved without a cause" and flag["detail"].startswith("DREAMS: 1 cell")


def test_toorpia_with_the_same_maps_is_not_explained_by_them(tmp_path):
    runs = [per_run([("outliers", "toorPIA", 0, 1000, value)]) for value in (0.70, 0.75)]
    old = make_release(tmp_path, "a", {"metrics_per_run.csv": runs[0]}, {MAP: b"same"})
    new = make_release(tmp_path, "b", {"metrics_per_run.csv": runs[1]}, {MAP: b"same"})
    assert list(diff_releases(old, new)["cells"]["cause"]) == ["no provable cause"]


def test_a_new_input_explains_every_cell_of_its_runs_and_medians(tmp_path):
    columns = ("method", "seed", "n", "full_shepard")
    old = make_release(tmp_path, "a", {
        "random_walk_per_run.csv": per_run([("PCA", 0, 3000, 0.7)], columns),
        "random_walk_aggregated.csv": pd.DataFrame({"method": ["PCA"], "metric": ["full_shepard"],
                                                    "median": [0.7]})})
    new = make_release(tmp_path, "b", {
        "random_walk_per_run.csv": per_run([("PCA", 0, 4000, 0.8)], columns),
        "random_walk_aggregated.csv": pd.DataFrame({"method": ["PCA"], "metric": ["full_shepard"],
                                                    "median": [0.8]})})
    cells = diff_releases(old, new)["cells"]
    assert set(cells["column"]) == {"n", "full_shepard", "median"}
    assert set(cells["cause"]) == {"new input"}


def test_moves_within_the_comparison_tolerance_are_not_moves(tmp_path):
    """Angles in degrees get 1e-6 (arccos amplifies rounding), everything else 1e-9, in the
    per-run columns and by metric in the aggregated rows, as in the comparison."""
    old = make_release(tmp_path, "a", {"addplot_aggregated.csv": pd.DataFrame({
        "method": ["Isomap"] * 2, "metric": ["angle_to_own_med", "full_shepard"],
        "median": [7.2, 0.5]})})
    new = make_release(tmp_path, "b", {"addplot_aggregated.csv": pd.DataFrame({
        "method": ["Isomap"] * 2, "metric": ["angle_to_own_med", "full_shepard"],
        "median": [7.2 + 2e-9, 0.5 + 2e-9]})})
    cells = diff_releases(old, new)["cells"]
    assert list(cells["row"]) == ["metric=full_shepard"]


def test_rows_of_one_release_name_what_the_other_lacks(tmp_path):
    columns = ("dim", "data_seed", "method", "seed", "full_shepard")
    old = make_release(tmp_path, "a", {"dimsweep_per_run.csv": per_run(
        [(10, 42, "PCA", 0, 0.5), (40, 42, "PCA", 0, 0.6)], columns)})
    new = make_release(tmp_path, "b", {"dimsweep_per_run.csv": per_run(
        [(40, 42, "PCA", 0, 0.6), (500, 42, "PCA", 0, 0.7), (40, 42, "DREAMS", 0, 0.4)],
        columns)})
    summary = diff_releases(old, new)["summary"]
    assert sorted(zip(summary["method"], summary["cause"], summary["rows"])) == [
        ("DREAMS", "new method", 1), ("PCA", "dropped grid: dim = 10", 1),
        ("PCA", "new grid: dim = 500", 1)]
    assert summary["cells"].sum() == 0


def test_columns_filled_for_some_methods_only_are_mixed_vintages(tmp_path):
    columns = ("outlier_factor", "method", "seed", "full_shepard")
    old_rows = per_run([(2.0, "PCA", 0, 0.5), (2.0, "toorPIA", 0, 0.6)], columns)
    new_rows = old_rows.assign(tight_ratio_2d=[float("nan"), 1.5])
    old = make_release(tmp_path, "a", {"sweep_outliers_per_run.csv": old_rows})
    new = make_release(tmp_path, "b", {"sweep_outliers_per_run.csv": new_rows})
    found = diff_releases(old, new)
    [flag] = found["inconsistencies"].to_dict("records")
    assert flag["kind"] == "mixed vintages"
    assert "filled for toorPIA only, empty for PCA" in flag["detail"]
    row = found["summary"].set_index("method").loc["toorPIA"]
    assert (row["cause"], row["cells"]) == ("new column(s): `tight_ratio_2d`", 1)
    filled = make_release(tmp_path, "c", {"sweep_outliers_per_run.csv": new_rows.fillna(1.0)})
    assert diff_releases(old, filled)["inconsistencies"].empty


def test_paper_tables_left_as_they_were_while_their_source_moved(tmp_path):
    tables = [{"metrics_aggregated.csv": aggregated([("outliers", "toorPIA", "full_shepard", v)])}
              for v in (0.759, 0.768)]
    old = make_release(tmp_path, "a", tables[0], {MAP: b"1"})
    new = make_release(tmp_path, "b", tables[1], {MAP: b"2"})
    [flag] = diff_releases(old, new)["inconsistencies"].to_dict("records")
    assert flag["kind"] == "paper tables not regenerated"
    assert "1 cell(s) of `metrics_aggregated.csv` moved (toorPIA)" in flag["detail"]
    regenerated = make_release(tmp_path, "c", tables[1], {MAP: b"2"}, paper=b"new table")
    assert diff_releases(old, regenerated)["inconsistencies"].empty


def test_sigma_from_both_releases_medians_under_both_rules(tmp_path):
    """Worked by hand: full ρ ranks PCA, Isomap, t-SNE (5, 4, 3 points); near ρ Isomap, t-SNE,
    PCA; the added minority column Isomap, t-SNE, PCA. Old rule Σ: 8, 9, 7; new rule: 11, 14,
    11, whichever release's medians (they are the same)."""
    medians = {"PCA": (0.9, 0.1, 0.2), "Isomap": (0.8, 0.3, 0.9), "t-SNE": (0.7, 0.2, 0.5)}
    rows = [("populations", method, metric, value) for method, values in medians.items()
            for metric, value in zip(("full_shepard", "shepard_near__vs_ambient",
                                      "minority_shepard__vs_ambient"), values)]
    table = {"metrics_aggregated.csv": aggregated(rows)}
    old = make_release(tmp_path, "a", table)
    new = make_release(tmp_path, "b", table,
                       ranking={"populations": ["minority_shepard__vs_ambient"]})
    sigma = ranking_both_ways(old, new).set_index("method")
    assert list(sigma["old_medians_old_rule"]) == [8, 9, 7]
    assert list(sigma["old_medians_new_rule"]) == [11, 14, 11]
    assert list(sigma["new_medians_new_rule"]) == [11, 14, 11]
    assert set(sigma["cause"]) == {"new rule"}


@pytest.fixture(scope="module")
def published(imported_root):
    """v1.3.0 against v1.4.0, from their DVC imports restored offline."""
    old, new = (Release(tag, release_results_dir(imported_root, tag),
                        release_paper_tables_dir(imported_root, tag),
                        release_maps_dir(imported_root, tag),
                        load_params(release_params_path(REPO, tag)).ranking)
                for tag in ("v1.3.0", "v1.4.0"))
    return diff_releases(old, new)


def test_v1_4_0_moved_what_its_notes_say_and_nothing_else(published):
    """Its notes: every toorPIA map recomputed, the random walk on a new input, DREAMS' add-plot
    row moved with no code change; every other open-source cell is byte-identical."""
    cells = published["cells"]
    main = cells[cells["table"].str.startswith("metrics_")]
    assert set(main["method"]) == {"toorPIA"} and set(main["cause"]) == {"new toorPIA maps"}
    assert len(main) == 416 + 1664
    walk = cells[cells["table"].str.startswith("random_walk")]
    assert set(walk["cause"]) == {"new input"}
    unexplained = cells[cells["cause"] == "no provable cause"]
    assert set(zip(unexplained["table"], unexplained["method"])) == {
        ("addplot_per_run.csv", "DREAMS"), ("addplot_aggregated.csv", "DREAMS")}
    toorpia = cells[cells["method"].str.startswith("toorPIA")]
    assert set(toorpia["cause"]) <= {"new toorPIA maps", "new input"}


def test_v1_4_0_sigma_on_populations_moved_by_its_rule_alone(published):
    """Its populations Σ: toorPIA 12, DREAMS 10, PCC 9, PCA 8, t-SNE 4, PyMDE 2, UMAP 0,
    Isomap 0 (v1.3.0: 8, 8, 6, 3, ...), and the same Σ from v1.3.0's medians."""
    sigma = published["ranking"]
    populations = sigma[sigma["dataset"] == "populations"].set_index("method")
    assert populations["new_medians_new_rule"].to_dict() == {
        "PCA": 8, "Isomap": 0, "PyMDE": 2, "PCC": 9, "t-SNE": 4, "UMAP": 0, "DREAMS": 10,
        "toorPIA": 12}
    assert (populations["old_medians_new_rule"] == populations["new_medians_new_rule"]).all()
    assert populations.loc["toorPIA", "old_medians_old_rule"] == 8
    others = sigma[sigma["dataset"] != "populations"]
    assert set(others["cause"]) == {"unchanged"}


def test_v1_4_0_inconsistencies_are_flagged(published):
    kinds = published["inconsistencies"].groupby("kind")["table"].apply(set).to_dict()
    assert kinds["mixed vintages"] == {"sweep_outliers_per_run.csv",
                                       "sweep_populations_per_run.csv"}
    assert kinds["paper tables not regenerated"] == {"paper/tables"}
    assert kinds["moved without a cause"] == {"addplot_per_run.csv", "addplot_aggregated.csv"}


def test_the_report_section_counts_every_cause_and_says_when_it_is_not_built(tmp_path):
    from drfidelity.report.document import Table, to_markdown
    from drfidelity.report.releases import release_section

    old = make_release(tmp_path, "a", {"metrics_per_run.csv": per_run(
        [("outliers", "toorPIA", 0, 1000, 0.70), ("outliers", "DREAMS", 0, 1000, 0.6)])},
        {MAP: b"old"})
    new = make_release(tmp_path, "b", {"metrics_per_run.csv": per_run(
        [("outliers", "toorPIA", 0, 1000, 0.75), ("outliers", "DREAMS", 0, 1000, 0.65)])},
        {MAP: b"new"})
    blocks = release_section(diff_releases(old, new), "a", "b")
    text = to_markdown(blocks)
    assert "2 cells moved: 1 where toorPIA's maps behind them changed" in text
    assert "In the main tables only DREAMS, toorPIA moved." in text
    [table] = [b.table for b in blocks if isinstance(b, Table)]
    assert table.label == "results table"
    assert [c.text for c in table.rows[0][1]] == ["1", "·", "1", "0.05", "0.05", "·", "·"]
    assert "moved without a cause" in text
    [_, note] = release_section(None, "a", "b")
    assert "Not built" in note.text
