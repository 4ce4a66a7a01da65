"""Stage ``supplement_embed``: one study's inputs and maps -> ``data/{study}/`` and
``embeddings/{study}/`` (``{config}/`` below them for a study of several inputs).

Every (input, method, seed) job runs in the pool of :mod:`drfidelity.pipeline.jobs`, all
inputs of the study at once, so two workers stay busy across the values of a sweep. A job
that asks for a map the main benchmark already made (same input bytes, same settings and
seed: the hyper-parameter study at its defaults) takes that map instead of recomputing it.
Each ``status.json`` records per map label its seeds, settings, and whether it was injected,
reused or skipped (with the reason).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from drfidelity.methods import METHODS, EmbedContext
from drfidelity.pipeline.files import dumps_json, write_array_dir
from drfidelity.pipeline.jobs import Input, Job, run_all
from drfidelity.pipeline.layout import (data_dir, embeddings_dir, load_meta, study_data_dir,
                                        study_embeddings_dir)
from drfidelity.pipeline.params import Params
from drfidelity.pipeline.studies import Config, input_meta, join, map_names, select, study

TARGET = "study"  # what the stage runs on (see drfidelity.pipeline)


def _reusable(params: Params, root: Path, config: Config, job: Job, n: int) -> Path | None:
    """The main benchmark's map file for this job, if it made exactly this map."""
    status_file = embeddings_dir(root, config.main) / "status.json"
    if not status_file.is_file():
        return None
    record = json.loads(status_file.read_text())
    entry = record["methods"].get(job.method, {})
    method = METHODS[job.method]
    if (record["data_fingerprint"] != load_meta(params, config.main, root)["fingerprint"]
            or entry.get("status") != "ok" or job.seed not in entry["seeds"]
            or entry["settings"] != method.used(method.settings(job.kwargs), n)):
        return None
    return embeddings_dir(root, config.main) / job.method / f"seed{job.seed}.npy"


def run(params: Params, name: str, root: Path, jobs: int | None = None) -> None:
    """Stage ``supplement_embed {name}``; ``{study}:{config}`` runs one input of a study whose
    inputs are main datasets (one stage per dataset, each depending on that dataset only)."""
    name, only = select(name)
    spec = study(name)
    configs = [c for c in spec.configs(params) if only is None or c.key == only]
    if only is not None and not configs:
        raise ValueError(f"study {name} has no input {only!r} with these params")
    out = study_embeddings_dir(root, name) / (only or "")
    prefix = (lambda key: key) if only is None else (lambda key: "")
    built = {c.key: c.build() for c in configs if c.build is not None}
    data = {join(key, array): value
            for key, arrays in built.items() for array, value in arrays.items()}
    texts = {join(key, "meta.json"): dumps_json(input_meta(arrays))
             for key, arrays in built.items()}
    if built:
        write_array_dir(study_data_dir(root, name), data, texts)

    inputs, todo, reused, sizes, fingerprints = {}, [], {}, {}, {}
    for config in configs:
        folder = (data_dir(root, config.main) if config.main
                  else study_data_dir(root, name) / config.key)
        keys = ("X",) if config.build is None or "X" in built[config.key] else ("X_fit", "X_add")
        paths = {k: str(folder / f"{k}.npy") for k in keys}
        if config.main:
            meta = load_meta(params, config.main, root)
            sizes[config.key], fingerprints[config.key] = meta["shape"][0], meta["fingerprint"]
        else:
            meta = input_meta(built[config.key])
            sizes[config.key], fingerprints[config.key] = meta["shape"][0], meta["fingerprint"]
        context = (EmbedContext(root=root, dataset=config.context[0], tag=config.context[1])
                   if config.context else None)
        inputs[config.key] = Input(paths, context)
        for job in config.jobs:
            source = _reusable(params, root, config, job, sizes[config.key]) \
                if config.main else None
            if source is not None:
                reused[job] = source
            else:
                todo.append(job)

    maps, skipped, injected = run_all(f"supplement_embed {name}", todo, inputs,
                                      jobs or params.jobs, root)
    for job, source in reused.items():
        maps[job] = np.load(source, allow_pickle=False)
    arrays, texts = {}, {}
    for config in configs:
        status: dict[str, dict] = {}
        for job in config.jobs:
            method = METHODS[job.method]
            entry = status.setdefault(job.name, {"status": "ok", "seeds": [], "injected": {},
                                                 "reused": {}})
            if job in skipped:
                status[job.name] = {"status": "skipped", "reason": skipped[job]}
                continue
            if entry["status"] != "ok":
                continue
            entry["seeds"].append(job.seed)
            entry["settings"] = method.used(method.settings(job.kwargs), sizes[config.key])
            if job in injected:
                entry["injected"][str(job.seed)] = injected[job]
            if job in reused:
                entry["reused"][str(job.seed)] = reused[job].relative_to(root).as_posix()
            for stem, index in map_names(job).items():
                value = maps[job] if index < 0 else maps[job][index]
                arrays[join(prefix(config.key), stem)] = value
        record = {"data_fingerprint": fingerprints[config.key], "methods": status}
        texts[join(prefix(config.key), "status.json")] = dumps_json(record)
    write_array_dir(out, arrays, texts)
    print(f"[supplement_embed {name}] {len(maps)} maps ({len(reused)} reused from the main "
          f"benchmark), {len(skipped)} skipped, {len(configs)} input(s)", flush=True)
