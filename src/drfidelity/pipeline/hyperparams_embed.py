"""Stage ``hyperparams_embed``: the hyper-parameter study's inputs and maps ->
``data/hyperparams/`` and ``embeddings/hyperparams/``
(:func:`drfidelity.studies.embedding.embed_study`). A stage of its own because, unlike the
other studies, it reads no external maps (its grid never takes injected coordinates)."""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.params import Params
from drfidelity.studies.embedding import embed_study

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, root: Path, jobs: int | None = None) -> None:
    embed_study(params, "hyperparams", root, jobs)
