"""The DVC stages as thin functions over the library; ``dvc.yaml`` calls them via the CLI.

A stage is a module of this package with a ``run`` function and a module-level ``TARGET``:
``"dataset"`` (``run(params, dataset, root)``), ``"study"`` (``run(params, study, root)``) or
``None`` (``run(params, root)``); a ``run`` with a ``jobs`` keyword gets ``--jobs``. Stages are
found by reading this folder, so adding one edits no shared file (every stage depends on this
one, and a new stage must not make DVC rerun the others).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from drfidelity.pipeline.params import Params


def _stage_targets() -> dict[str, str | None]:
    """Stage name -> its TARGET, from the modules of this folder that assign one."""
    found = {}
    for path in sorted(Path(__file__).parent.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and getattr(node.targets[0], "id", None) == "TARGET"):
                found[path.stem] = ast.literal_eval(node.value)
    return found


TARGETS = _stage_targets()
STAGES = tuple(TARGETS)
PER_DATASET = tuple(name for name, target in TARGETS.items() if target == "dataset")
#: stages per supplement (``study`` or ``study:config``, see pipeline/studies.py)
PER_STUDY = tuple(name for name, target in TARGETS.items() if target == "study")


def run_stage(params: Params, name: str, target: str | None, *, root: Path,
              jobs: int | None = None) -> None:
    """Run stage ``name`` (for the dataset or study ``target`` where it takes one).

    Each stage module is imported on demand, so a stage loads only the libraries it uses.
    """
    if name not in STAGES:
        raise ValueError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    module = importlib.import_module(f"drfidelity.pipeline.{name}")
    args = (params,) if TARGETS[name] is None else (params, target)
    options = {"jobs": jobs} if "jobs" in inspect.signature(module.run).parameters else {}
    module.run(*args, root, **options)
