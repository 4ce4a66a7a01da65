"""Stage ``supplement_embed``: a study's maps of its inputs in ``data/{study}/`` ->
``embeddings/{study}/`` (:func:`drfidelity.supplements.embedding.embed_study`)."""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.params import Params
from drfidelity.supplements.embedding import embed_study

TARGET = "study"  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, study: str, root: Path, jobs: int | None = None) -> None:
    embed_study(params, study, root, jobs)
