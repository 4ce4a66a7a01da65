"""Stage ``study_inputs``: a study's inputs -> ``data/{study}/``
(:func:`drfidelity.studies.run.inputs.write_study_inputs`)."""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.params import Params
from drfidelity.studies.run.inputs import write_study_inputs
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = "study"  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, study: str, root: Path) -> None:
    write_study_inputs(params, study, root)
