"""The previous release's public data as DVC imports: toorPIA's maps and the published tables.

The 15 import pointers are the ones DVC wrote for the previous release's public repository.
Tests restore their data offline, as a reviewer's ``dvc pull`` would leave it: the shared DVC
objects are copied into a fresh repository's cache and ``dvc checkout`` runs (no clone).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from drfidelity.datasets.noise_dims import make_noise_dims
from drfidelity.methods import EmbedContext
from drfidelity.methods.external import MANIFEST, load_cached
from drfidelity.core.storage import fingerprint
from pipeline_helpers import REPO, fill_cache, import_pointers, run, workspace

CANONICAL = ("density", "transition", "clusters", "outliers", "populations")
MAP = "density/toorpia/embedding/n1000_d768_snr1/seed0.npy"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_no_remote_host_and_no_placeholder_host():
    """Imports never read a project remote; the only remote is the map store, a folder of this
    repository (tests/pipeline/test_map_store.py); the old placeholder host is gone everywhere."""
    listed = subprocess.run(["dvc", "remote", "list"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    assert [line.split()[:2] for line in listed] == [["store", str(REPO / "store")]]
    found = subprocess.run(["git", "grep", "-n", "-I", r"drfidelity\.example", "--", ".",
                            ":(exclude)tests"], cwd=REPO, capture_output=True, text=True)
    assert found.stdout == "", found.stdout


def test_pointers_are_the_shared_ones_verbatim(shared_imports):
    """v1.3.0's pointers at the upstream paths, v1.4.0's at the same paths below
    releases/v1.4.0/, each byte for byte as DVC wrote it."""
    expected = {}
    for release, below in (("v1.3.0", ""), ("v1.4.0", "releases/v1.4.0/")):
        shared = shared_imports / f"upstream-{release}-imports"
        found = {below + p.relative_to(shared).as_posix(): p for p in shared.rglob("*.dvc")}
        assert len(found) == 15, release
        expected.update(found)
    assert import_pointers() == sorted(expected)
    for name, source in expected.items():
        assert (REPO / name).read_bytes() == source.read_bytes(), name


def test_pointers_are_tracked_and_their_data_ignored():
    def ignored(path: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", "--no-index", path],
                              cwd=REPO).returncode == 0
    assert not any(ignored(name) for name in import_pointers())
    assert ignored(f"external_embeddings/{MAP}")
    assert ignored("reference/v1.3.0/results/metrics_per_run.csv")
    assert ignored("reference/v1.3.0/paper_tables/density.tex")
    assert ignored(f"releases/v1.4.0/external_embeddings/{MAP}")
    assert ignored("releases/v1.4.0/reference/v1.4.0/results/metrics_per_run.csv")


def test_checkout_restores_every_map_with_its_manifest_sha256(imported_root, shared_imports):
    listed = set((shared_imports / "toorpia-v1.3.0" / "FILES.txt").read_text().split())
    maps = imported_root / "external_embeddings"
    restored = {p.relative_to(maps).as_posix() for p in maps.rglob("*.npy")}
    assert len(listed) == 125
    assert restored == listed
    manifest = json.loads((REPO / MANIFEST).read_text())["entries"]
    for key, entry in manifest.items():
        assert sha256(maps / key) == entry["sha256"], key


@pytest.mark.parametrize("imported, published", [("results", "published_results"),
                                                 ("paper_tables", "published_paper_tables")])
def test_checkout_restores_the_published_tables_byte_for_byte(imported_root, reference_dir,
                                                              imported, published):
    ours = imported_root / "reference" / "v1.3.0" / imported
    theirs = reference_dir / published
    names = sorted(p.name for p in theirs.iterdir())
    assert names and set(names) <= {p.name for p in ours.iterdir()}
    for name in names:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name


def test_tampered_map_is_refused_by_name(imported_root, reference_dir, tmp_path):
    root = tmp_path / "tampered"
    (root / "external_embeddings").mkdir(parents=True)
    shutil.copy(REPO / MANIFEST, root / MANIFEST)
    shutil.copytree(imported_root / "external_embeddings" / "density",
                    root / "external_embeddings" / "density")
    target = root / "external_embeddings" / MAP
    Y = np.load(target)
    Y[0, 0] += 1e-9
    target.chmod(0o644)
    np.save(target, Y)
    X = np.load(reference_dir / "canonical/density_snr1/inputs.npz")["X"]
    with pytest.raises(ValueError, match="differs from") as error:
        load_cached(EmbedContext(root, "density", "n1000_d768_snr1"), "toorpia", "embedding",
                    0, X)
    assert MAP in str(error.value)


def test_manifest_matches_its_generator(shared_imports):
    spec = importlib.util.spec_from_file_location(
        "make_toorpia_manifest", REPO / "tools" / "make_toorpia_manifest.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    committed = json.loads((REPO / MANIFEST).read_text())
    assert committed == tool.build_manifest(shared_imports)
    assert len(committed["entries"]) + len(committed["unverified"]) == 125


def test_a_later_release_manifest_matches_its_generator(shared_imports):
    """v1.4.0's 113 maps: each input known but the legacy clusters_sweep caches' (the v1.3.0
    entry of the same path, or the checked noise-dims and random-walk generators)."""
    spec = importlib.util.spec_from_file_location(
        "make_toorpia_manifest", REPO / "tools" / "make_toorpia_manifest.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    committed = json.loads((REPO / "releases" / "v1.4.0" / MANIFEST).read_text())
    assert committed == tool.build_release_manifest(shared_imports, "v1.4.0")
    assert len(committed["entries"]) == 108
    assert all(key.startswith("clusters_sweep/") for key in committed["unverified"])


def _context(root: Path, key: str) -> tuple[EmbedContext, str, int]:
    dataset, method, mode, tag, seed_file = key.split("/")
    assert method == "toorpia"
    return EmbedContext(root, dataset, tag), mode, int(seed_file.removeprefix("seed")[:-4])


def _reference_inputs(reference_dir: Path) -> dict[str, np.ndarray]:
    """Manifest key -> the reference input array it was computed on (all folders)."""
    inputs = {}
    for params_file in sorted(reference_dir.glob("*/*/params.json")):
        params = json.loads(params_file.read_text())
        arrays = np.load(params_file.parent / "inputs.npz")
        caches = params["toorpia_cache"]
        for path in [caches] if isinstance(caches, str) else caches:
            key = path.removeprefix("external_embeddings/")
            array = {"embedding_basemap": "X_fit", "embedding_addplot": "X_add"}.get(
                key.split("/")[2], "X")
            inputs[key] = arrays[array]
            if params["generator"] == "noise_dims":  # the csvform arm ran on the same X
                for seed in range(3):
                    inputs[f"noise_dims/toorpia/fit/{key.split('/')[3]}/seed{seed}.npy"] = \
                        arrays["X"]
    return inputs


def test_every_reference_backed_entry_loads_for_its_input(imported_root, reference_dir):
    manifest = json.loads((REPO / MANIFEST).read_text())["entries"]
    inputs = _reference_inputs(reference_dir)
    assert set(inputs) == {key for key, entry in manifest.items()
                           if entry["input_source"].startswith("reference")}
    for key, X in inputs.items():
        context, mode, seed = _context(imported_root, key)
        Y = load_cached(context, "toorpia", mode, seed, X)
        assert Y.shape == (X.shape[0], 2), key


@pytest.mark.parametrize("tag, n, d, data_seed", [("n500_dim10", 500, 10, 42),
                                                  ("n1000_dim2000_ds3", 1000, 2000, 3)])
def test_generator_backed_csvform_entries_load_for_generated_inputs(imported_root, tag, n, d,
                                                                    data_seed):
    X = make_noise_dims(n=n, d=d, seed=data_seed).clean
    Y = load_cached(EmbedContext(imported_root, "noise_dims", tag), "toorpia", "fit", 2, X)
    assert Y.shape == (n, 2)


def test_cache_of_other_data_is_rejected_naming_file_and_fingerprints(imported_root,
                                                                      reference_dir):
    X_clusters = np.load(reference_dir / "canonical/clusters_snr1/inputs.npz")["X"]
    density = EmbedContext(imported_root, "density", "n1000_d768_snr1")
    with pytest.raises(ValueError) as error:
        load_cached(density, "toorpia", "embedding", 0, X_clusters)
    message = str(error.value)
    assert "density/toorpia/embedding/n1000_d768_snr1/seed0.npy" in message
    assert fingerprint(X_clusters) in message
    manifest = json.loads((REPO / MANIFEST).read_text())["entries"]
    assert manifest["density/toorpia/embedding/n1000_d768_snr1/seed0.npy"]["input_sha256"] \
        in message


def test_input_one_ulp_off_is_rejected(imported_root, reference_dir):
    X = np.load(reference_dir / "canonical/outliers_snr1/inputs.npz")["X"].copy()
    X[500, 300] = np.nextafter(X[500, 300], np.inf)
    with pytest.raises(ValueError, match="computed for other data"):
        load_cached(EmbedContext(imported_root, "outliers", "n1000_d768_snr1"), "toorpia",
                    "embedding", 0, X)


def test_unverified_legacy_cache_is_refused(imported_root):
    X = np.zeros((1000, 768))
    context = EmbedContext(imported_root, "clusters_sweep", "dr10")
    with pytest.raises(ValueError, match="no entry in .* and no provenance sidecar"):
        load_cached(context, "toorpia", "embedding", 0, X)


def test_pipeline_follows_the_maps(tmp_path, shared_imports):
    """Without the maps `dvc repro` makes the maps with toorPIA unavailable; once they are
    checked out, DVC sees the embed stage changed, reruns it (and no generator), and the
    toorPIA row appears; a tampered map then makes the stage stale again and is refused by
    name, and removing the dataset's maps makes it stale too. The runs stop at ``embed``, then
    at ``aggregate``: the studies downstream add minutes and nothing about the maps, and
    one score stage shows the row (a skipped method's row: the shared run's tests)."""
    root = workspace(tmp_path / "ws", datasets=["density"], methods=["PCA", "toorPIA"])
    run(["dvc", "repro", "embed@density-PCA", "embed@density-toorPIA"], root)
    status = {method: json.loads((root / "embeddings/density" / method / "status.json")
                                 .read_text())["methods"][method]
              for method in ("PCA", "toorPIA")}
    assert status["PCA"]["status"] == "ok"
    assert status["toorPIA"]["status"] == "skipped"
    assert "dvc pull external_embeddings/density/toorpia/embedding.dvc" in \
        status["toorPIA"]["reason"]

    fill_cache(root, shared_imports)
    run(["dvc", "checkout", "-q", "external_embeddings/density/toorpia/embedding.dvc"], root)
    status = json.loads(run(["dvc", "status", "--no-updates", "--json", "--with-deps",
                             "aggregate"], root).stdout)
    assert "embed@density-toorPIA" in status and "generate@density" not in status
    ran = run(["dvc", "repro", "aggregate"], root).stdout
    assert "Running stage 'embed@density-toorPIA'" in ran
    assert "Running stage 'generate@density'" not in ran
    assert set(pd.read_csv(root / "results" / "metrics_per_run.csv").method) == {"PCA", "toorPIA"}
    assert pd.read_csv(root / "results" / "skipped_methods.csv").empty
    assert "Running stage" not in run(["dvc", "repro", "--dry", "aggregate"], root).stdout

    target = root / "external_embeddings" / MAP
    target.chmod(0o644)
    target.write_bytes(target.read_bytes()[:-8] + bytes(8))
    status = json.loads(run(["dvc", "status", "--no-updates", "--json", "--with-deps",
                             "aggregate"], root).stdout)
    assert "embed@density-toorPIA" in status
    refused = run(["dvc", "repro", "aggregate"], root, check=False)
    assert refused.returncode != 0 and MAP in refused.stdout + refused.stderr

    shutil.rmtree(root / "external_embeddings" / "density" / "toorpia" / "embedding")
    status = json.loads(run(["dvc", "status", "--no-updates", "--json", "--with-deps",
                             "aggregate"], root).stdout)
    assert "embed@density-toorPIA" in status


def test_comparison_reads_the_imported_tables_by_default(imported_root):
    """tools/compare_published.py, run from a checkout with the imports, needs no argument."""
    shutil.copytree(REPO / "tools", imported_root / "tools", dirs_exist_ok=True)
    shutil.copytree(REPO / "results", imported_root / "results", dirs_exist_ok=True)
    done = subprocess.run([sys.executable, "tools/compare_published.py"], cwd=imported_root,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "| toorPIA |" in done.stdout
