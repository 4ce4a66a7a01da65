"""Name -> :class:`~.spec.DatasetSpec` registry and the validated entry point
:func:`make_dataset`."""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Mapping

from . import clusters, density, noise_dims, outliers, populations, random_walk, transition
from ._common import Dataset
from .spec import DatasetSpec

#: Benchmark datasets in the ``--dataset all`` order, then the two probes.
DATASETS: dict[str, DatasetSpec] = {spec.name: spec for spec in (
    density.SPEC, transition.SPEC, clusters.SPEC, outliers.SPEC, populations.SPEC,
    random_walk.SPEC, noise_dims.SPEC)}


def dataset_spec(name: str) -> DatasetSpec:
    """The spec of dataset ``name``; an unknown name raises, listing the known ones."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {list(DATASETS)}")
    return DATASETS[name]


def knobs(name: str) -> tuple[str, ...]:
    """The dataset-specific keyword parameters of generator ``name`` (beyond n, d, seed)."""
    return tuple(_defaults(name))


def knob_values(name: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The knobs generator ``name`` runs with: its defaults, overridden by ``given``.

    What the report quotes, so that a knob left out of ``dataset_params`` shows its default.
    """
    return {**_defaults(name), **(given or {})}


def make_dataset(name: str, *, n: int, d: int, seed: int, **params: Any) -> Dataset:
    """Generate dataset ``name`` with ``n`` points in ``d`` dims from generator seed ``seed``.

    ``params`` are the generator's own knobs (spec defaults otherwise); unknown names raise.
    """
    valid = knobs(name)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        hints = {u: difflib.get_close_matches(u, valid, n=1) for u in unknown}
        hint = "; ".join(f"did you mean {h[0]!r} for {u!r}?" for u, h in hints.items() if h)
        raise ValueError(f"unknown parameter(s) {unknown} for dataset {name!r}; valid knobs: "
                         f"{list(valid)}" + (f" ({hint})" if hint else ""))
    return dataset_spec(name).generator(n, d, seed, **params)


def _defaults(name: str) -> dict[str, Any]:
    return {p.name: p.default
            for p in inspect.signature(dataset_spec(name).generator).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}
