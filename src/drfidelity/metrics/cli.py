"""``drfidelity score DATA.npz EMBEDDING.npy [--json OUT]``: every metric column of one embedding.

DATA.npz uses the layout of the reference ``inputs.npz`` files: ``X`` (required), and optionally
``X_truth``, ``labels``, ``outlier_idx``, ``outlier_dir``, ``population``. The output is one
JSON object, column -> value in the row order of benchmark.md §3.8; non-finite values (NaN, and
the -inf a log2 of 0 gives) are written as null, because JSON has no such numbers.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

OPTIONAL_ARRAYS = {"X_truth": "truth", "labels": "labels", "outlier_idx": "outlier_idx",
                   "outlier_dir": "outlier_dir", "population": "population"}


def _load(data_path: Path, embedding_path: Path) -> dict[str, float]:
    import numpy as np

    from .engine import score

    with np.load(data_path, allow_pickle=False) as data:
        if "X" not in data:
            raise ValueError(f"{data_path} has no array 'X' (found: {', '.join(data.files)})")
        arrays = {name: data[name] for name in ("X", *OPTIONAL_ARRAYS) if name in data}
    Y = np.load(embedding_path, allow_pickle=False)
    options = {OPTIONAL_ARRAYS[name]: value for name, value in arrays.items() if name != "X"}
    return score(arrays["X"], Y, **options)


def run(data_path: Path, embedding_path: Path, json_out: Path | None) -> int:
    """Score; print the JSON object or write it to ``json_out``. Exit code 2 on bad input."""
    try:
        row = _load(Path(data_path), Path(embedding_path))
        clean = {key: (value if math.isfinite(value) else None) for key, value in row.items()}
        text = json.dumps(clean, indent=2, allow_nan=False) + "\n"
        if json_out is not None:
            Path(json_out).write_text(text)
    except (ValueError, OSError) as error:
        print(f"drfidelity score: error: {error}", file=sys.stderr)
        return 2
    if json_out is None:
        sys.stdout.write(text)
    return 0
