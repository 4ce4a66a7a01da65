"""Stage ``embed``: one method's maps of one dataset, every seed ->
``embeddings/{dataset}/{method}/``.

A stage per (dataset, method) pair, so that an edit to one method's wrapper or settings reruns
that method's maps alone. Its seeds are independent single-threaded jobs that run side by side
in ``params.jobs`` worker processes, or on a Dask cluster when ``DRFIDELITY_SCHEDULER`` is set
(:mod:`drfidelity.jobs.runner`); each result depends only on (method, seed, settings, X), never
on the worker or the order, so a parallel or distributed run is byte-identical to a serial one.
A method that cannot run here (:class:`~drfidelity.methods.SkipMethod`, e.g. toorPIA without
cache and key) is recorded in ``status.json`` with its reason and the stage succeeds; any other
error fails the stage after the remaining jobs finished, naming the method and seed.
``status.json`` also records each map file's sha256, which every reader of the maps checks
(:func:`~drfidelity.core.layout.read_map`). A release's stage passes the checkout's map folder
of the same stage (``--reuse``) and takes the maps of the same computation from it
(:mod:`drfidelity.jobs.reuse`).
"""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.files import dumps_json, write_array_dir
from drfidelity.core.layout import data_dir, load_data, map_record, method_maps_dir
from drfidelity.core.params import Params
from drfidelity.core.job import Job
from drfidelity.jobs.reuse import reused_map, taken_maps
from drfidelity.jobs.runner import Input, run_all
from drfidelity.methods.external import EmbedContext
from drfidelity.method_specs import spec

TARGET = "dataset/method"  # what the stage runs on (see drfidelity.pipeline)
#: no registry: a map stage finds its method by name and checks its settings alone
NAMES = None


def plan(params: Params, name: str) -> list[Job]:
    """Method ``name``'s jobs: seeds 0..R-1 for a stochastic method, seed 0 otherwise."""
    return [Job.of(name, seed, params.method_params.get(name, {}))
            for seed in spec(name).seeds(params.seeds)]


def used_settings(params: Params, name: str, n: int) -> dict:
    """The hyper-parameters method ``name`` runs with on n points: params over defaults, with
    the values a wrapper clamps for small inputs (t-SNE perplexity, k-NN sizes) as used."""
    method = spec(name)
    return method.used(method.settings(params.method_params.get(name, {})), n)


def run(params: Params, target: str, root: Path, jobs: int | None = None,
        reuse: Path | None = None) -> None:
    dataset, name = target.split("/")
    meta, _ = load_data(params, dataset, root)  # the jobs read X.npy: checked here first
    fingerprint, n = meta["fingerprint"], meta["shape"][0]
    asked = spec(name).settings(params.method_params.get(name, {}), f"method_params.{name}")
    used = used_settings(params, name, n)
    for key, value in used.items():
        if value != asked[key]:
            print(f"[embed {target}] {key} = {asked[key]!r} is clamped to {value!r} for "
                  f"N = {n} (recorded in status.json)", flush=True)
    context = EmbedContext(root=root, dataset=dataset, tag=params.tag)
    inputs = {"": Input({"X": str(data_dir(root, dataset) / "X.npy")}, context)}
    todo = plan(params, name)
    taken = {} if reuse is None else taken_maps(
        f"embed {target}", todo, reuse,
        lambda job: reused_map(reuse, f"embed {target}", job, fingerprint, used,
                               {f"seed{job.seed}": -1}, n, context))
    maps, skipped, injected = run_all(f"embed {target}", [j for j in todo if j not in taken],
                                      inputs, jobs or params.jobs, root, taken)
    if skipped:
        entry = {"status": "skipped", "reason": next(iter(skipped.values()))}
    else:
        entry = {"status": "ok", "seeds": spec(name).seeds(params.seeds), "settings": used,
                 "injected": {str(job.seed): where for job, where in injected.items()}}
    arrays = {f"seed{job.seed}": maps[job] for job in sorted(maps, key=lambda job: job.seed)}
    record = {"data_fingerprint": fingerprint, "methods": {name: entry},
              "maps": {f"seed{job.seed}.npy": map_record(name, job.seed, maps[job])
                       for job in maps}}
    write_array_dir(method_maps_dir(root, dataset, name), arrays,
                    {"status.json": dumps_json(record)})
