"""The tables' and figures' order of methods: the method registry's.

It sits beside the library, not in :mod:`drfidelity.core.registry` where the order is
defined: every stage depends on ``core/``, the map stages too, so a helper added there would
make every map stale. The figures and the report, which order methods, import it from here.
"""

from __future__ import annotations

from drfidelity.core.registry import METHODS


def ordered(methods) -> list[str]:
    """Canonical order first, then any other label (e.g. ``toorPIA-embedding``) as met."""
    present = list(dict.fromkeys(methods))
    return [m for m in METHODS if m in present] + [m for m in present if m not in METHODS]
