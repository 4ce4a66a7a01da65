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
from drfidelity.jobs.job import Job
from drfidelity.jobs.runner import Input, JobsFailed, run_all, run_job


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
