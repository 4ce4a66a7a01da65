"""Name -> :class:`~.spec.DatasetSpec` registry and the validated entry point
:func:`make_dataset`.

The names (:data:`drfidelity.registry.DATASET_NAMES`) are all that validating
``params.yaml`` needs; a dataset's module (its generator and spec) is imported when its spec is
first looked up in :data:`DATASETS`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Iterator

from drfidelity.registry import DATASET_NAMES as NAMES
from drfidelity.core.validation import known_keys

if TYPE_CHECKING:  # the generators' modules (numpy, scikit-learn) load on first lookup
    from ._common import Dataset
    from .spec import DatasetSpec


class _Specs(Mapping):
    """Read-only name -> spec mapping that imports a dataset's module on first lookup."""

    def __getitem__(self, name: str) -> DatasetSpec:
        if name not in NAMES:
            raise KeyError(name)
        return importlib.import_module(f"drfidelity.datasets.{name}").SPEC

    def __contains__(self, name: object) -> bool:
        return name in NAMES

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)


DATASETS: Mapping[str, DatasetSpec] = _Specs()


def dataset_spec(name: str) -> DatasetSpec:
    """The spec of dataset ``name``; an unknown name raises, listing the known ones."""
    if name not in NAMES:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {list(NAMES)}")
    return DATASETS[name]


def knobs(name: str) -> tuple[str, ...]:
    """The dataset-specific keyword parameters of generator ``name`` (beyond n, d, seed)."""
    return tuple(_defaults(name))


def knob_values(name: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The knobs generator ``name`` runs with: its defaults, overridden by ``given``.

    What the report quotes, so that a knob left out of ``dataset_params`` shows its default.
    """
    return {**_defaults(name), **(given or {})}


def check_knobs(name: str, given: Mapping[str, Any], where: str | None = None) -> None:
    """ValueError naming each key of ``given`` that is not a knob of generator ``name`` (as
    ``where.key``, default ``dataset_params.<name>``), with the closest knob."""
    known_keys(where or f"dataset_params.{name}", given, knobs(name))


def make_dataset(name: str, *, n: int, d: int, seed: int, **params: Any) -> Dataset:
    """Generate dataset ``name`` with ``n`` points in ``d`` dims from generator seed ``seed``.

    ``params`` are the generator's own knobs (spec defaults otherwise); unknown names raise.
    """
    check_knobs(name, params)
    return dataset_spec(name).generator(n, d, seed, **params)


def _defaults(name: str) -> dict[str, Any]:
    return {p.name: p.default
            for p in inspect.signature(dataset_spec(name).generator).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}
