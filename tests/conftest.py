"""Test session setup: exact numerics before numpy loads, the shared reference folder, and the
toorPIA caches pulled for real from the shared DVC remote served on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from drfidelity import runtime

runtime.configure("exact")

import pytest  # noqa: E402

from pipeline_helpers import REPO, env, serve_directory  # noqa: E402

SHARED = Path(os.environ.get("DRFIDELITY_SHARED", REPO.parent / "shared"))
REFERENCE = SHARED / "reference-v1.3.0"


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """``../shared/reference-v1.3.0``. When it is absent, tests that need it skip, saying why,
    and fail instead when the environment variable CI is set (CI must not pass by skipping)."""
    if not REFERENCE.is_dir():
        reason = f"reference data not found at {REFERENCE} (set DRFIDELITY_SHARED)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so this is a failure, not a skip", pytrace=False)
        pytest.skip(reason)
    return REFERENCE


def pytest_collection_modifyitems(items) -> None:
    """Mark every test that uses ``reference_dir`` (directly or through a fixture) ``shared``."""
    for item in items:
        if "reference_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared)


@pytest.fixture(scope="session")
def shared_toorpia(reference_dir: Path) -> Path:
    """``../shared`` when its DVC remote and toorPIA pointer folder are present."""
    shared = reference_dir.parent
    for needed in ("dvc-remote", "toorpia-v1.3.0"):
        if not (shared / needed).is_dir():
            pytest.skip(f"{shared / needed} not found: cannot pull the toorPIA caches")
    return shared


def dvc(cwd: Path, *args: str, site_cache: Path) -> str:
    done = subprocess.run(["dvc", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**env(), "DVC_SITE_CACHE_DIR": str(site_cache)})
    assert done.returncode == 0, f"dvc {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def pull_toorpia(root: Path, remote_dir: Path, site_cache: Path) -> None:
    """``dvc pull`` into ``root`` from ``remote_dir`` served over HTTP on 127.0.0.1, with the
    committed remote's URL overridden locally the way docs/toorpia.md describes."""
    with serve_directory(remote_dir) as url:
        assert dvc(root, "config", "core.remote", site_cache=site_cache).strip() == "public"
        dvc(root, "remote", "modify", "--local", "public", "url", url, site_cache=site_cache)
        dvc(root, "pull", "-q", "external_embeddings.dvc", site_cache=site_cache)
    status = json.loads(dvc(root, "status", "--json", "external_embeddings.dvc",
                            site_cache=site_cache) or "{}")
    assert status == {}, f"dvc status after pull is not clean: {status}"


@pytest.fixture(scope="session")
def pulled_root(shared_toorpia: Path, tmp_path_factory) -> Path:
    """A fresh repository holding our DVC files, after a real ``dvc pull`` over HTTP."""
    root = tmp_path_factory.mktemp("reader")
    site_cache = tmp_path_factory.mktemp("dvc-site")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    dvc(root, "init", "-q", site_cache=site_cache)
    for name in (".dvc/config", "external_embeddings.dvc", "external_embeddings.manifest.json"):
        shutil.copyfile(REPO / name, root / name)
    pull_toorpia(root, shared_toorpia / "dvc-remote", site_cache)
    return root
