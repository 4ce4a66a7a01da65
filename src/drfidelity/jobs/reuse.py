"""A release's maps taken from the checkout's pipeline where they are the same computation.

A map is a function of its input, method, settings and seed (and the code, which a release
shares with the checkout). So where a later release's job equals one that the checkout's
pipeline made (the same input fingerprint, the same settings as used, the same seed, computed
here rather than injected or read from a vendor's cache), its bytes are the checkout's, and
computing them again would only cost time: the main benchmark's maps and several studies' are
the same in v1.3.0 and v1.4.0. A release's map stage names the checkout's map folder as a
dependency and passes it with ``--reuse`` (``tools/release_pipeline.py`` writes both), so DVC
brings the checkout's map stage up to date first and reruns the release's when those maps
change. The status record is written as if the map had been computed: a reused map leaves no
trace in the release's outputs, and the release's comparison with its published tables keeps
proving the bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from drfidelity.core.layout import read_map, read_status
from drfidelity.core.validation import check_map
from drfidelity.core.job import Job
from drfidelity.methods.base import injection_key
from drfidelity.methods.external import EmbedContext, cache_path
from drfidelity.method_specs import spec


def injected_here(job: Job, context: EmbedContext | None) -> bool:
    """Whether coordinates are injected for ``job`` from this pipeline's own files."""
    if context is None or job.extend:
        return False
    method = spec(job.method)
    folder, mode = injection_key(method, method.settings(job.kwargs))
    return cache_path(context, folder, mode, job.seed).is_file()


def reused_map(folder: Path, stage: str, job: Job, fingerprint: str, settings: dict,
               stems: dict[str, int], n: int, context: EmbedContext | None):
    """The map ``job`` would make, read from the checkout's map ``folder`` of ``stage`` (its
    status.json and map files, each checked against the sha256 recorded there:
    :func:`~drfidelity.core.layout.read_map`), or None when the checkout made it otherwise:
    from other data, with other settings or seeds, injected, not at all, or by a method that
    reads this pipeline's files.

    ``stems`` are the job's file stems by index in its result (-1: one map), ``n`` its input's
    points, ``settings`` those the job runs with as its stage records them; the map is
    returned as the job returns it (one array, or the fit and added maps).
    """
    if spec(job.method).local_only or injected_here(job, context):
        return None
    if not (folder / "status.json").is_file():
        return None
    record = read_status(folder, stage)
    entry = record["methods"].get(job.name, {})
    if (record["data_fingerprint"] != fingerprint or entry.get("status") != "ok"
            or job.seed not in entry.get("seeds", ()) or str(job.seed) in entry.get("injected", {})
            or entry.get("settings") != json.loads(json.dumps(settings))):
        return None
    maps = []
    for stem, _ in sorted(stems.items(), key=lambda item: item[1]):
        Y = read_map(folder, record, stem, job.name, job.seed, stage)
        maps.append(check_map(str(folder / f"{stem}.npy"), Y, len(Y) if job.extend else n))
    return tuple(maps) if job.extend else maps[0]


def taken_maps(where: str, jobs: list[Job], folder: Path,
               lookup: Callable[[Job], object]) -> dict[Job, object]:
    """The maps of ``jobs`` that ``lookup`` finds in the checkout's ``folder`` (see
    :func:`reused_map`), with one log line for the stage ``where``."""
    found = {job: lookup(job) for job in jobs}
    taken = {job: Y for job, Y in found.items() if Y is not None}
    print(f"[{where}] {len(taken)} of {len(jobs)} maps taken from {folder} (the checkout's: "
          f"the same input, settings and seed); {len(jobs) - len(taken)} to compute", flush=True)
    return taken
