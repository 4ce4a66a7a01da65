"""Stage ``study_score``: one table pair of a study, named ``<study>/<stem>`` (e.g.
``sweep_outlier_factor/sweep_outliers``) -> ``results/studies/{stem}_per_run.csv`` and
``results/studies/{stem}_aggregated.csv`` (:func:`drfidelity.studies.run.scoring.score_tables`)."""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.params import Params
from drfidelity.studies.run.scoring import score_tables
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = "study"  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, target: str, root: Path) -> None:
    score_tables(params, target, root)
