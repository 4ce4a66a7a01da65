"""Each method's ``SPEC``, one module per method, found from its name by a fixed rule
(:func:`drfidelity.core.method.spec_module`: ``t-SNE`` -> ``method_specs/tsne.py``), so that
no list is needed to find one.

A spec is kept apart from its wrapper (``drfidelity.methods.<key>``), and outside that package,
because the stages that list methods (score, the report, the studies' tables...) read every
spec and depend on this folder: a wrapper edit then reruns its own maps alone. A map stage
loads its own method's spec only, so adding a method or editing another one's spec leaves it
up to date (docs/extending.md, "A method").
"""

from __future__ import annotations

import importlib

from drfidelity.core.method import Method, spec_module


def spec(name: str) -> Method:
    """The spec of method ``name`` (its module's ``SPEC``); ValueError for a name no module
    registers."""
    module = spec_module(name)
    try:
        found = importlib.import_module(module).SPEC
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        raise ValueError(f"unknown method {name!r}: no module {module}") from None
    if found.name != name:
        raise ValueError(f"unknown method {name!r}: {module} registers {found.name!r}")
    return found
