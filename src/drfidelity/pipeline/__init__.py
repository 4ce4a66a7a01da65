"""The DVC stages as thin functions over the library; ``dvc.yaml`` calls them via the CLI.

A stage is a module of this package with a ``run`` function and a module-level ``TARGET``:
``"dataset"`` (``run(params, dataset, root)``), ``"study"`` (``run(params, study, root)``) or
``None`` (``run(params, root)``); a ``run`` with a ``jobs`` or ``reuse`` keyword gets ``--jobs``
or ``--reuse``. Its ``NAMES`` are what params are checked against
(:func:`~drfidelity.core.params.load_params`): the registry (:data:`drfidelity.registry.NAMES`),
or None for a map stage, which finds its one method by name, so that adding a method, dataset
or study leaves it up to date. The stages
are the modules of this folder, found by name alone: a stage command imports its own module and
reads no other, so adding or editing a stage changes no other stage's code.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from types import ModuleType

from drfidelity.core.params import Params

STAGES = tuple(sorted(p.stem for p in Path(__file__).parent.glob("*.py") if p.stem != "__init__"))


def stage_module(name: str) -> ModuleType:
    """The module of stage ``name``, imported on demand (so a stage loads only the libraries
    it uses); ValueError for an unknown name."""
    if name not in STAGES:
        raise ValueError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    return importlib.import_module(f"drfidelity.pipeline.{name}")


def run_stage(params: Params, stage: str | ModuleType, target: str | None, *, root: Path,
              jobs: int | None = None, reuse: Path | None = None) -> None:
    """Run ``stage`` (a name or its module) for the dataset or study ``target`` where it
    takes one; ValueError for ``reuse`` given to a stage that makes no maps."""
    module = stage_module(stage) if isinstance(stage, str) else stage
    args = (params,) if module.TARGET is None else (params, target)
    accepted = inspect.signature(module.run).parameters
    if reuse is not None and "reuse" not in accepted:
        raise ValueError(f"--reuse is for the map stages (embed, study_embed), not "
                         f"{module.__name__.rsplit('.', 1)[-1]}")
    options = {key: value for key, value in (("jobs", jobs), ("reuse", reuse))
               if key in accepted}
    module.run(*args, root, **options)
