"""``drfidelity score DATA.npz EMBEDDING.npy [--json OUT]``: every metric column of one embedding.

DATA.npz uses the layout of the reference ``inputs.npz`` files: ``X`` (required), and optionally
``X_truth``, ``labels``, ``outlier_idx``, ``outlier_dir``, ``population``. The output is one
JSON object, column -> value in the engine's row order; non-finite values (NaN, and the -inf a
log2 of 0 gives) are written as null, because JSON has no such numbers. Every way an input can
be unreadable becomes one ValueError naming the file, so the command prints one line. Every
input and the output path are checked before the engine (numba) is imported.
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from pathlib import Path

OPTIONAL_ARRAYS = {"X_truth": "truth", "labels": "labels", "outlier_idx": "outlier_idx",
                   "outlier_dir": "outlier_dir", "population": "population"}
# what numpy and zipfile raise for a damaged or truncated file
_UNREADABLE = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error)


def _read(path: Path, kind: str):
    """``np.load`` of ``path`` with every array read while the file is open (a damaged archive
    member shows only when it is read); ValueError naming the file when it cannot be read."""
    import numpy as np

    try:
        with open(path, "rb") as handle:  # closed even when numpy gives up half-way
            loaded = np.load(handle, allow_pickle=False)
            if isinstance(loaded, np.ndarray):
                return loaded
            with loaded:
                return {name: loaded[name] for name in loaded.files}
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except _UNREADABLE as exc:
        raise ValueError(f"{path} is not a readable {kind} ({exc})") from None


def read_npz(path: Path) -> dict:
    """Every array of the .npz archive ``path``; ValueError naming the file when it is not one."""
    arrays = _read(path, ".npz archive")
    if not isinstance(arrays, dict):
        raise ValueError(f"{path} holds a single .npy array, not an .npz archive: save the data "
                         "with numpy.savez(path, X=X, ...)")
    return arrays


def read_npy(path: Path):
    """The array in the .npy file ``path``; ValueError naming the file when it is not one."""
    array = _read(path, ".npy array")
    if isinstance(array, dict):
        raise ValueError(f"{path} is an .npz archive, not one .npy array: save the map with "
                         "numpy.save(path, Y)")
    return array


def check_output(json_out: Path) -> None:
    """ValueError unless ``json_out`` can be written: its folder exists, it is no folder."""
    if json_out.is_dir():
        raise ValueError(f"--json {json_out} is a folder, not a file name")
    folder = json_out.parent
    if not folder.is_dir():
        raise ValueError(f"--json {json_out}: the folder {folder} does not exist")


def _load(data_path: Path, embedding_path: Path) -> dict[str, float]:
    from .inputs import score_inputs

    arrays = read_npz(data_path)
    if "X" not in arrays:
        raise ValueError(f"{data_path} has no array 'X' (found: {', '.join(arrays) or 'none'})")
    Y = read_npy(embedding_path)
    options = {OPTIONAL_ARRAYS[name]: value for name, value in arrays.items()
               if name in OPTIONAL_ARRAYS}
    inputs, Y = score_inputs(arrays["X"], Y, **options)  # before numba is even imported
    from .engine import Reference

    return Reference._from_inputs(inputs, per_point=True).score(Y)


def run(data_path: Path, embedding_path: Path, json_out: Path | None, *,
        debug: bool = False) -> int:
    """Score; print the JSON object or write it to ``json_out``. Exit code 2 on bad input, with
    one line on stderr (the traceback too when ``debug``)."""
    from drfidelity.core.console import user_error

    try:
        if json_out is not None:
            check_output(Path(json_out))
        row = _load(Path(data_path), Path(embedding_path))
        clean = {key: (value if math.isfinite(value) else None) for key, value in row.items()}
        text = json.dumps(clean, indent=2, allow_nan=False) + "\n"
        if json_out is not None:
            Path(json_out).write_text(text)
    except Exception as error:  # noqa: BLE001 - user_error re-raises what is not bad input
        return user_error("drfidelity score", error, debug)
    if json_out is None:
        print(text, end="")
    return 0
