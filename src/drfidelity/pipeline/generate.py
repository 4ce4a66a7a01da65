"""Stage ``generate``: one dataset configuration -> ``data/{dataset}/`` (arrays + meta.json)."""

from __future__ import annotations

import json
from pathlib import Path

from drfidelity.datasets import generate
from drfidelity.pipeline.files import dumps_json, write_array_dir
from drfidelity.pipeline.params import Params, snr_label
from drfidelity.storage import fingerprint


def data_dir(root: Path, dataset: str) -> Path:
    return root / "data" / dataset


def _identity(params: Params, dataset: str) -> dict:
    """What the data of ``dataset`` is a function of (besides the code)."""
    return {"n": params.n, "d": params.d, "data_seed": params.data_seed,
            "snr": snr_label(params.snr), "params": params.dataset_params.get(dataset, {})}


def load_meta(params: Params, dataset: str, root: Path) -> dict:
    """``meta.json`` of the generated data, refused if it was made with other parameters."""
    path = data_dir(root, dataset) / "meta.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run the generate stage first")
    meta = json.loads(path.read_text())
    stale = {k: (meta.get(k), v) for k, v in _identity(params, dataset).items() if meta.get(k) != v}
    if stale:
        what = ", ".join(f"{k}={old!r} (params: {new!r})" for k, (old, new) in stale.items())
        raise ValueError(f"data/{dataset} was generated with {what}: run the generate stage again")
    return meta


def run(params: Params, dataset: str, root: Path) -> None:
    knobs = params.dataset_params.get(dataset, {})
    arrays = generate(dataset, n=params.n, d=params.d, data_seed=params.data_seed,
                      snr=params.snr, params=knobs)
    meta = {
        "dataset": dataset,
        **_identity(params, dataset),
        "shape": list(arrays["X"].shape),
        "fingerprint": fingerprint(arrays["X"]),
        "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype), "sha256": fingerprint(v)}
                   for k, v in arrays.items()},
    }
    write_array_dir(data_dir(root, dataset), arrays, {"meta.json": dumps_json(meta)})
    print(f"[generate {dataset}] X {arrays['X'].shape}, sha256 {meta['fingerprint'][:12]}…",
          flush=True)
