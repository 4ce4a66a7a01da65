"""Stage ``supplement_score``: one table pair of a study, named by its stem (e.g.
``sweep_outliers``) -> ``results/{stem}_per_run.csv`` and ``results/{stem}_aggregated.csv``
(:func:`drfidelity.studies.scoring.score_tables`)."""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.params import Params
from drfidelity.studies.scoring import score_tables

TARGET = "study"  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, stem: str, root: Path) -> None:
    score_tables(params, stem, root)
