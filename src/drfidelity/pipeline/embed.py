"""Stage ``embed``: every method x seed on one dataset -> ``embeddings/{dataset}/``.

Jobs are independent and single-threaded, so they run side by side in ``params.jobs`` worker
processes, or on a Dask cluster when ``DRFIDELITY_SCHEDULER`` is set
(:mod:`drfidelity.jobs.runner`); each result depends only on (method, seed, settings, X),
never on the worker or the order, so a parallel or distributed run is byte-identical to a
serial one. A method that cannot run here
(:class:`~drfidelity.methods.SkipMethod`, e.g. toorPIA without cache and key) is recorded in
``status.json`` with its reason and the stage goes on; any other error fails the stage after
the remaining jobs finished, naming the method and seed.
"""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.registry import METHODS
from drfidelity.methods.base import EmbedContext
from drfidelity.core.files import dumps_json, write_array_dir
from drfidelity.jobs.job import Job
from drfidelity.jobs.runner import Input, run_all
from drfidelity.core.layout import data_dir, embeddings_dir, load_data
from drfidelity.core.params import Params

TARGET = "dataset"  # what the stage runs on (see drfidelity.pipeline)


def plan(params: Params) -> list[Job]:
    """The method x seed jobs, in params order (stochastic methods get seeds 0..R-1)."""
    return [Job.of(name, seed, params.method_params.get(name, {}))
            for name in params.methods for seed in METHODS[name].seeds(params.seeds)]


def used_settings(params: Params, name: str, n: int) -> dict:
    """The hyper-parameters method ``name`` runs with on n points: params over defaults, with
    the values a wrapper clamps for small inputs (t-SNE perplexity, k-NN sizes) as used."""
    method = METHODS[name]
    return method.used(method.settings(params.method_params.get(name, {})), n)


def run(params: Params, dataset: str, root: Path, jobs: int | None = None) -> None:
    meta, _ = load_data(params, dataset, root)  # the jobs read X.npy: checked here first
    fingerprint, n = meta["fingerprint"], meta["shape"][0]
    for name in params.methods:
        asked = METHODS[name].settings(params.method_params.get(name, {}))
        for key, value in used_settings(params, name, n).items():
            if value != asked[key]:
                print(f"[embed {dataset}] {name}: {key} = {asked[key]!r} is clamped to "
                      f"{value!r} for N = {n} (recorded in status.json)", flush=True)
    context = EmbedContext(root=root, dataset=dataset, tag=params.tag)
    inputs = {"": Input({"X": str(data_dir(root, dataset) / "X.npy")}, context)}
    maps, skipped_jobs, injected_jobs = run_all(f"embed {dataset}", plan(params), inputs,
                                                jobs or params.jobs, root)
    skipped = {job.method: reason for job, reason in skipped_jobs.items()}
    injected: dict[str, dict[str, str]] = {}
    for job, where in injected_jobs.items():
        injected.setdefault(job.method, {})[str(job.seed)] = where
    status = {}
    for name in params.methods:
        if name in skipped:
            status[name] = {"status": "skipped", "reason": skipped[name]}
        else:
            status[name] = {"status": "ok", "seeds": METHODS[name].seeds(params.seeds),
                            "settings": used_settings(params, name, n),
                            "injected": injected.get(name, {})}
    arrays = {f"{job.method}/seed{job.seed}": maps[job]
              for job in sorted(maps, key=lambda job: (job.method, job.seed))}
    record = {"data_fingerprint": fingerprint, "methods": status}
    write_array_dir(embeddings_dir(root, dataset), arrays, {"status.json": dumps_json(record)})
