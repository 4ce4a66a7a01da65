"""Each study's headline medians (DVC metrics) and median curves (DVC plots) are read off its
committed aggregated table: rewriting them from the tables gives the committed bytes, knob
values keeping their type ("5" stays an integer, "2.0" a float)."""

from __future__ import annotations

import shutil

from drfidelity.core.layout import study_curve_path, study_headline_path
from drfidelity.studies.tables import CURVES, HEADLINES, write_summaries

from pipeline_helpers import REPO


def test_summaries_rewritten_from_the_committed_tables_are_the_committed_files(tmp_path):
    for table, _, _ in HEADLINES.values():
        (tmp_path / "results").mkdir(exist_ok=True)
        shutil.copy(REPO / "results" / table, tmp_path / "results" / table)
    assert write_summaries(tmp_path) == list(HEADLINES)
    for study in HEADLINES:
        paths = [study_headline_path] + ([study_curve_path] if study in CURVES else [])
        for path in paths:
            ours, committed = path(tmp_path, study), path(REPO, study)
            assert ours.read_bytes() == committed.read_bytes(), committed.relative_to(REPO)


def test_a_study_without_its_table_is_left_out(tmp_path):
    assert write_summaries(tmp_path) == []
    assert not (tmp_path / "results").exists()
