"""Stage ``hyperparams_score``: the hyper-parameter study's maps ->
``results/hyperparam_sensitivity_per_run.csv`` and ``..._aggregated.csv``
(:func:`drfidelity.studies.scoring.score_tables`)."""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.params import Params
from drfidelity.studies.scoring import score_tables

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, root: Path) -> None:
    score_tables(params, "hyperparam_sensitivity", root)
