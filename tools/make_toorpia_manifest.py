"""Build ``external_embeddings.manifest.json`` from the shared v1.3.0 folders.

The cache files are read from the shared DVC objects (``dvc-remote/``) that the committed import
pointers ``external_embeddings/*/toorpia/*.dvc`` name, the inputs they belong to from the
reference folders' ``params.json`` (sha256 of the raw C-order float64 bytes of ``X`` and the
cache path). Each entry records the cache file's sha256 and shape, the input's sha256 and shape,
the endpoint and mode, and the source release; ``drfidelity.methods.external`` refuses a cache
whose input fingerprint differs from the data being embedded.

The noise-dims csvform arm (mode ``fit``) ran on ``make_noise_dims(n, D, seed=ds)`` inputs, of
which the reference folder holds only n=1000, data seed 42 (the embedding arm's ``X``). The other
csvform inputs (``n500_*``, ``dim1500``/``dim2000``, ``_ds*``) are fingerprinted with our
generator, after checking that it reproduces every reference noise-dims ``X`` bit for bit; their
entries say so in ``input_source``. The legacy ``clusters_sweep`` caches (read by no v1.3.0
code) stay under ``"unverified"``; the loader refuses them until they have an entry.

A later release (``--release v1.4.0``) ships no reference inputs: its maps' inputs are those of
the v1.3.0 entry with the same path (its tag names n, D, noise and seed, and the generators did
not change between the releases), else the checked generators' (the noise-dims grids, the
8-series random walk). Its manifest sits beside its imports, in ``releases/<tag>/``.

Usage: python tools/make_toorpia_manifest.py [--release TAG] [SHARED_DIR] [OUTPUT]
(defaults: ``../shared`` next to the repository; the output: ``external_embeddings.manifest.json``
in the repository, or in the release's folder).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
from pathlib import Path

from drfidelity.core import runtime

runtime.configure("exact")  # the generator must reproduce the reference inputs bit for bit

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from drfidelity.core.layout import RELEASES, release_root  # noqa: E402
from drfidelity.datasets.noise_dims import make_noise_dims  # noqa: E402
from drfidelity.datasets.random_walk import make_random_walk  # noqa: E402
from drfidelity.core.storage import fingerprint  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MANIFEST = "external_embeddings.manifest.json"
SOURCE = "toorpia/dr-fidelity-benchmark v1.3.0 (commit 56951e78)"
#: a later release: where its maps come from (its tag's commit)
SOURCES = {"v1.4.0": "toorpia/dr-fidelity-benchmark v1.4.0 (commit 0be44253)"}
# Cache mode -> the toorPIA endpoint that produced it (benchmark.md §2.4, §6.3).
ENDPOINTS = {
    "embedding": "basemap_embedding",
    "embedding_basemap": "basemap_embedding",
    "embedding_addplot": "addplot_embedding",
    "fit": "fit_transform",
}
# The input array of a reference folder that each cache mode was computed on.
INPUT_ARRAY = {"embedding_basemap": "X_fit", "embedding_addplot": "X_add"}
FROM_REFERENCE = "reference-v1.3.0 params.json"
FROM_GENERATOR = ("drfidelity make_noise_dims(n, d, seed), bit-exact on every reference "
                  "noise-dims input")
FROM_FIRST_RELEASE = ("the input of the v1.3.0 entry with the same path (same tag, same "
                      "generators)")
FROM_WALK_GENERATOR = ("drfidelity make_random_walk(n, d, seed 0, n_series, step 0.001), "
                       "bit-exact on the reference random-walk input")
NOISE_DIMS_TAG = re.compile(r"n(\d+)_dim(\d+)(?:_ds(\d+))?")
WALK_TAG = re.compile(r"n(\d+)_d(\d+)_s(\d+)")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def remote_files(shared: Path, root: Path = REPO) -> dict[str, bytes]:
    """Path under ``external_embeddings/`` -> file bytes, for every map that the import
    pointers committed below ``root`` name, read from the DVC objects (each pointer's ``.dir``
    listing maps its files to content-addressed objects)."""
    objects = shared / "dvc-remote" / "files" / "md5"
    files = {}
    for pointer in sorted((root / "external_embeddings").glob("*/*/*.dvc")):
        [out] = yaml.safe_load(pointer.read_text())["outs"]
        listing = json.loads((objects / out["md5"][:2] / out["md5"][2:]).read_text())
        folder = pointer.parent.relative_to(root / "external_embeddings") / out["path"]
        for item in listing:
            files[f"{folder.as_posix()}/{item['relpath']}"] = \
                (objects / item["md5"][:2] / item["md5"][2:]).read_bytes()
    return files


def reference_inputs(shared: Path) -> dict[str, tuple[str, list[int], str]]:
    """Cache path -> (input sha256, input shape, sha256 of the cache file) from params.json."""
    inputs = {}
    for params_file in sorted((shared / "reference-v1.3.0").glob("*/*/params.json")):
        params = json.loads(params_file.read_text())
        caches = params["toorpia_cache"]
        for path in [caches] if isinstance(caches, str) else caches:
            key = path.removeprefix("external_embeddings/")
            mode = key.split("/")[2]
            array = INPUT_ARRAY.get(mode, "X")
            copy = ("toorpia.npy" if array == "X"
                    else f"toorpia_{mode.removeprefix('embedding_')}.npy")
            inputs[key] = (params["sha256_of_array_bytes"][array],
                           params["array_shapes_dtypes"][array][0],
                           params["toorpia_cache_sha256_of_file"][copy])
    return inputs


def generated_input(tag: str) -> tuple[str, list[int]]:
    """(sha256, shape) of ``make_noise_dims`` for a noise-dims tag ``n{n}_dim{d}[_ds{seed}]``."""
    n, d, ds = NOISE_DIMS_TAG.fullmatch(tag).groups()
    X = make_noise_dims(n=int(n), d=int(d), seed=int(ds) if ds else 42).clean
    return fingerprint(X), list(X.shape)


def check_generator(reference: dict[str, tuple[str, list[int], str]]) -> None:
    """Trust the generator only if it reproduces every reference noise-dims input."""
    for key, (input_sha, _, _) in reference.items():
        if key.startswith("noise_dims/") and generated_input(key.split("/")[3])[0] != input_sha:
            raise ValueError(f"make_noise_dims does not reproduce the input of {key}")


def csvform_input(key: str, reference: dict[str, tuple[str, list[int], str]]
                  ) -> tuple[str, list[int], str]:
    """(sha256, shape, source) of the input of a csvform cache: the embedding arm's reference
    ``X`` when the same tag has one, else the (checked) generator's output."""
    tag = key.split("/")[3]
    same_input = f"noise_dims/toorpia/embedding/{tag}/seed0.npy"
    if same_input in reference:
        return (*reference[same_input][:2], FROM_REFERENCE)
    return (*generated_input(tag), FROM_GENERATOR)


def build_manifest(shared: Path) -> dict:
    """The manifest: one verified entry per cache whose input is known, the rest listed."""
    files = remote_files(shared)
    reference = reference_inputs(shared)
    check_generator(reference)
    entries = {}
    for key, data in sorted(files.items()):
        mode = key.split("/")[2]
        if key in reference:
            input_sha, input_shape, reference_sha = reference[key]
            if _sha256(data) != reference_sha:
                raise ValueError(f"{key}: remote file differs from the reference copy")
            input_source = FROM_REFERENCE
        elif key.startswith("noise_dims/toorpia/fit/"):
            input_sha, input_shape, input_source = csvform_input(key, reference)
        else:
            continue
        Y = np.load(io.BytesIO(data), allow_pickle=False)
        entries[key] = {"sha256": _sha256(data), "shape": list(Y.shape),
                        "input_sha256": input_sha, "input_shape": input_shape,
                        "input_source": input_source, "endpoint": ENDPOINTS[mode],
                        "mode": mode, "source": SOURCE}
    missing = sorted(set(reference) - set(files))
    if missing:
        raise ValueError(f"named by the reference folder but absent from the remote: {missing}")
    return {"source": SOURCE, "entries": entries,
            "unverified": sorted(set(files) - set(entries))}


def walk_input(tag: str) -> tuple[str, list[int]]:
    """(sha256, shape) of ``make_random_walk`` for a random-walk tag ``n{n}_d{d}_s{series}``."""
    n, d, series = map(int, WALK_TAG.fullmatch(tag).groups())
    X = make_random_walk(n=n, d=d, seed=0, n_series=series, step=0.001).clean
    return fingerprint(X), list(X.shape)


def check_walk_generator(first: dict) -> None:
    """Trust the walk generator only if it reproduces the first release's random-walk input."""
    for key, entry in first["entries"].items():
        if key.startswith("random_walk/") and walk_input(key.split("/")[3])[0] != \
                entry["input_sha256"]:
            raise ValueError(f"make_random_walk does not reproduce the input of {key}")


def build_release_manifest(shared: Path, release: str) -> dict:
    """The manifest of a later release's maps: one verified entry per map whose input is
    known (the first release's entry of the same path, or a checked generator's)."""
    first = json.loads((REPO / MANIFEST).read_text())
    check_generator(reference_inputs(shared))
    check_walk_generator(first)
    files = remote_files(shared, release_root(REPO, release))
    entries = {}
    for key, data in sorted(files.items()):
        mode, tag = key.split("/")[2:4]
        if key in first["entries"]:
            known = first["entries"][key]
            input_sha, input_shape, source = (known["input_sha256"], known["input_shape"],
                                              FROM_FIRST_RELEASE)
        elif key.startswith("noise_dims/toorpia/"):
            input_sha, input_shape, source = (*generated_input(tag), FROM_GENERATOR)
        elif key.startswith("random_walk/toorpia/"):
            input_sha, input_shape, source = (*walk_input(tag), FROM_WALK_GENERATOR)
        else:
            continue
        Y = np.load(io.BytesIO(data), allow_pickle=False)
        entries[key] = {"sha256": _sha256(data), "shape": list(Y.shape),
                        "input_sha256": input_sha, "input_shape": input_shape,
                        "input_source": source, "endpoint": ENDPOINTS[mode], "mode": mode,
                        "source": SOURCES[release]}
    return {"source": SOURCES[release], "entries": entries,
            "unverified": sorted(set(files) - set(entries))}


def main(argv: list[str]) -> None:
    release = RELEASES[0]
    if argv[1:2] == ["--release"]:
        release, argv = argv[2], argv[:1] + argv[3:]
    shared = Path(argv[1]) if len(argv) > 1 else REPO.parent / "shared"
    output = Path(argv[2]) if len(argv) > 2 else release_root(REPO, release) / MANIFEST
    manifest = (build_manifest(shared) if release == RELEASES[0]
                else build_release_manifest(shared, release))
    output.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    print(f"{output}: {len(manifest['entries'])} entries, {len(manifest['unverified'])} unverified")


if __name__ == "__main__":
    main(sys.argv)
