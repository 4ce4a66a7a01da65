"""Shared helpers for pipeline tests: throwaway workspaces and CLI/DVC calls."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "tools"))
from profiles import small_supplements  # noqa: E402  (tools/ is not a package)


def env() -> dict[str, str]:
    """The current (exact-numerics) environment with the venv's scripts first on PATH."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
            "DVC_NO_ANALYTICS": "1"}


#: what a pipeline run needs beside src/: its definition, knobs, the toorPIA manifest, the
#: symlinked view of external_embeddings/ that the embed stage depends on, and what git ignores.
PIPELINE_FILES = ["dvc.yaml", "params.yaml", "external_embeddings.manifest.json",
                  "external_maps", "reference/published", ".gitignore",
                  # the frozen scale stage's knobs and committed record (the report reads it)
                  "scale.yaml", "results/scale_runs.csv", "results/scale_exponents.csv",
                  "results/scale_machine.json"]


def import_pointers(root: Path = REPO) -> list[str]:
    """The committed DVC import pointers (``*.dvc``, paths relative to ``root``)."""
    return sorted(subprocess.run(["git", "ls-files", "--", "*.dvc"], cwd=root, check=True,
                                 capture_output=True, text=True).stdout.split())


def workspace(tmp: Path, **changes) -> Path:
    """A copy of the pipeline definition (dvc.yaml, params.yaml, the import pointers) with
    ``changes`` applied to params (dotted keys) and the supplements shrunk to the small profile
    of tools/profiles.py (unless ``changes`` sets ``supplements``), in a fresh git + DVC
    repository."""
    tmp.mkdir(parents=True, exist_ok=True)
    for name in PIPELINE_FILES + import_pointers():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp / name, follow_symlinks=False)
    shutil.copytree(REPO / "src", tmp / "src", ignore=shutil.ignore_patterns("__pycache__"))
    set_params(tmp, **changes)
    if "supplements" not in changes:
        params = yaml.safe_load((tmp / "params.yaml").read_text())
        set_params(tmp, supplements=small_supplements(params))
    run(["git", "init", "-q"], tmp)
    run(["dvc", "init", "-q"], tmp)
    run(["dvc", "config", "core.analytics", "false"], tmp)
    return tmp


def set_params(root: Path, **changes) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text())
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = params
        for key in parents:
            node = node[key]
        node[last] = value
    path.write_text(yaml.safe_dump(params, sort_keys=False))


def run(cmd: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def stage(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return run(["drfidelity", "stage", *args], root, check=check)


def tree_digest(root: Path, *parts: str) -> dict[str, str]:
    """sha256 of every file under the given parts of ``root`` (missing parts are skipped)."""
    digest = {}
    for part in parts:
        base = root / part
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for f in files:
            digest[str(f.relative_to(root))] = hashlib.sha256(f.read_bytes()).hexdigest()
    return digest
