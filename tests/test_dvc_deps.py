"""Every stage depends on the code it runs: the static import closure of its command.

A stage's ``cmd`` is ``drfidelity stage NAME ...``: the CLI, then ``drfidelity.pipeline.NAME``.
Every ``drfidelity`` module reachable from there by ``import`` statements (at any depth, in
functions too; a package's ``__init__`` runs whenever one of its modules is imported) must be
covered by one of the stage's ``deps`` (the file itself or a folder above it); otherwise an edit
there could change the stage's outputs while ``dvc status`` says it is up to date.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from pipeline_helpers import REPO

SRC = REPO / "src"

#: Import edges that no ``drfidelity stage`` command executes: the CLI's ``score`` subcommand.
OFF_THE_STAGE_PATH = {("drfidelity.cli", "drfidelity.metrics.cli")}


def module_file(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(name: str) -> set[str]:
    """The ``drfidelity`` modules that module ``name`` imports (statically, anywhere in it)."""
    path = module_file(name)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module]
                                                                       if node.module else []))
            else:
                base = node.module
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] == "drfidelity" and module_file(m)}


def with_parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def closure(*entries: str) -> set[Path]:
    seen: set[str] = set()
    todo = [m for entry in entries for m in with_parents(entry)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for other in imported_modules(name):
            if (name, other) not in OFF_THE_STAGE_PATH:
                todo.extend(with_parents(other))
    return {module_file(m).relative_to(REPO) for m in seen}


def stages() -> dict[str, dict]:
    return yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]


def test_closure_follows_relative_and_nested_imports():
    files = {p.as_posix() for p in closure("drfidelity.pipeline.embed")}
    assert "src/drfidelity/methods/mde.py" in files            # `from . import mde`
    assert "src/drfidelity/methods/__init__.py" in files        # parent package
    assert "src/drfidelity/pipeline/params.py" in files


@pytest.mark.parametrize("name", sorted(stages()))
def test_stage_depends_on_its_whole_import_closure(name):
    definition = stages()[name]
    definition = definition.get("do", definition)  # a foreach stage's template
    command = definition["cmd"].split()
    assert command[:2] == ["drfidelity", "stage"], definition["cmd"]
    deps = [Path(d) for d in definition.get("deps", [])]
    needed = closure("drfidelity.cli", f"drfidelity.pipeline.{command[2]}")
    missing = sorted(p.as_posix() for p in needed
                     if not any(p == d or d in p.parents for d in deps))
    assert not missing, f"stage {name} reads code that is not among its deps: {missing}"
