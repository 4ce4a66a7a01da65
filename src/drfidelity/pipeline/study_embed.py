"""Stage ``study_embed``: one method's maps of a study's inputs in ``data/{study}/`` ->
``embeddings/{study}/{method}/`` (:func:`drfidelity.studies.run.embedding.embed_study`)."""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.params import Params
from drfidelity.studies.run.embedding import embed_study

TARGET = "study/method"  # what the stage runs on (see drfidelity.pipeline)
#: no registry: a map stage finds its method by name and checks its settings alone
NAMES = None


def run(params: Params, target: str, root: Path, jobs: int | None = None,
        reuse: Path | None = None) -> None:
    embed_study(params, target, root, jobs, reuse)
