"""Reduced parameter profiles: the kick-the-tires run and the test workspaces.

``small_supplements(params)`` shrinks every supplement to a few small inputs (two sweep
values, three noise-dims inputs, short walks, a two-value hyper-parameter grid on one dataset)
so that a run of every stage takes minutes; the main benchmark's own size is set separately.

Usage: ``python tools/profiles.py kick params.yaml`` rewrites the file in place.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

#: the main benchmark's part of the kick-the-tires profile
KICK = {"data": {"n": 300, "d": 64}, "seeds": 2}


def small_supplements(params: dict) -> dict:
    """The ``supplements`` section of a small run of ``params`` (its datasets, its methods)."""
    hyper_dataset = next((d for d in ("density", "clusters") if d in params["datasets"]),
                         params["datasets"][0])
    return {
        "addplot": dict(params["supplements"]["addplot"]),
        "random_walk": {"n_series": 2, "n_steps": 60, "d": 10, "step": 0.001, "lag": 5},
        "sweep_outlier_factor": {"values": [2.0, 5.0]},
        "sweep_minority_frac": {"values": [0.25, 0.05]},
        "noise_dims": {"dims": [6, 20], "data_seed": 42, "n_principal": 3,
                       "cluster_std": 0.005, "toorpia_extra_dims": [40],
                       "toorpia_extra_seeds": [42, 0]},
        "hyperparams": {"datasets": [hyper_dataset],
                        "grid": {"t-SNE": {"perplexity": [5, 30]}}},
    }


def kick(params: dict) -> dict:
    params = {**params, "seeds": KICK["seeds"], "data": {**params["data"], **KICK["data"]}}
    return {**params, "supplements": small_supplements(params)}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in {"kick"}:
        print("usage: python tools/profiles.py kick PARAMS.yaml", file=sys.stderr)
        return 2
    path = Path(argv[1])
    params = kick(yaml.safe_load(path.read_text()))
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
