"""Every registered study: what the stages that list the studies read (compare, the figures,
the report), kept out of ``studies/__init__.py`` so that the stages of one study do not read
the list of names (:data:`drfidelity.registry.STUDY_NAMES`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from drfidelity import registry
from drfidelity.studies import study

if TYPE_CHECKING:
    from .spec import StudySpec


def all_studies() -> Iterator[StudySpec]:
    """Every study's spec, in registry order (imports every study module)."""
    return (study(name) for name in registry.STUDY_NAMES)
