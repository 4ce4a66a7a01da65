"""The tables' and figures' order of methods: the method registry's
(:data:`drfidelity.registry.METHOD_NAMES`).

Outside ``core/``, like the registry: every stage depends on ``core/``, the map stages too, so
the order kept there would make every map stale when a method is added. The figures and the
report, which order methods, import it from here.
"""

from __future__ import annotations

from drfidelity.registry import METHOD_NAMES as METHODS


def ordered(methods) -> list[str]:
    """Canonical order first, then any other label (e.g. ``toorPIA-embedding``) as met."""
    present = list(dict.fromkeys(methods))
    return [m for m in METHODS if m in present] + [m for m in present if m not in METHODS]
