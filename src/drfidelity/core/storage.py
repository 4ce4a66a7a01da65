"""sha256 digests, input fingerprints and atomic writes: the one implementation of each,
shared by the stages (:mod:`drfidelity.core.files`) and the external-map cache
(:mod:`drfidelity.methods.external`).

Needs numpy only, so the methods package can use it without the pipeline's libraries.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np


def digest(data: bytes) -> str:
    """sha256 of ``data`` in hex: the one hash of files and arrays alike."""
    return hashlib.sha256(data).hexdigest()


def fingerprint(array, dtype=None) -> str:
    """sha256 of the raw C-order bytes of ``array`` (converted to ``dtype`` first when given):
    equal fingerprints mean identical inputs, whatever the memory layout."""
    return digest(np.ascontiguousarray(array, dtype=dtype).tobytes())


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary sibling, flush it to disk and rename it into place, so a
    reader (or a crash) never sees a partial file; the temporary file is removed on failure.
    The result is readable by everyone (mode 0644), like a file written the ordinary way."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
