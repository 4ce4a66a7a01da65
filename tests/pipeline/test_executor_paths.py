"""Every way the executor runs a job gives the same map bytes: the recorded golden ones.

The job executor (``drfidelity.jobs.runner``, ``.fresh``, ``.cluster``) decides where and when
a job runs, never what it computes (``drfidelity.methods.base.run_job``), so no DVC stage
depends on it and an edit there reruns no embedding. These tests are the guarantee that makes
that safe: one job of every computed method, run on every path the executor has (a fresh
spawned process, the forkserver pool one and two at a time, a Dask cluster, a stage with
several inputs), must give the golden bytes recorded below, on a CPU of either x86-64 vendor
(PyMDE's and PCC's square roots are IEEE: drfidelity.methods.torch_setup).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import numpy as np
import pytest

from drfidelity.registry import METHODS
from drfidelity.jobs.cluster import SCHEDULER_VARIABLE
from drfidelity.core.job import Job
from drfidelity.jobs.runner import Input, run_all
from drfidelity.methods.base import run_job
from pipeline_helpers import env
from test_cluster import cluster

#: the inputs, by configuration key: standard normal (N, D) = (80, 12) points drawn by
#: ``np.random.default_rng(seed)``; "a" is the single-input runs' input
INPUT_SEEDS = {"a": 11, "b": 12}
SHAPE = (80, 12)
#: small settings that run in about a second (toorPIA's maps are imported, not computed)
SETTINGS = {"PCA": {}, "Isomap": {"n_neighbors": 10}, "PyMDE": {"max_iter": 50},
            "PCC": {"num_epochs": 50}, "t-SNE": {"perplexity": 10},
            "UMAP": {"n_neighbors": 10, "min_dist": 0.1},
            "DREAMS": {"reg_lambda": 0.15, "perplexity": 10},
            "PaCMAP": {"n_neighbors": 10, "MN_ratio": 0.5, "FP_ratio": 2.0},
            "TriMap": {"n_inliers": 10, "n_outliers": 4, "n_random": 3},
            "PHATE": {"knn": 5, "decay": 40, "t": "auto", "gamma": 1}}
#: one job per method: seed 1 for a stochastic method (not the default seed 0), else 0
JOBS = [Job.of(name, METHODS[name].seeds(2)[-1], settings) for name, settings in SETTINGS.items()]

#: sha256 of ``np.ascontiguousarray(Y, dtype=np.float64).tobytes()`` for each job's map ``Y``
#: on each input. Recorded on an AMD EPYC host (vendor_id AuthenticAMD, 2 cores) under exact
#: numerics, from drfidelity 5086653 plus the move of run_job to drfidelity.methods.base (numpy
#: 1.26.4, scipy 1.15.3, scikit-learn 1.7.2, torch 2.13.0+cpu, umap-learn 0.5.12, numba 0.68.1,
#: openTSNE 1.0.4, pymde 0.3.0, pccdr 1.0.3), PyMDE's and PCC's anew once their square roots
#: became IEEE: each job run as ``run_job(job, {"X": X}, None)`` in a process of its own,
#: spawned from one that had called ``runtime.configure("exact")`` (what the ``spawned`` fixture
#: does), twice, with the same digests both times. A library upgrade that changes a map changes
#: its golden: record it anew the same way. PaCMAP's, TriMap's and PHATE's were recorded the same
#: way, twice, on an Intel Xeon host (vendor_id GenuineIntel, 2 cores), with pacmap 0.9.1,
#: faiss-cpu 1.15.1, trimap 1.2.0 and phate 2.0.0 (graphtools 2.1.0, tasklogger 1.2.0) in the
#: lock; on an AMD EPYC host (2026-12-07) PaCMAP's and PHATE's came out the same. TriMap's,
#: once its weights' tempered log took the IEEE square root (``methods/trimap.py``), were
#: computed on the Intel host and then on an AMD EPYC host with the same digests (2026-12-07;
#: stock TriMap had drawn another map on each vendor: docs/methods.md).
GOLDEN = {
    "a": {"PCA": "e8be2f6bdabc14c4d39373f38cb57f3724aa66be00122448cb2df52a4b064053",
          "Isomap": "e3f78d4c6906fc58822ca3662b7cf73d3d9d34709453bfeb759afd8b62458429",
          "PyMDE": "15c1f8a6c2d898216c17da395a5d464e57102fd8de81c786c843fb9f2a1895cd",
          "PCC": "bb73590e3012438b4a4c0e1f02c8da809a6dc603f46597ad649dad71e8500221",
          "t-SNE": "c3115a8f52f54e7aad89e07c521263f4d1530c83f27f4d0cd34acd86d1401630",
          "UMAP": "86cd87de8ecaea86359753e8a3cdf48e14e6f2ed08dd564e15469570694ad92e",
          "DREAMS": "06eac2a6750997697f6b368ecdf0b72ae9f167a1f119e422706607362a7fa88a",
          "PaCMAP": "0aa7d3caac9ceaefcaf30606f421ed8e4ee23816ceb59a0b4488bc57571790d7",
          "TriMap": "283f6db8e79b3fc40e8a210b61d4e3a3c81c4bd91d1e1ae3590148fffa4428e5",
          "PHATE": "cd3238f56d111501ac7a9199045361081aadbefcbb04678ecd917c2b598d6142"},
    "b": {"PCA": "b84f374b206f8d52cb5f6a397e938beb42c60a26b1c078c64c8c36b5bc112631",
          "Isomap": "705bef09760260b74d19d0cd041aac0e08924299cbf789b33db41c7739e4fe74",
          "PyMDE": "480cd422d3ee0f806e9ac61be1b3ce1659d09c40f5da9cebfc8d218f65578c0a",
          "PCC": "a6a66f7d7b93cf717f94d72321590c929d96d3a8c7dda779c74c0f77564d376b",
          "t-SNE": "90cf5c4825571634845c1ddec4ff70e0765e459524e867a6c196c57c8a5aa7af",
          "UMAP": "3146afd9f5014ede076eafa56e18b91cd5161420750aa68e289c6ed15ab862a3",
          "DREAMS": "a5df334078f61b56cf17304fe5c45b922b2c2a1fc685616df6df441052ba7ee0",
          "PaCMAP": "eb0b91d857a090516508bd47929d03e85769cc4c86bb6828168f9ca6bf9f7e5d",
          "TriMap": "5292752bb52395dc8a17b760beeacf282a4a064107803d274714a9dd322ce1c8",
          "PHATE": "90a61460392ca8665d85d7f07e3dd527613e555a78cc0552986332a27f172924"},
}


def digest(Y) -> str:
    return hashlib.sha256(np.ascontiguousarray(Y, dtype=np.float64).tobytes()).hexdigest()


def on(config: str) -> list[Job]:
    return [replace(job, config=config) for job in JOBS]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Input]:
    folder = tmp_path_factory.mktemp("executor-inputs")
    made = {}
    for config, seed in INPUT_SEEDS.items():
        np.save(folder / f"X_{config}.npy", np.random.default_rng(seed).normal(size=SHAPE))
        made[config] = Input({"X": str(folder / f"X_{config}.npy")})
    return made


@pytest.fixture(scope="module")
def spawned(inputs) -> dict[str, str]:
    """Path (a): each job's map on input "a" alone, by ``run_job`` in a spawned process of its
    own (nothing preloaded, nothing run before it), two at a time."""
    X = np.load(inputs["a"].paths["X"])
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"),
                             max_tasks_per_child=1) as pool:
        futures = [pool.submit(run_job, job, {"X": X}, None) for job in JOBS]
        return {job.method: digest(future.result()[1]) for job, future in zip(JOBS, futures)}


def digests(maps: dict[Job, object]) -> dict[str, dict[str, str]]:
    """The runner's maps as {config: {method: digest}}."""
    made: dict[str, dict[str, str]] = {}
    for job, Y in maps.items():
        made.setdefault(job.config, {})[job.method] = digest(Y)
    return made


def test_the_goldens_cover_every_computed_method():
    """A method added to the registry needs its golden here (toorPIA's maps are imported)."""
    computed = [name for name, method in METHODS.items() if not method.local_only]
    assert list(SETTINGS) == computed == list(GOLDEN["a"]) == list(GOLDEN["b"])
    for name, settings in SETTINGS.items():
        METHODS[name].settings(settings)  # valid settings


def test_a_spawned_process_gives_the_golden(spawned):
    """(a) ``run_job`` alone in a fresh spawned process."""
    assert spawned == GOLDEN["a"]


@pytest.mark.parametrize("workers", [1, 2])
def test_the_local_pool_gives_the_golden(inputs, tmp_path, workers):
    """(b) one job at a time and (c) two: each job in a process forked from the stage's
    forkserver, which has imported every method's libraries."""
    maps, skipped, injected = run_all(f"pool {workers}", on(""), {"": inputs["a"]}, workers,
                                      tmp_path)
    assert not skipped and not injected
    assert digests(maps) == {"": GOLDEN["a"]}


def test_a_run_of_several_inputs_gives_each_job_its_own_input_s_map(inputs, tmp_path):
    """(e) Two inputs keyed by configuration, their jobs interleaved, two at a time: each map
    is the one of its job on its own input alone."""
    interleaved = [job for pair in zip(on("a"), on("b")) for job in pair]
    maps, _, _ = run_all("two inputs", interleaved, inputs, 2, tmp_path)
    assert digests(maps) == GOLDEN


def test_a_dask_cluster_gives_the_golden_on_several_inputs(inputs, tmp_path, monkeypatch):
    """(d) and (e) on a Dask cluster (a scheduler and two ``drfidelity worker`` processes on
    127.0.0.1, as test_cluster.py starts them): every job of two interleaved inputs runs on
    the workers (none needs a file of this checkout), and each map is the golden of its job
    on its own input (each input is scattered to the workers under a name of its own)."""
    from distributed import Client

    interleaved = [job for pair in zip(on("a"), on("b")) for job in pair]
    with (cluster(lambda address: ["drfidelity", "worker", address, "--nworkers", "2"],
                  env()) as address,
          Client(address, timeout=60, set_as_default=False) as client):
        monkeypatch.setenv(SCHEDULER_VARIABLE, address)
        client.get_task_stream()  # starts the scheduler's record of the tasks run
        start = time.time()
        maps, _, _ = run_all("on the cluster", interleaved, inputs, 2, tmp_path)
        ran = client.get_task_stream(start=start)
    assert digests(maps) == GOLDEN
    assert sum(str(task["key"]).startswith("in_job_process") for task in ran) \
        == len(interleaved)  # every job ran on a worker, none here
