"""Stage ``generate``: one dataset configuration -> ``data/{dataset}/`` (arrays + meta.json)."""

from __future__ import annotations

from pathlib import Path

from drfidelity.datasets import generate
from drfidelity.pipeline.files import dumps_json, fingerprint, write_array_dir
from drfidelity.pipeline.params import Params, snr_label


def data_dir(root: Path, dataset: str) -> Path:
    return root / "data" / dataset


def run(params: Params, dataset: str, root: Path) -> None:
    knobs = params.dataset_params.get(dataset, {})
    arrays = generate(dataset, n=params.n, d=params.d, data_seed=params.data_seed,
                      snr=params.snr, params=knobs)
    meta = {
        "dataset": dataset,
        "n": int(arrays["X"].shape[0]),
        "d": int(arrays["X"].shape[1]),
        "data_seed": params.data_seed,
        "snr": snr_label(params.snr),
        "params": knobs,
        "fingerprint": fingerprint(arrays["X"]),
        "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype), "sha256": fingerprint(v)}
                   for k, v in arrays.items()},
    }
    write_array_dir(data_dir(root, dataset), arrays, {"meta.json": dumps_json(meta)})
    print(f"[generate {dataset}] X {arrays['X'].shape}, sha256 {meta['fingerprint'][:12]}…",
          flush=True)
