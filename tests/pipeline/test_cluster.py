"""Embed jobs on a Dask cluster on 127.0.0.1 (``DRFIDELITY_SCHEDULER``).

A scheduler and ``drfidelity worker`` processes are started as a user would start them; the
embed stage's maps must be the bytes of the local pool's, a worker without exact numerics must
be refused, and an unreachable scheduler must be one line.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager, suppress

import pytest
import yaml

from drfidelity.core import runtime
from pipeline_helpers import copy_run, env, stage, tree_digest, workspace

DATASET = "density"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_listening(address: str, timeout: float) -> None:
    """Return once something accepts connections at ``address`` (tcp://HOST:PORT)."""
    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@contextmanager
def cluster(worker_command, worker_env, n_workers: int = 2):
    """A scheduler on 127.0.0.1 and ``n_workers`` worker processes started by
    ``worker_command(address)``; yields the scheduler address once every worker has joined."""
    from distributed import Client

    address = f"tcp://127.0.0.1:{free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                                  "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                                  "--no-dashboard"], env=env(), **quiet)
    # as docs/dask.md says, workers are started once the scheduler listens: `drfidelity worker`
    # refuses an address nothing answers on at once, without Dask's retries
    wait_until_listening(address, timeout=60)
    workers = subprocess.Popen(worker_command(address), env=worker_env, start_new_session=True,
                               **quiet)
    try:
        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(n_workers, timeout=120)
        yield address
    finally:
        for process in (workers, scheduler):
            process.terminate()
        for process in (workers, scheduler):
            process.wait(timeout=60)
        # the job processes the workers spawned outlive them (seen: an hour after the test)
        with suppress(ProcessLookupError):
            os.killpg(workers.pid, signal.SIGKILL)


def map_stages(root, stage_name: str, target: str, address: str | None,
               methods: list[str] | None = None) -> subprocess.CompletedProcess:
    """The map stages of ``target`` (a dataset or study), one per method (default: those the
    run's pipeline has: a dataset's, params.yaml's ``methods``; a study's, its ``study_maps`` in
    studies.yaml), as one result: the worst exit code and the joined output."""
    extra = {"DRFIDELITY_SCHEDULER": address} if address else {}
    if methods is None and stage_name == "embed":
        methods = yaml.safe_load((root / "params.yaml").read_text())["methods"]
    elif methods is None:
        stages = yaml.safe_load((root / "studies.yaml").read_text())["study_maps"].values()
        methods = [stage["method"] for stage in stages if stage["study"] == target]
    results = [subprocess.run(["drfidelity", "stage", stage_name, f"{target}/{method}"],
                              cwd=root, env={**env(), **extra}, capture_output=True, text=True,
                              timeout=900) for method in methods]
    return subprocess.CompletedProcess(
        [stage_name, target], max(r.returncode for r in results),
        "".join(r.stdout for r in results), "".join(r.stderr for r in results))


def embed_with(root, address: str | None, methods: list[str] | None = None
               ) -> subprocess.CompletedProcess:
    return map_stages(root, "embed", DATASET, address, methods)


def on_cluster(root) -> subprocess.CompletedProcess:
    with cluster(lambda address: ["drfidelity", "worker", address, "--nworkers", "2"],
                 env()) as address:
        return embed_with(root, address)


@pytest.fixture
def small(small_run, tmp_path):
    """A copy of the shared run without the dataset's maps."""
    root = copy_run(small_run, tmp_path / "ws")
    shutil.rmtree(root / "embeddings" / DATASET)
    return root


def test_cluster_maps_are_byte_identical_to_local_ones(small, small_run):
    """The shared run made its maps here, one job at a time (the same bytes as the local
    pool's: test_studies.py::test_one_job_equals_two_jobs)."""
    remote = on_cluster(small)
    assert remote.returncode == 0, remote.stderr
    expected = tree_digest(small_run, f"embeddings/{DATASET}")
    assert tree_digest(small, f"embeddings/{DATASET}") == expected
    # each method's status.json and maps: PCA, Isomap, t-SNE (two seeds), DREAMS, toorPIA (none)
    assert len(expected) == 2 + 2 + 3 + 2 + 1
    assert "toorPIA seed 0 skipped: no map at" in remote.stdout   # cache-first: ran here


@pytest.mark.slow  # UMAP compiles in every fresh process (the pool's and the cluster's);
# the mechanism is checked in the default suite by the test above
def test_cluster_umap_maps_are_byte_identical_to_the_local_pool(tmp_path):
    root = workspace(tmp_path / "ws", data__n=200, data__d=32, seeds=2, datasets=[DATASET],
                     methods=["UMAP"])
    stage(root, "generate", DATASET)
    local = embed_with(root, None)
    assert local.returncode == 0, local.stderr
    expected = tree_digest(root, "embeddings")
    shutil.rmtree(root / "embeddings")
    remote = on_cluster(root)
    assert remote.returncode == 0, remote.stderr
    assert tree_digest(root, "embeddings") == expected and len(expected) == 1 + 2


@pytest.mark.slow
def test_cluster_maps_of_a_stage_with_several_inputs_are_the_local_ones(small_run, tmp_path):
    """A stage with several inputs (the minority-fraction sweep: one input per value): each
    job's map on the cluster is made from its own input, as here."""
    study = "sweep_minority_frac"
    maps = f"embeddings/studies/{study}"
    root = copy_run(small_run, tmp_path / "ws")
    shutil.rmtree(root / maps)
    with cluster(lambda address: ["drfidelity", "worker", address, "--nworkers", "2"],
                 env()) as address:
        remote = map_stages(root, "study_embed", study, address)
    assert remote.returncode == 0, remote.stderr
    expected = tree_digest(small_run, maps)
    assert len({path.split("/")[4] for path in expected}) > 1   # several inputs
    assert tree_digest(root, maps) == expected


def test_worker_without_exact_numerics_is_refused(small):
    plain = {k: v for k, v in env().items() if k not in runtime.EXACT_VARIABLES}
    with cluster(lambda address: [sys.executable, "-m", "distributed.cli.dask_worker",
                                  address, "--nthreads", "1", "--no-dashboard"],
                 plain, n_workers=1) as address:
        refused = embed_with(small, address, ["PCA"])
    assert refused.returncode == 2
    assert "does not run exact numerics (start cluster workers with `drfidelity worker`)" \
        in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (small / "embeddings" / DATASET / "PCA").exists()


def test_unreachable_scheduler_is_one_line(small):
    start = time.monotonic()
    result = embed_with(small, f"tcp://127.0.0.1:{free_port()}", ["PCA"])
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "no Dask scheduler answered at tcp://127.0.0.1:" in line
    assert time.monotonic() - start < 60
