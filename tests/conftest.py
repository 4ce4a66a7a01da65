"""Test session setup: exact numerics before numpy loads, the shared reference folder, and
the previous release's imports restored offline from the shared DVC objects."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from drfidelity.core import runtime

runtime.configure("exact")

import pytest  # noqa: E402

from pipeline_helpers import (REPO, build_small_run, fill_cache, import_pointers, run,  # noqa: E402
                              stage_here, tree_digest, workspace)

SHARED = Path(os.environ.get("DRFIDELITY_SHARED", REPO.parent / "shared"))
REFERENCE = SHARED / "reference-v1.3.0"


def missing_shared(reason: str) -> None:
    """Skip, saying why, or fail when the environment variable CI is set: CI has ../shared and
    must not pass by skipping."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so this is a failure, not a skip", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """``../shared/reference-v1.3.0`` (see :func:`missing_shared` when it is absent)."""
    if not REFERENCE.is_dir():
        missing_shared(f"the previous release's reference inputs, maps and tables are not at "
                       f"{REFERENCE}: they ship beside the repository as "
                       "../shared/reference-v1.3.0; put them there, or set DRFIDELITY_SHARED "
                       "to the folder that holds reference-v1.3.0")
    return REFERENCE


def pytest_collection_modifyitems(items) -> None:
    """Mark every test that uses ``reference_dir`` (directly or through a fixture) ``shared``."""
    for item in items:
        if "reference_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared)


def published_folder(shared_name: str, imported_name: str) -> Path:
    """A folder of the previous release's published files: ``../shared``'s copy, else the
    DVC import that ``tools/imports.py`` restores (the same bytes, as
    test_checkout_restores_the_published_tables_byte_for_byte checks), else a skip (a failure
    under CI)."""
    if (REFERENCE / shared_name).is_dir():
        return REFERENCE / shared_name
    from imports import is_present, pointers  # tools/imports.py

    [pointer] = [p for p in pointers(REPO)
                 if p.out.name == imported_name and p.rev == "v1.3.0"]
    if is_present(REPO, pointer):
        return REPO / pointer.out
    missing_shared(f"the previous release's published {imported_name.replace('_', ' ')} are "
                   f"neither in {REFERENCE / shared_name} nor at {pointer.out}: "
                   "`python tools/imports.py` restores the import (offline from ../shared)")


@pytest.fixture(scope="session")
def published_results() -> Path:
    """The previous release's ``results/`` tables (see :func:`published_folder`)."""
    return published_folder("published_results", "results")


@pytest.fixture(scope="session")
def published_paper_tables() -> Path:
    """The previous release's ``paper/tables/`` (see :func:`published_folder`)."""
    return published_folder("published_paper_tables", "paper_tables")


@pytest.fixture(scope="session")
def shared_imports(reference_dir: Path) -> Path:
    """``../shared`` when it holds the import pointers and the DVC objects they name."""
    shared = reference_dir.parent
    for needed in ("dvc-remote", "upstream-v1.3.0-imports", "toorpia-v1.3.0"):
        if not (shared / needed).is_dir():
            missing_shared(f"{shared / needed} not found: the previous release's import "
                           "pointers and DVC objects ship beside the repository in ../shared "
                           "(or DRFIDELITY_SHARED), and without them the imports cannot be "
                           "restored offline")
    return shared


@pytest.fixture(scope="session")
def imported_root(shared_imports: Path, tmp_path_factory) -> Path:
    """A fresh repository holding our DVC config, import pointers and manifest, with the cache
    filled from the shared objects and ``dvc checkout`` run: no clone is attempted."""
    root = tmp_path_factory.mktemp("reader")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    run(["dvc", "init", "-q"], root)
    for name in [".dvc/config", "external_embeddings.manifest.json", *import_pointers()]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, root / name)
    fill_cache(root, shared_imports)
    run(["dvc", "checkout", "-q"], root)
    status = json.loads(run(["dvc", "status", "--no-updates", "--json"], root).stdout or "{}")
    assert status == {}, f"dvc status after checkout is not clean: {status}"
    return root


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """The end-to-end tests' one small pipeline run (``pipeline_helpers.build_small_run``):
    a test that changes files works on a ``copy_run`` of it, and the run is checked unchanged
    at the end of the session, so no test's outcome depends on another's."""
    root = build_small_run(tmp_path_factory.mktemp("small-run"))
    before = tree_digest(root, ".")
    yield root
    assert tree_digest(root, ".") == before, "a test changed the shared run; use copy_run"


@pytest.fixture(scope="session")
def maps_run(tmp_path_factory):
    """Two methods' maps of one small dataset (PCA, Isomap) and PCA's of a study
    (random_walk), made by their stages: cheaper than :func:`small_run` for the tests of what
    the map folders record and what their readers refuse (work on a ``copy_run``)."""
    root = workspace(tmp_path_factory.mktemp("maps-run"), data__n=100, data__d=24,
                     datasets=["density"], methods=["PCA", "Isomap"], seeds=1)
    stage_here(root, "generate", "density")
    for method in ("PCA", "Isomap"):
        stage_here(root, "embed", f"density/{method}", jobs=1)
    stage_here(root, "study_inputs", "random_walk")
    stage_here(root, "study_embed", "random_walk/PCA", jobs=1)
    before = tree_digest(root, ".")
    yield root
    assert tree_digest(root, ".") == before, "a test changed the maps run; use copy_run"
