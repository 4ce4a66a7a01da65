"""Stage ``generate``: one dataset configuration -> ``data/{dataset}/`` (arrays + meta.json)."""

from __future__ import annotations

import math
from pathlib import Path

from drfidelity.datasets.inputs import generate
from drfidelity.core.files import dumps_json, write_array_dir
from drfidelity.core.layout import data_dir, data_identity
from drfidelity.core.params import Params
from drfidelity.core.storage import fingerprint
from drfidelity.metrics.inputs import check_score_memory
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = "dataset"  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, dataset: str, root: Path) -> None:
    # the score stage needs O(N^2) memory: refuse a data.n it could not score before generating
    check_score_memory(params.n, 1 if math.isinf(params.snr) else 2,
                       f"data.n: scoring the maps of {dataset}")
    knobs = params.dataset_params.get(dataset, {})
    arrays = generate(dataset, n=params.n, d=params.d, data_seed=params.data_seed,
                      snr=params.snr, params=knobs)
    meta = {
        "dataset": dataset,
        **data_identity(params, dataset),
        "shape": list(arrays["X"].shape),
        "fingerprint": fingerprint(arrays["X"]),
        "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype), "sha256": fingerprint(v)}
                   for k, v in arrays.items()},
    }
    write_array_dir(data_dir(root, dataset), arrays, {"meta.json": dumps_json(meta)})
    print(f"[generate {dataset}] X {arrays['X'].shape}, sha256 {meta['fingerprint'][:12]}…",
          flush=True)
