"""Each embedding job runs in a fresh process, so a map does not depend on what ran before it.

The history effect is real: ARPACK keeps the seed it restarts from between calls, and UMAP
(n_neighbors=100, seed 0) on the main clusters input gives another map after two other UMAP
fits in the same process (src/drfidelity/jobs/fresh.py)."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

from drfidelity.jobs.fresh import in_fresh_process
from drfidelity.core.job import Job
from drfidelity.jobs.runner import Input, JobsFailed, run_all
from drfidelity.methods.base import run_job


def test_every_call_gets_a_process_of_its_own():
    first, second = in_fresh_process(os.getpid), in_fresh_process(os.getpid)
    assert len({first, second, os.getpid()}) == 3


def test_an_error_in_the_process_is_raised_here():
    with pytest.raises(ZeroDivisionError):
        in_fresh_process(divmod, 1, 0)


def test_a_job_failing_in_its_process_names_the_job(tmp_path):
    bad = tmp_path / "X.npy"
    np.save(bad, np.array([object()], dtype=object), allow_pickle=True)
    with pytest.raises(JobsFailed, match=r"^embed x: 1 job\(s\) failed: PCA seed 0: ValueError: "
                                         r".*allow_pickle=False"):
        run_all("embed x", [Job.of("PCA", 0)], {"": Input({"X": str(bad)})}, 1, tmp_path)


def _digest(Y) -> str:
    return hashlib.sha256(np.ascontiguousarray(Y).tobytes()).hexdigest()


def _last_in_one_process(X: np.ndarray, jobs: list[Job]) -> str:
    """The digest of the last job's map when all of them run one after another in this
    process (what a long-lived worker did)."""
    for job in jobs[:-1]:
        run_job(job, {"X": X}, None)
    return _digest(run_job(jobs[-1], {"X": X}, None)[1])


@pytest.mark.slow  # four UMAP fits at N = 1000 (about a minute)
def test_a_umap_map_does_not_depend_on_the_jobs_before_it(tmp_path):
    from drfidelity.core.params import load_params
    from drfidelity.datasets.inputs import generate

    params = load_params("params.yaml")
    X = generate("clusters", n=params.n, d=params.d, data_seed=params.data_seed,
                 snr=params.snr, params=params.dataset_params["clusters"])["X"]
    np.save(tmp_path / "X.npy", X)
    before = Job.of("UMAP", 0, {"min_dist": 0.1, "n_neighbors": 30})
    target = Job.of("UMAP", 0, {"min_dist": 0.1, "n_neighbors": 100}, label="target")
    inputs = {"": Input({"X": str(tmp_path / "X.npy")})}

    alone, _, _ = run_all("alone", [target], inputs, 1, tmp_path)
    after, _, _ = run_all("after", [before, target], inputs, 1, tmp_path)
    assert _digest(after[target]) == _digest(alone[target])
    # the effect the fresh processes remove: the same two jobs in one (fresh) process
    assert in_fresh_process(_last_in_one_process, X, [before, target]) != _digest(alone[target])


FORKED_VS_SPAWNED = """
import hashlib, multiprocessing, sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
import numpy as np
from drfidelity.registry import METHODS
from drfidelity.core.job import Job
from drfidelity.jobs.runner import Input, run_all
from drfidelity.methods.base import run_job

folder = Path(sys.argv[1])
X = np.random.default_rng(7).normal(size=(120, 16))
np.save(folder / "X.npy", X)
jobs = [Job.of(name, 1, dict(METHODS[name].defaults)) for name in sys.argv[2:]]
forked, _, _ = run_all("forked", jobs, {"": Input({"X": str(folder / "X.npy")})}, 2, folder)
spawning = multiprocessing.get_context("spawn")
for job in jobs:
    with ProcessPoolExecutor(1, mp_context=spawning) as alone:
        spawned = alone.submit(run_job, job, {"X": X}, None).result()[1]
    same = forked[job].tobytes() == spawned.tobytes()
    print(job.method, "same" if same else "DIFFERENT", flush=True)
"""


@pytest.mark.parametrize("methods", [["PCA", "Isomap", "t-SNE", "UMAP", "DREAMS"],
                                     ["PyMDE", "PCC"]], ids=["sklearn-umap", "torch"])
def test_a_map_from_the_preloaded_forkserver_equals_a_spawned_process_s(tmp_path, methods):
    """Forking job processes from a process that has imported the methods' libraries (the
    runner's way, :mod:`drfidelity.jobs.fresh`) gives the same bytes as spawning each one
    (how every committed map was made), for the libraries with hidden state (ARPACK, numba,
    torch's thread pool) too."""
    import subprocess
    import sys

    from drfidelity.jobs.fresh import START_METHOD

    assert START_METHOD == "forkserver"
    run = subprocess.run([sys.executable, "-c", FORKED_VS_SPAWNED, str(tmp_path), *methods],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    verdicts = [line for line in run.stdout.splitlines() if line.endswith(("same", "DIFFERENT"))]
    assert verdicts == [f"{name} same" for name in methods]
