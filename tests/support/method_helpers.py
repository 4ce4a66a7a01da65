"""Small runs of the method wrappers for the tests of both tiers: the input, the quick settings,
the digest of a map, and a run in a fresh interpreter."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from drfidelity.methods import METHODS, embed, get_method

#: Fewer iterations where a knob allows; every other setting is the benchmark's.
QUICK = {"PyMDE": {"max_iter": 60}, "PCC": {"num_epochs": 60}}
N, D = 200, 20
#: Methods that compute their map here; toorPIA is a remote service whose cached maps and API
#: path are tested in tests/unit/methods/test_toorpia_api.py and test_toorpia_cache.py and
#: tests/pipeline/test_toorpia_dvc.py.
COMPUTED = [name for name in METHODS if name != "toorPIA"]
#: the living benchmark's methods, which no frozen release runs
LIVING = ["PaCMAP", "TriMap", "PHATE"]


def make_data(n: int = N, d: int = D) -> np.ndarray:
    """A 3-dimensional latent cloud with two groups, linearly lifted to d dims plus noise."""
    rng = np.random.default_rng(7)
    latent = rng.normal(size=(n, 3))
    latent[: n // 3, 0] += 2.5
    return latent @ rng.normal(size=(3, d)) + 0.1 * rng.normal(size=(n, d))


def dreams_data() -> np.ndarray:
    """Two groups of 100 and 200 points in 30 dims: DREAMS's tests' input."""
    rng = np.random.default_rng(3)
    latent = rng.normal(size=(300, 4))
    latent[:100, 0] += 4.0
    return latent @ rng.normal(size=(4, 30)) + 0.2 * rng.normal(size=(300, 30))


def run(name: str, X: np.ndarray, seed: int) -> np.ndarray:
    return embed(get_method(name), X, seed, **QUICK.get(name, {}))


def digest(Y: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(Y, dtype=np.float64).tobytes()).hexdigest()


def run_fresh(body: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """Run ``body`` in a new interpreter that has this module's names; return its JSON
    output."""
    code = (f"import json, sys\nsys.path[:0] = {[str(Path(__file__).parent)]!r}\n"
            "from method_helpers import COMPUTED, digest, make_data, run\n"
            + textwrap.dedent(body))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
