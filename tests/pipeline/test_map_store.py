"""The map store: the repository's own DVC remote (``store/``) holds every map a lock names.

A fresh clone has no DVC cache, and the maps took hours of method compute; the data they are
made from is regenerated in seconds. So the maps travel with the clone, and ``tools/imports.py``
restores them offline, after which DVC finds every map stage up to date: a change to scoring
reruns scoring only, on any machine. ``make repro`` and ``make verify`` still recompute them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline_helpers import REPO, run

sys.path.insert(0, str(REPO / "tools"))
import imports  # noqa: E402  (tools/ is not a package)
from repro import is_map_stage  # noqa: E402

STORE = REPO / "store"
#: GitHub's hard limit is 100 MB; the repository keeps every file under this
LARGEST = 5 * 2**20


def store_object(md5: str) -> Path:
    return STORE / "files" / "md5" / md5[:2] / md5[2:]


def lock_outputs(folder: Path, top: str = imports.MAPS) -> dict[str, dict]:
    """Output path (relative to the repository) -> its lock record, for the outputs below
    ``top`` (the maps by default)."""
    lock = yaml.load((REPO / folder / "dvc.lock").read_text(), Loader=imports._LOADER)
    return {(folder / out["path"]).as_posix(): out for stage in lock["stages"].values()
            for out in stage.get("outs", []) if Path(out["path"]).parts[0] == top}


def test_the_store_is_the_default_remote_and_inside_the_repository():
    remote = subprocess.run(["dvc", "remote", "list"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert [line.split()[:2] for line in remote] == [["store", str(STORE)]]
    assert "url = ../store" in (REPO / ".dvc" / "config").read_text()  # relative: any clone
    assert subprocess.run(["dvc", "config", "core.remote"], cwd=REPO, capture_output=True,
                          text=True).stdout.strip() == "store"


@pytest.mark.parametrize(("folder", "least"),
                         [(Path("."), 88), (Path("releases/v1.4.0"), 88),
                          (Path("releases/living"), 55)],
                         ids=["v1.3.0", "v1.4.0", "living"])
def test_every_map_of_the_lock_is_in_the_store(folder, least):
    """Each map folder's manifest (the ``.dir`` object) and every file it lists."""
    outputs = lock_outputs(folder)
    assert len(outputs) >= least   # a folder per (dataset or study, method)
    for path, record in outputs.items():
        manifest = store_object(record["md5"])
        assert manifest.is_file(), f"{path}: {record['md5']} is not in store/"
        entries = json.loads(manifest.read_text())
        assert len(entries) == record["nfiles"], path
        absent = [e["relpath"] for e in entries if not store_object(e["md5"]).is_file()]
        assert not absent, f"{path}: {len(absent)} files not in store/, e.g. {absent[:3]}"


def test_the_store_holds_maps_only_and_no_large_file():
    """The data is regenerated, never pushed (``push: false``), so the store stays small."""
    files = [p for p in STORE.rglob("*") if p.is_file()]
    assert files
    assert max(p.stat().st_size for p in files) <= LARGEST
    data = [record["md5"] for folder in imports.pipelines(REPO)
            for record in lock_outputs(folder, "data").values()]
    assert len(data) >= 11
    assert not [md5 for md5 in data if store_object(md5).exists()]


def test_a_fresh_clone_restores_the_maps_offline_and_no_map_stage_is_stale(tmp_path,
                                                                           shared_imports):
    """What ``tools/imports.py`` does on a new machine (docs/reproducing.md): the imports
    from ``../shared``'s DVC objects (no network), the maps from the store, the data
    regenerated; then DVC has no map stage to run in either pipeline."""
    from pipeline_helpers import fill_cache

    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(REPO), str(clone)], tmp_path)
    fill_cache(clone, shared_imports)
    done = subprocess.run([sys.executable, "tools/imports.py", "--offline"], cwd=clone,
                          capture_output=True, text=True, timeout=900)
    lines = done.stdout.strip().splitlines()
    assert lines[0] == f"imports: all {len(imports.pointers(REPO))} imports present", done.stdout
    for folder in imports.pipelines(REPO):
        for path in lock_outputs(folder):
            assert (clone / path).is_dir(), f"{path} was not restored: {done.stdout}"
        status = json.loads(run(["dvc", "status", "--no-updates", "--json",
                                 (folder / "dvc.yaml").as_posix()], clone).stdout or "{}")
        assert not [s for s in status if is_map_stage(s)], status
