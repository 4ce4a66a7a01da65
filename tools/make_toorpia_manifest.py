"""Build ``external_embeddings.manifest.json`` from the shared v1.3.0 folders.

The cache files are read from the DVC remote itself (``dvc-remote/``: the pointer's ``.dir``
listing maps each path to its content-addressed object), the inputs they belong to from the
reference folders' ``params.json`` (sha256 of the raw C-order float64 bytes of ``X`` and the
cache path). Each entry records the cache file's sha256 and shape, the input's sha256 and shape,
the endpoint and mode, and the source release; ``drfidelity.methods.external`` refuses a cache
whose input fingerprint differs from the data being embedded.

The noise-dims csvform arm (mode ``fit``, data seed 42) ran on the same ``X`` as the embedding
arm, so its seeds get that ``X``'s fingerprint too. Caches whose inputs are not in the reference
folder (``n500_*``, ``dim1500``/``dim2000``, ``_ds*``, the legacy ``clusters_sweep``) are listed
under ``"unverified"``; the loader refuses them until they have an entry.

Usage: python tools/make_toorpia_manifest.py [SHARED_DIR] [OUTPUT]
(defaults: ``../shared`` next to the repository, ``external_embeddings.manifest.json`` in it).
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SOURCE = "toorpia/dr-fidelity-benchmark v1.3.0 (commit 56951e78)"
# Cache mode -> the toorPIA endpoint that produced it (benchmark.md §2.4, §6.3).
ENDPOINTS = {
    "embedding": "basemap_embedding",
    "embedding_basemap": "basemap_embedding",
    "embedding_addplot": "addplot_embedding",
    "fit": "fit_transform",
}
# The input array of a reference folder that each cache mode was computed on.
INPUT_ARRAY = {"embedding_basemap": "X_fit", "embedding_addplot": "X_add"}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def remote_files(shared: Path) -> dict[str, bytes]:
    """Path under ``external_embeddings/`` -> file bytes, as stored in the DVC remote."""
    pointer = (shared / "toorpia-v1.3.0" / "external_embeddings.dvc").read_text()
    dir_md5 = next(line.split(":")[1].strip() for line in pointer.splitlines()
                   if line.strip().startswith("- md5:"))
    objects = shared / "dvc-remote" / "files" / "md5"
    listing = json.loads((objects / dir_md5[:2] / dir_md5[2:]).read_text())
    return {item["relpath"]: (objects / item["md5"][:2] / item["md5"][2:]).read_bytes()
            for item in listing}


def known_inputs(shared: Path) -> dict[str, tuple[str, list[int], str]]:
    """Cache path -> (input sha256, input shape, sha256 of the cache file) from params.json."""
    inputs = {}
    for params_file in sorted((shared / "reference-v1.3.0").glob("*/*/params.json")):
        params = json.loads(params_file.read_text())
        caches = params["toorpia_cache"]
        for path in [caches] if isinstance(caches, str) else caches:
            key = path.removeprefix("external_embeddings/")
            mode = key.split("/")[2]
            array = INPUT_ARRAY.get(mode, "X")
            copy = "toorpia.npy" if array == "X" else f"toorpia_{mode.removeprefix('embedding_')}.npy"
            inputs[key] = (params["sha256_of_array_bytes"][array],
                           params["array_shapes_dtypes"][array][0],
                           params["toorpia_cache_sha256_of_file"][copy])
            if params["generator"] == "noise_dims":
                tag = key.split("/")[3]
                for seed in range(3):  # csvform arm: method seeds 0..2 on the same X
                    inputs[f"noise_dims/toorpia/fit/{tag}/seed{seed}.npy"] = (*inputs[key][:2], "")
    return inputs


def build_manifest(shared: Path) -> dict:
    """The manifest: one verified entry per cache whose input is known, the rest listed."""
    files = remote_files(shared)
    entries = {}
    for key, (input_sha, input_shape, expected_sha) in sorted(known_inputs(shared).items()):
        if key not in files:
            raise ValueError(f"{key}: named by the reference folder but absent from the remote")
        data = files[key]
        if expected_sha and _sha256(data) != expected_sha:
            raise ValueError(f"{key}: remote file differs from the reference copy")
        Y = np.load(io.BytesIO(data), allow_pickle=False)
        mode = key.split("/")[2]
        entries[key] = {"sha256": _sha256(data), "shape": list(Y.shape),
                        "input_sha256": input_sha, "input_shape": input_shape,
                        "endpoint": ENDPOINTS[mode], "mode": mode, "source": SOURCE}
    return {"source": SOURCE, "entries": entries,
            "unverified": sorted(set(files) - set(entries))}


def main(argv: list[str]) -> None:
    shared = Path(argv[1]) if len(argv) > 1 else REPO.parent / "shared"
    output = Path(argv[2]) if len(argv) > 2 else REPO / "external_embeddings.manifest.json"
    manifest = build_manifest(shared)
    output.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    print(f"{output}: {len(manifest['entries'])} entries, {len(manifest['unverified'])} unverified")


if __name__ == "__main__":
    main(sys.argv)
