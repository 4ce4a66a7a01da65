"""The DVC stages as thin functions over the library; ``dvc.yaml`` calls them via the CLI."""

from __future__ import annotations

import importlib
from pathlib import Path

from drfidelity.pipeline.params import Params

PER_DATASET = ("generate", "embed", "score", "figures")
STAGES = PER_DATASET + ("aggregate", "supplement_figures", "report")


def run_stage(params: Params, name: str, dataset: str | None, *, root: Path,
              jobs: int | None = None) -> None:
    """Run stage ``name`` (for ``dataset`` where the stage is per dataset).

    Each stage module is imported on demand, so a stage loads only the libraries it uses.
    """
    if name not in STAGES:
        raise ValueError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    module = importlib.import_module(f"drfidelity.pipeline.{name}")
    if name == "embed":
        module.run(params, dataset, root, jobs=jobs)
    elif name in PER_DATASET:
        module.run(params, dataset, root)
    else:
        module.run(params, root)
