"""The toorPIA coordinates as DVC data: a real ``dvc pull`` over HTTP, then validated loading.

The shared DVC remote is served read-only on 127.0.0.1 (as a reader's public HTTP remote would
be); a fresh repository with our committed ``.dvc/config``, pointer and manifest pulls from it
once per session, with the remote URL overridden locally the way docs/toorpia.md describes.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from drfidelity.datasets.noise_dims import make_noise_dims
from drfidelity.methods import EmbedContext
from drfidelity.methods.external import MANIFEST, fingerprint, load_cached

REPO = Path(__file__).resolve().parents[1]
CANONICAL = ("density", "transition", "clusters", "outliers", "populations")


def test_committed_remote_is_public_https():
    config = (REPO / ".dvc" / "config").read_text()
    assert "remote = public" in config
    assert "url = https://" in config.split("""['remote "public"']""")[1]


def test_pointer_is_the_shared_one_verbatim(shared_toorpia):
    shared_pointer = shared_toorpia / "toorpia-v1.3.0" / "external_embeddings.dvc"
    assert (REPO / "external_embeddings.dvc").read_bytes() == shared_pointer.read_bytes()


def test_pull_brings_every_listed_file(pulled_root, shared_toorpia):
    listed = set((shared_toorpia / "toorpia-v1.3.0" / "FILES.txt").read_text().split())
    cache = pulled_root / "external_embeddings"
    pulled = {p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file()}
    assert len(listed) == 125
    assert pulled == listed


def test_manifest_matches_its_generator(shared_toorpia):
    spec = importlib.util.spec_from_file_location(
        "make_toorpia_manifest", REPO / "tools" / "make_toorpia_manifest.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    committed = json.loads((REPO / MANIFEST).read_text())
    assert committed == tool.build_manifest(shared_toorpia)
    assert len(committed["entries"]) + len(committed["unverified"]) == 125


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


def test_every_reference_backed_entry_loads_for_its_input(pulled_root, reference_dir):
    manifest = json.loads((REPO / MANIFEST).read_text())["entries"]
    inputs = _reference_inputs(reference_dir)
    assert set(inputs) == {key for key, entry in manifest.items()
                           if entry["input_source"].startswith("reference")}
    for key, X in inputs.items():
        context, mode, seed = _context(pulled_root, key)
        Y = load_cached(context, "toorpia", mode, seed, X)
        assert Y.shape == (X.shape[0], 2), key


@pytest.mark.parametrize("tag, n, d, data_seed", [("n500_dim10", 500, 10, 42),
                                                  ("n1000_dim2000_ds3", 1000, 2000, 3)])
def test_generator_backed_csvform_entries_load_for_generated_inputs(pulled_root, tag, n, d,
                                                                    data_seed):
    X = make_noise_dims(n=n, d=d, seed=data_seed).clean
    Y = load_cached(EmbedContext(pulled_root, "noise_dims", tag), "toorpia", "fit", 2, X)
    assert Y.shape == (n, 2)


def test_cache_of_other_data_is_rejected_naming_file_and_fingerprints(pulled_root,
                                                                      reference_dir):
    X_clusters = np.load(reference_dir / "canonical/clusters_snr1/inputs.npz")["X"]
    density = EmbedContext(pulled_root, "density", "n1000_d768_snr1")
    with pytest.raises(ValueError) as error:
        load_cached(density, "toorpia", "embedding", 0, X_clusters)
    message = str(error.value)
    assert "density/toorpia/embedding/n1000_d768_snr1/seed0.npy" in message
    assert fingerprint(X_clusters) in message
    manifest = json.loads((REPO / MANIFEST).read_text())["entries"]
    assert manifest["density/toorpia/embedding/n1000_d768_snr1/seed0.npy"]["input_sha256"] \
        in message


def test_input_one_ulp_off_is_rejected(pulled_root, reference_dir):
    X = np.load(reference_dir / "canonical/outliers_snr1/inputs.npz")["X"].copy()
    X[500, 300] = np.nextafter(X[500, 300], np.inf)
    with pytest.raises(ValueError, match="computed for other data"):
        load_cached(EmbedContext(pulled_root, "outliers", "n1000_d768_snr1"), "toorpia",
                    "embedding", 0, X)


def test_unverified_legacy_cache_is_refused(pulled_root):
    X = np.zeros((1000, 768))
    context = EmbedContext(pulled_root, "clusters_sweep", "dr10")
    with pytest.raises(ValueError, match="no entry in .* and no provenance sidecar"):
        load_cached(context, "toorpia", "embedding", 0, X)
