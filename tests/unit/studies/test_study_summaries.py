"""Each study's headline medians (DVC metrics) and median curves (DVC plots) are read off its
committed aggregated table: rewriting them from the tables gives the committed bytes, knob
values keeping their type ("5" stays an integer, "2.0" a float)."""

from __future__ import annotations

import shutil

from drfidelity.core.layout import study_curve_path, study_headline_path, study_table_path
from drfidelity.studies import all_studies
from drfidelity.studies.run.summaries import write_summaries

from pipeline_helpers import REPO


def test_summaries_rewritten_from_the_committed_tables_are_the_committed_files(tmp_path):
    pairs = {spec.name: next(p for p in spec.tables if p.headline) for spec in all_studies()}
    study_table_path(tmp_path, "").parent.mkdir(parents=True)
    for pair in pairs.values():
        shutil.copy(study_table_path(REPO, pair.aggregated),
                    study_table_path(tmp_path, pair.aggregated))
    assert write_summaries(tmp_path) == list(pairs)
    for study, pair in pairs.items():
        paths = [study_headline_path] + ([study_curve_path] if pair.curve else [])
        for path in paths:
            ours, committed = path(tmp_path, study), path(REPO, study)
            assert ours.read_bytes() == committed.read_bytes(), committed.relative_to(REPO)


def test_a_study_without_its_table_is_left_out(tmp_path):
    assert write_summaries(tmp_path) == []
    assert not (tmp_path / "results").exists()
