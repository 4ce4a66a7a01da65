"""Shared helpers for the tests of every tier (tests/unit, tests/pipeline, tests/tooling): the
repository root, throwaway workspaces and CLI/DVC calls. ``tests/support`` is on ``sys.path``
(``pythonpath`` in pyproject.toml's ``[tool.pytest.ini_options]``)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import yaml

#: the repository root (this file is tests/support/pipeline_helpers.py)
REPO = Path(__file__).resolve().parents[2]
#: this folder, for a fresh interpreter that imports the helpers or a test module
SUPPORT = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "tools"))
from profiles import small_studies  # noqa: E402  (tools/ is not a package)


def env() -> dict[str, str]:
    """The current (exact-numerics) environment with the venv's scripts first on PATH."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
            "DVC_NO_ANALYTICS": "1"}


#: what a pipeline run needs beside src/: its definition, knobs, the toorPIA manifest, the
#: symlinked view of external_embeddings/ that the embed stage depends on, the map stages' links
#: to their methods' modules, and what git ignores.
PIPELINE_FILES = ["dvc.yaml", "studies.yaml", "params.yaml", "external_embeddings.manifest.json",
                  "external_maps", "method_code", "reference/published", ".gitignore",
                  # the later release's configuration (its ranking rule) and the links the
                  # release_diff stage reads its imports by
                  "releases/v1.4.0/params.yaml", "releases/v1.4.0/external_maps",
                  "releases/v1.4.0/reference/published",
                  # the frozen scale stage's knobs and committed record (the report reads it)
                  "scale.yaml", "results/scale_runs.csv", "results/scale_exponents.csv",
                  "results/scale_machine.json"]


def fill_cache(root: Path, shared: Path) -> None:
    """Copy the shared DVC objects into ``root``'s cache: what a successful ``dvc pull`` of the
    imports (a clone of the previous release's repository) leaves there, without a network."""
    shutil.copytree(shared / "dvc-remote" / "files", root / ".dvc" / "cache" / "files",
                    dirs_exist_ok=True)


def copy_from_checkout(root: Path, names: list[str]) -> None:
    """Copy ``names`` (files, links or folders) of the checkout into ``root``; links stay
    links."""
    for name in names:
        source, target = REPO / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir() and not source.is_symlink():
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy(source, target, follow_symlinks=False)


def import_pointers(root: Path = REPO) -> list[str]:
    """The committed DVC import pointers (``*.dvc``, paths relative to ``root``)."""
    return sorted(subprocess.run(["git", "ls-files", "--", "*.dvc"], cwd=root, check=True,
                                 capture_output=True, text=True).stdout.split())


def workspace(tmp: Path, **changes) -> Path:
    """A copy of the pipeline definition (dvc.yaml, params.yaml, the import pointers) with
    ``changes`` applied to params (dotted keys) and the studies shrunk to the small profile
    of tools/profiles.py (unless ``changes`` sets ``studies``), in a fresh git + DVC
    repository."""
    tmp.mkdir(parents=True, exist_ok=True)
    copy_from_checkout(tmp, PIPELINE_FILES + import_pointers())
    shutil.copytree(REPO / "src", tmp / "src", ignore=shutil.ignore_patterns("__pycache__"))
    set_params(tmp, **changes)
    if "studies" not in changes:
        params = yaml.safe_load((tmp / "params.yaml").read_text())
        set_params(tmp, studies=small_studies(params))
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


def stage_here(root: Path, name: str, target: str | None = None, *,
               jobs: int | None = None, reuse: Path | None = None) -> None:
    """``drfidelity stage name [target] [--jobs jobs] [--reuse reuse]`` in this process, from
    ``root`` as DVC runs it (what the command runs after parsing its arguments). The kernels
    numba compiled for one stage then serve every later one; a fresh process compiles the
    metric engine again (tens of seconds per score stage). The command line itself is tested through
    :func:`stage`."""
    from drfidelity import pipeline
    from drfidelity.core.params import load_params

    with contextlib.chdir(root):
        module = pipeline.stage_module(name)
        pipeline.run_stage(load_params(Path("params.yaml"), module.NAMES), module, target,
                           root=Path("."), jobs=jobs, reuse=reuse)


def build_dataset(root: Path, dataset: str, run_stage=stage) -> None:
    """generate, embed (each method of ``root``'s params.yaml) and score ``dataset``."""
    methods = yaml.safe_load((root / "params.yaml").read_text())["methods"]
    run_stage(root, "generate", dataset)
    for method in methods:
        run_stage(root, "embed", f"{dataset}/{method}")
    run_stage(root, "score", dataset)


#: the profile of the end-to-end tests' shared run (:func:`build_small_run`): two datasets
#: (one with outliers), a deterministic, a graph-based, a seeded stochastic (two seeds) and a
#: one-seed method, and toorPIA, skipped here (no cached map, no API key) as a user sees it
SMALL_RUN = dict(data__n=200, data__d=24, datasets=["density", "outliers"], seeds=2,
                 methods=["PCA", "Isomap", "t-SNE", "DREAMS", "toorPIA"],
                 bootstrap__n_boot=100)
#: stages the shared run leaves out: drawing (tests/unit/report/test_figures.py,
#: tests/pipeline/test_study_figures.py and the slow report tests draw) and the comparison
#: with the imported tables
NOT_IN_SMALL_RUN = {"figures", "study_figures", "compare"}


def stage_cli(root: Path, name: str, target: str | None = None, *,
              jobs: int | None = None) -> None:
    """:func:`stage_here` through the command line, in a fresh process."""
    stage(root, name, *([target] if target else []), *(["--jobs", str(jobs)] if jobs else []))


def pipeline_commands(root: Path) -> list[list[str]]:
    """The ``drfidelity stage`` arguments of every stage of ``root``'s dvc.yaml (expanded for
    its params) that the shared run makes, in an order DVC may run them; frozen stages left
    out. Read from DVC, so a renamed or added stage needs no edit here."""
    import networkx as nx
    from dvc.repo import Repo

    with warnings.catch_warnings(), Repo(str(root)) as repo:
        warnings.simplefilter("ignore", DeprecationWarning)  # DVC's own use of pygtrie
        stages = [s for s in reversed(list(nx.topological_sort(repo.index.graph)))
                  if not s.frozen]
        commands = [shlex.split(s.cmd) for s in stages]
    assert all(command[:2] == ["drfidelity", "stage"] for command in commands), commands
    return [command[2:] for command in commands if command[2] not in NOT_IN_SMALL_RUN]


def run_commands(root: Path, commands: list[list[str]], *, jobs: int = 1,
                 run_stage=stage_here) -> None:
    """Run each ``[name, target?]`` of ``commands``, ``jobs`` embedding jobs at a time, without
    a toorPIA API key (toorPIA is skipped, never called)."""
    with contextlib.ExitStack() as stack:
        if "TOORPIA_API_KEY" in os.environ:
            stack.callback(os.environ.__setitem__, "TOORPIA_API_KEY",
                           os.environ.pop("TOORPIA_API_KEY"))
        for name, *target in commands:
            run_stage(root, name, *target, jobs=jobs)


def build_small_run(root: Path, run_stage=stage_here, jobs: int = 1) -> Path:
    """The shared run: a :func:`workspace` of :data:`SMALL_RUN` through every stage of
    :func:`pipeline_commands`, ``jobs`` embedding jobs at a time (one: in the calling
    process; a pool costs seconds per stage to start)."""
    workspace(root, **SMALL_RUN)
    run_commands(root, pipeline_commands(root), jobs=jobs, run_stage=run_stage)
    return root


def copy_run(root: Path, target: Path) -> Path:
    """A copy of a workspace to change (small files; symlinks stay links)."""
    shutil.copytree(root, target, symlinks=True)
    return target


def tree_digest(root: Path, *parts: str) -> dict[str, str]:
    """sha256 of every file under the given parts of ``root`` (missing parts are skipped)."""
    digest = {}
    for part in parts:
        base = root / part
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for f in files:
            digest[str(f.relative_to(root))] = hashlib.sha256(f.read_bytes()).hexdigest()
    return digest


def swap_files(a: Path, b: Path) -> None:
    """Swap the bytes of two files, as a hand mix-up of two maps would."""
    a_bytes = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(a_bytes)


def cut_in_half(path: Path) -> None:
    """Keep the first half of a file's bytes, as an interrupted copy would."""
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
