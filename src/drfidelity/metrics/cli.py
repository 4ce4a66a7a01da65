"""``drfidelity score DATA.npz EMBEDDING.npy [--metric NAME] [--json OUT]``: every metric column
of one embedding.

DATA.npz uses the layout of the reference ``inputs.npz`` files: ``X`` (required; with
``--metric precomputed`` a square distance matrix), and optionally ``X_truth``, ``labels``,
``outlier_idx``, ``outlier_dir``, ``population``. The output is one JSON object, column -> value
in the engine's row order; non-finite values (NaN, and the -inf a log2 of 0 gives) are written
as null, because JSON has no such numbers, atomically when written to a file. Every way an input
can be unreadable (a damaged file, or a header announcing more data than the file holds) becomes
one ValueError naming the file, so the command prints one line. Every input and the output path
are checked before the engine (numba) is imported, and every array's header before its data is
allocated.
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings
import zipfile
import zlib
from pathlib import Path

OPTIONAL_ARRAYS = {"X_truth": "truth", "labels": "labels", "outlier_idx": "outlier_idx",
                   "outlier_dir": "outlier_dir", "population": "population"}
# what numpy and zipfile raise for a damaged or truncated file
_UNREADABLE = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error)


def _check_header(handle, stored: int, where: str) -> tuple[tuple[int, ...], int] | None:
    """The shape and byte count the .npy header at ``handle`` announces; ValueError unless
    they fit in the ``stored`` bytes that follow it: a damaged or forged header is refused
    before numpy allocates its array. None for a format version this does not read."""
    from numpy.lib import format as npy

    start = handle.tell()
    read_header = {(1, 0): npy.read_array_header_1_0,
                   (2, 0): npy.read_array_header_2_0}.get(npy.read_magic(handle))
    if read_header is None:  # a newer format version: numpy's own checks only
        return None
    shape, _, dtype = read_header(handle)
    count = 1
    for size in shape:
        count *= size
    announced = count * dtype.itemsize
    available = stored - (handle.tell() - start)
    if announced > available:
        raise ValueError(f"{where}: its header announces {dtype} data of shape {shape} "
                         f"({announced / 2**30:.3g} GiB) but the file holds {available:,} bytes "
                         "after it (damaged or truncated)")
    return shape, announced


def _headers(handle, path: Path) -> dict[str, tuple[tuple[int, ...], int]]:
    """:func:`_check_header` on the .npy file (key "") or on every member of the .npz archive
    (keys: the array names); what each announces, read before any data."""
    found = {}
    if handle.read(6) == b"\x93NUMPY":
        handle.seek(0)
        found[""] = _check_header(handle, path.stat().st_size, str(path))
    elif zipfile.is_zipfile(handle):
        with zipfile.ZipFile(handle) as archive:
            for info in archive.infolist():
                if info.filename.endswith(".npy"):
                    with archive.open(info) as member:
                        found[info.filename[:-4]] = _check_header(
                            member, info.file_size, f"{path} member {info.filename}")
    handle.seek(0)
    return {name: shape_bytes for name, shape_bytes in found.items() if shape_bytes}


def _check_room(path: Path, arrays: dict[str, tuple[tuple[int, ...], int]]) -> None:
    """MemoryError before reading ``path`` when its arrays, as their headers announce them
    (a compressed archive inflates), exceed the memory available."""
    from drfidelity.core.validation import available_memory

    needed = sum(size for _, size in arrays.values())
    available = available_memory()
    if available is not None and needed > available:
        raise MemoryError(f"{path} holds {needed / 2**20:,.0f} MiB of arrays once read, but "
                          f"only {available / 2**20:,.0f} MiB of memory is available")


def _read(path: Path, kind: str, shapes_only: bool = False):
    """``np.load`` of ``path`` with every array read while the file is open (a damaged archive
    member shows only when it is read), or with ``shapes_only`` each array's shape from its
    header alone (nothing inflated, so that an input too large to score is refused before it
    is read); ValueError naming the file when it cannot be read."""
    import numpy as np

    try:
        with open(path, "rb") as handle:  # closed even when numpy gives up half-way
            headers = _headers(handle, path)
            if shapes_only:
                return {name: shape for name, (shape, _) in headers.items()}
            _check_room(path, headers)
            loaded = np.load(handle, allow_pickle=False)
            if isinstance(loaded, np.ndarray):
                return loaded
            with loaded:
                return {name: loaded[name] for name in loaded.files}
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except MemoryError as exc:
        raise MemoryError(f"{path} does not fit in memory ({exc})") from None
    except _UNREADABLE as exc:
        if str(path) in str(exc):
            raise
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


def check_output(json_out: Path, inputs: tuple[Path, ...] = ()) -> None:
    """ValueError unless ``json_out`` can be written without losing a file: its folder exists
    and is writable, it is no folder and none of ``inputs`` (which it would replace)."""
    if json_out.is_dir():
        raise ValueError(f"--json {json_out} is a folder, not a file name")
    folder = json_out.parent
    if not folder.is_dir():
        raise ValueError(f"--json {json_out}: the folder {folder} does not exist")
    for path in inputs:
        if json_out.resolve() == path.resolve() or (
                json_out.exists() and path.exists() and json_out.samefile(path)):
            raise ValueError(f"--json {json_out} is the input {path}: writing the scores "
                             "there would replace it; name another file")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"--json {json_out}: the folder {folder} is not writable")


def write_json(json_out: Path, text: str) -> None:
    """``text`` written atomically to ``json_out`` (nothing is left on failure, e.g. a full
    disk); OSError naming the path."""
    from drfidelity.core.storage import atomic_write

    try:
        atomic_write(json_out, text.encode("utf-8"))
    except OSError as exc:
        raise OSError(f"--json {json_out}: cannot write it ({exc.strerror or exc})") from None


def _load(data_path: Path, embedding_path: Path, metric: str) -> dict[str, float]:
    from .inputs import check_score_memory, score_inputs

    shapes = _read(data_path, ".npz archive", shapes_only=True)
    if len(shapes.get("X", ())) == 2:  # the pairs' memory, before a byte of X is inflated
        check_score_memory(shapes["X"][0], 2 if "X_truth" in shapes else 1)
    arrays = read_npz(data_path)
    if "X" not in arrays:
        raise ValueError(f"{data_path} has no array 'X' (found: {', '.join(arrays) or 'none'})")
    Y = read_npy(embedding_path)
    options = {OPTIONAL_ARRAYS[name]: value for name, value in arrays.items()
               if name in OPTIONAL_ARRAYS}
    inputs, Y = score_inputs(arrays["X"], Y, metric=metric, **options)  # before numba loads
    from .engine import Reference
    from .jit import COMPILE_SECONDS, cache_root, compiled_here

    if not compiled_here():
        print(f"drfidelity score: compiling the metric kernels for this machine, once (about "
              f"{COMPILE_SECONDS} s; later calls load them from {cache_root()})",
              file=sys.stderr, flush=True)
    return Reference._from_inputs(inputs, per_point=True).score(Y)


def _warning_line(message, category, *_, **__) -> None:
    """A warning as one line on stderr, like the errors (not Python's file:line format)."""
    print(f"drfidelity score: warning: {message}", file=sys.stderr)


def run(data_path: Path, embedding_path: Path, json_out: Path | None, *,
        metric: str = "euclidean", debug: bool = False) -> int:
    """Score; print the JSON object or write it to ``json_out``. Exit code 2 on bad input, with
    one line on stderr (the traceback too when ``debug``)."""
    from drfidelity.core.console import user_error

    try:
        if json_out is not None:
            check_output(Path(json_out), (Path(data_path), Path(embedding_path)))
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = _warning_line
            row = _load(Path(data_path), Path(embedding_path), metric)
        clean = {key: (value if math.isfinite(value) else None) for key, value in row.items()}
        text = json.dumps(clean, indent=2, allow_nan=False) + "\n"
        if json_out is not None:
            write_json(Path(json_out), text)
    except Exception as error:  # noqa: BLE001 - user_error re-raises what is not bad input
        return user_error("drfidelity score", error, debug)
    if json_out is None:
        print(text, end="")
    return 0
