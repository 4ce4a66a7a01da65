"""The supplements: the previous release's other frozen configurations, one module per study.

A study is the module ``drfidelity.studies.<name>`` with its :class:`~.spec.StudySpec` as
``SPEC``; its name in :data:`drfidelity.core.registry.STUDY_NAMES` registers it. A module is
imported when its spec is first looked up, so the stage of one study loads that study alone
(its ``dvc.yaml`` code dep is ``src/drfidelity/studies/<name>.py``). The stages that run
them are generic: :mod:`drfidelity.supplements`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Iterator

from drfidelity.core import registry

if TYPE_CHECKING:
    from .spec import StudySpec


def study(name: str) -> StudySpec:
    """The spec of study ``name``; an unknown name raises, listing the studies."""
    if name not in registry.STUDY_NAMES:
        raise ValueError(f"unknown study {name!r}; studies: {', '.join(registry.STUDY_NAMES)}")
    return importlib.import_module(f"drfidelity.studies.{name}").SPEC


def all_studies() -> Iterator[StudySpec]:
    """Every study's spec, in registry order (imports every study module)."""
    return (study(name) for name in registry.STUDY_NAMES)


def table_pair(target: str) -> tuple[StudySpec, str]:
    """(spec, stem) of a score target ``<study>/<stem>``, loading that study alone."""
    name, _, stem = target.partition("/")
    if not stem:
        raise ValueError(f"{target!r}: name a table pair as <study>/<stem> (studies.yaml "
                         "lists them)")
    spec = study(name)
    stems = [t.stem for t in spec.tables]
    if stem not in stems:
        raise ValueError(f"unknown table pair {target!r}; study {name} writes "
                         + ", ".join(f"{name}/{s}" for s in stems))
    return spec, stem
