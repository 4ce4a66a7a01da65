"""One method's maps of a study's inputs in ``data/{study}/`` (:mod:`.inputs`) ->
``embeddings/{study}/{method}/`` (``{config}/`` below for a study of several inputs).

A stage per (study, method) pair, so that an edit to one method's wrapper or settings reruns
that method's maps alone. Its (input, seed) jobs run in the pool of
:mod:`drfidelity.jobs.runner`, all inputs of the study at once, so two workers stay busy across
the values of a sweep. Each input's ``status.json`` records per map label its seeds, settings,
which seeds were injected and which skipped with the reason (the label is skipped when all
were), and per map file its label, seed and sha256
(:func:`~drfidelity.core.layout.map_record`); a method the study does not run (not in its
grid, say) leaves an empty one. A release's stage takes the maps of the same
computation from the checkout's map folder of the same stage (``reuse``:
:mod:`drfidelity.jobs.reuse`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from drfidelity.core.files import dumps_json, write_array_dir
from drfidelity.core.layout import map_record, study_data_dir, study_embeddings_dir
from drfidelity.core.params import Params
from drfidelity.core.job import Job
from drfidelity.jobs.reuse import reused_map, taken_maps
from drfidelity.jobs.runner import Input, run_all
from drfidelity.methods.external import EmbedContext
from drfidelity.method_specs import spec as method_spec
from drfidelity.studies import study
from drfidelity.studies.spec import join, map_names


def _input_meta(root: Path, name: str, key: str) -> dict:
    path = study_data_dir(root, name) / key / "meta.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run the study_inputs stage of "
                                f"{name} first")
    return json.loads(path.read_text())


def _used(method: str, job: Job, meta: dict) -> dict:
    """The settings ``job`` runs with on its input (params over defaults, clamped to N)."""
    found = method_spec(method)
    return found.used(found.settings(job.kwargs), meta["shape"][0])


def _seeds_or_skip(entry: dict) -> dict:
    """A label's status: skipped with the first seed's reason when no seed ran; else its seeds
    with the reason per seed it could not run (a vendor's cache holds fewer stored draws than
    the seeds asked for), so a missing draw costs that draw and not the label's others."""
    if entry["seeds"] or "skipped" not in entry:
        return entry
    return {"status": "skipped", "reason": next(iter(entry["skipped"].values()))}


def embed_study(params: Params, target: str, root: Path, jobs: int | None = None,
                reuse: Path | None = None) -> None:
    """Target ``<study>/<method>``: the method's maps of the study's inputs in
    ``data/{study}/`` -> ``embeddings/{study}/{method}/``; with ``reuse``, the maps of the same
    computation are taken from that folder (the checkout's of this stage)."""
    name, method = target.split("/")
    where = f"study_embed {target}"
    method_spec(method).settings(params.method_params.get(method, {}),
                                 f"method_params.{method}")
    # the study builds this method's jobs alone, so no other method's spec is read
    params = replace(params, only=method)
    spec = study(name)
    for note in spec.study_notes(params):
        print(f"[{where}] {note}", flush=True)
    configs = spec.configs(params)
    metas = {c.key: _input_meta(root, name, c.key) for c in configs}
    mine = {c.key: [job for job in c.jobs if job.method == method] for c in configs}

    inputs = {}
    for config in configs:
        folder = study_data_dir(root, name) / config.key
        keys = ("X",) if "X" in metas[config.key]["arrays"] else ("X_fit", "X_add")
        context = (EmbedContext(root=root, dataset=config.context[0], tag=config.context[1])
                   if config.context else None)
        inputs[config.key] = Input({k: str(folder / f"{k}.npy") for k in keys}, context)
    todo = [job for config in configs for job in mine[config.key]]
    taken = {} if reuse is None else taken_maps(where, todo, reuse, lambda job: reused_map(
        reuse / job.config, where, job, metas[job.config]["fingerprint"],
        _used(method, job, metas[job.config]), map_names(job), metas[job.config]["shape"][0],
        inputs[job.config].context))
    maps, skipped, injected = run_all(where, [job for job in todo if job not in taken], inputs,
                                      jobs or params.jobs, root, taken)

    arrays, texts = {}, {}
    for config in configs:
        status: dict[str, dict] = {}
        records: dict[str, dict] = {}
        for job in mine[config.key]:
            entry = status.setdefault(job.name, {"status": "ok", "seeds": [], "injected": {}})
            if job in skipped:
                entry.setdefault("skipped", {})[str(job.seed)] = skipped[job]
                continue
            entry["seeds"].append(job.seed)
            entry["settings"] = _used(method, job, metas[config.key])
            if job in injected:
                entry["injected"][str(job.seed)] = injected[job]
            for stem, index in map_names(job).items():
                Y = maps[job] if index < 0 else maps[job][index]
                arrays[join(config.key, stem)] = Y
                records[f"{stem}.npy"] = map_record(job.name, job.seed, Y)
        status = {label: _seeds_or_skip(entry) for label, entry in status.items()}
        record = {"data_fingerprint": metas[config.key]["fingerprint"], "methods": status,
                  "maps": records}
        texts[join(config.key, "status.json")] = dumps_json(record)
    write_array_dir(study_embeddings_dir(root, name) / method, arrays, texts)
    print(f"[{where}] {len(maps)} maps, {len(skipped)} skipped, {len(configs)} input(s)",
          flush=True)
