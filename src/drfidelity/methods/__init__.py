"""DR methods behind one interface.

A method is its spec (``drfidelity/method_specs/<key>.py``: name, settings and their checks,
loaded by :func:`drfidelity.method_specs.spec`) and its wrapper (``<key>.py`` here:
``fit_<key>``, ``extend_<key>``), both found from its name
(:func:`drfidelity.core.method.method_key`). Importing this package loads
neither: a wrapper and its library load when a method first runs, the registry's ordered
:data:`METHODS` and the runners (:func:`embed`, :func:`embed_extend`, :func:`run_method`) on
first use of these names. A wrapper's ``PRELOAD`` names the libraries its jobs import, so that
the process job processes start from imports them once (:mod:`drfidelity.jobs.fresh`).
"""

from __future__ import annotations

import importlib

from drfidelity.core.method import Method

#: public names defined elsewhere, loaded on first access (PEP 562): a submodule of this
#: package, or a module named in full
_LAZY = {"EmbedContext": "external", "NotOperable": "base", "SkipMethod": "base",
         "embed": "base", "embed_extend": "base", "run_method": "base",
         "METHODS": "drfidelity.registry", "get_method": "drfidelity.registry"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _LAZY[name] if "." in _LAZY[name] else f"{__name__}.{_LAZY[name]}"
    return getattr(importlib.import_module(module), name)


__all__ = ["METHODS", "Method", "get_method", *_LAZY]
