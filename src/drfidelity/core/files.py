"""Deterministic, atomic file output for the stages.

Outputs are tracked by hash in dvc.lock, so every byte must be a function of the inputs:
``.npy`` (no timestamps, unlike ``.npz``), JSON with sorted keys, CSV with round-trip floats.
Writes go to a temporary sibling first and are renamed into place, so a failing stage never
leaves a half-written output behind.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from drfidelity.core.storage import atomic_write, digest


def dumps_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_text(path: Path, text: str) -> None:
    """``text`` as UTF-8 with the newlines as given, written atomically."""
    atomic_write(path, text.encode("utf-8"))


def write_csv(path: Path, frame: pd.DataFrame) -> None:
    write_text(path, frame.to_csv(index=False, lineterminator="\n"))


def save_npy(file, array: np.ndarray) -> None:
    """``array`` as ``.npy`` (C order, no pickles) to a path or a binary file: how the stages
    write every array, so :func:`npy_digest` is the sha256 of the file written."""
    np.save(file, np.ascontiguousarray(array), allow_pickle=False)


def npy_digest(array: np.ndarray) -> str:
    """sha256 of the ``.npy`` file :func:`save_npy` writes of ``array`` (a map's record)."""
    buffer = io.BytesIO()
    save_npy(buffer, array)
    return digest(buffer.getvalue())


def write_array_dir(path: Path, arrays: Mapping[str, np.ndarray],
                    texts: Mapping[str, str] = {}) -> None:
    """Replace directory ``path`` by one holding ``{name}.npy`` per array plus text files.

    ``arrays`` keys may contain '/' for subdirectories. The directory is built next to its
    final place and swapped in with renames.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        for name, array in arrays.items():
            target = tmp / f"{name}.npy"
            target.parent.mkdir(parents=True, exist_ok=True)
            save_npy(target, array)
        for name, text in texts.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(text)
        os.chmod(tmp, 0o755)
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_array_dir(path: Path) -> dict[str, np.ndarray]:
    """All ``.npy`` files directly in ``path``, keyed by stem."""
    if not path.is_dir():
        raise FileNotFoundError(f"{path} does not exist; run the stage that produces it first")
    return {f.stem: np.load(f, allow_pickle=False) for f in sorted(path.glob("*.npy"))}
