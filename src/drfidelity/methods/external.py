"""Precomputed 2-D coordinates: the cache of toorPIA and the injection point for any method.

A file ``{root}/external_embeddings/{dataset}/{method}/{mode}/{tag}/seed{seed}.npy`` (float64,
shape (N, 2)) is used instead of running the method. A coordinate file is only as good as the
input it was computed on, so every file must name that input: the input fingerprint is the
sha256 of ``np.ascontiguousarray(X, float64).tobytes()`` (raw C-order bytes, as in the reference
release's ``params.json``; :func:`drfidelity.core.storage.fingerprint`). Two places may record it:

* the committed manifest ``{root}/external_embeddings.manifest.json`` (the DVC-tracked v1.3.0
  caches; built by ``tools/make_toorpia_manifest.py``), which also pins the file's own sha256;
* a provenance sidecar ``seed{seed}.json`` next to the file, written by :func:`store` (caches
  filled through an API, or coordinates a user injects).

A file with neither is refused: an unverifiable file could silently belong to other data. To
inject coordinates, call :func:`store` with the input they were computed on.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from drfidelity.core.storage import atomic_write, digest, fingerprint
from drfidelity.core.validation import check_map, check_matrix

CACHE_DIR = "external_embeddings"
MANIFEST = "external_embeddings.manifest.json"


@dataclass(frozen=True)
class EmbedContext:
    """Where a method may find precomputed coordinates for this input (root, dataset, tag)."""

    root: Path
    dataset: str
    tag: str


def cache_path(context: EmbedContext, method: str, mode: str, seed: int) -> Path:
    """``{root}/external_embeddings/{dataset}/{method}/{mode}/{tag}/seed{seed}.npy``."""
    for name, value in (("context.dataset", context.dataset), ("context.tag", context.tag),
                        ("method", method), ("mode", mode)):
        if not value or "/" in value or value in (".", ".."):
            raise ValueError(f"{name} must be a non-empty path component, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return (Path(context.root) / CACHE_DIR / context.dataset / method / mode / context.tag
            / f"seed{int(seed)}.npy")


def _sidecar(path: Path) -> Path:
    return path.with_suffix(".json")


def _provenance(path: Path, root: Path) -> tuple[dict[str, Any], str]:
    """The record that vouches for ``path`` and where it came from (manifest or sidecar)."""
    manifest_file = Path(root) / MANIFEST
    key = path.relative_to(Path(root) / CACHE_DIR).as_posix()
    if manifest_file.is_file():
        entries = json.loads(manifest_file.read_text())["entries"]
        if key in entries:
            return entries[key], f"manifest {manifest_file.name}"
    sidecar = _sidecar(path)
    if sidecar.is_file():
        return json.loads(sidecar.read_text()), f"sidecar {sidecar.name}"
    raise ValueError(
        f"{path}: no entry in {manifest_file} and no provenance sidecar {sidecar.name}, so the "
        "input it belongs to is unknown; write injected coordinates with "
        "drfidelity.methods.external.store(...)")


def load_cached(context: EmbedContext, method: str, mode: str, seed: int,
                X: np.ndarray) -> np.ndarray | None:
    """The validated (N, 2) coordinates cached for ``X``, or None when no file exists.

    Raises ValueError (naming the file) when the file's recorded input fingerprint is not the
    fingerprint of ``X``, when its bytes differ from the recorded sha256, or when it is not a
    finite float (N, 2) array with N = ``X.shape[0]``.
    """
    path = cache_path(context, method, mode, seed)
    if not path.is_file():
        return None
    X = check_matrix("X", X)
    record, origin = _provenance(path, Path(context.root))
    actual = fingerprint(X, np.float64)
    if record["input_sha256"] != actual:
        raise ValueError(
            f"{path} was computed for other data: its input fingerprint ({origin}) is "
            f"{record['input_sha256']}, the data being embedded has {actual}")
    found = digest(path.read_bytes())
    if found != record["sha256"]:
        raise ValueError(
            f"{path}: file sha256 {found} differs from "
            f"{record['sha256']} recorded in the {origin} (restore it with `dvc pull`)")
    return check_map(str(path), np.load(path, allow_pickle=False), X.shape[0])


def store(Y: np.ndarray, X: np.ndarray, context: EmbedContext, method: str, mode: str,
          seed: int, provenance: Mapping[str, Any]) -> Path:
    """Write ``Y`` (the coordinates of ``X``) to the cache with its provenance sidecar: the way
    to inject precomputed coordinates of any method.

    Parameters
    ----------
    Y : array_like, shape (N, 2)
        Finite coordinates.
    X : array_like, shape (N, D)
        The input they were computed on (its float64 fingerprint is recorded).
    context : EmbedContext
        Root, dataset and tag (e.g. ``n1000_d768_snr1``) of the benchmark input.
    method : str
        The method's directory: its registered name in lower case (``pca``, ``t-sne``, ...).
    mode : str
        ``embedding`` for a fit map (toorPIA also has ``fit``, ``embedding_basemap``,
        ``embedding_addplot``).
    seed : int
    provenance : mapping
        Anything worth keeping about where the map came from (endpoint, parameters, versions).

    Returns
    -------
    pathlib.Path
        The ``.npy`` written.

    Notes
    -----
    The sidecar records the input fingerprint and shape, the file's sha256 and shape, and the
    caller's ``provenance``. It is written first, the ``.npy`` second, each atomically, so a
    visible ``.npy`` always has its record.
    """
    X = check_matrix("X", X)
    Y = check_map("Y", Y, X.shape[0])
    path = cache_path(context, method, mode, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.save(buffer, Y, allow_pickle=False)
    data = buffer.getvalue()
    record = {**provenance, "method": method, "mode": mode, "sha256":
              digest(data), "shape": list(Y.shape),
              "input_sha256": fingerprint(X, np.float64), "input_shape": list(X.shape)}
    atomic_write(_sidecar(path), (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())
    atomic_write(path, data)
    return path

