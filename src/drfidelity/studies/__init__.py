"""The studies: the previous release's other frozen configurations, one module per study.

A study is the module ``drfidelity.studies.<name>`` with its :class:`~.spec.StudySpec` as
``SPEC``; its name in :data:`drfidelity.registry.STUDY_NAMES` registers it (the order of its
stages and tables). A module is imported when its spec is first looked up, by its name alone, so
the stage of one study loads that study alone (its ``dvc.yaml`` code dep is
``src/drfidelity/studies/<name>.py``) and reads no list of names. The stages that run them are
generic: :mod:`drfidelity.studies.run`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spec import StudySpec

#: public names defined in submodules, loaded on first access (PEP 562)
_LAZY = {"all_studies": "registered"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


def study(name: str) -> StudySpec:
    """The spec of study ``name`` (the ``SPEC`` of ``drfidelity.studies.<name>``); an unknown
    name raises."""
    module = f"drfidelity.studies.{name}"
    if not (isinstance(name, str) and name.isidentifier() and not name.startswith("_")
            and name not in ("spec", "registered", "run")):
        raise ValueError(f"unknown study {name!r}")
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        raise ValueError(f"unknown study {name!r}: no module {module}") from None
    if getattr(getattr(found, "SPEC", None), "name", None) != name:
        raise ValueError(f"unknown study {name!r}: {module} defines no SPEC of that name")
    return found.SPEC


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
