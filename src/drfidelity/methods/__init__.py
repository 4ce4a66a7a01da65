"""DR methods behind one interface, in the benchmark's canonical order.

Importing this package loads only the registry (:mod:`drfidelity.core.registry`): names,
settings and checks.
A wrapper and its library load when a method first runs, and the runners (:func:`embed`,
:func:`embed_extend`, :func:`run_method`) load on first use of these names. A wrapper's
``PRELOAD`` names the libraries its jobs import, so that the process job processes start
from imports them once (:mod:`drfidelity.jobs.fresh`).
"""

from __future__ import annotations

import importlib

from drfidelity.core.registry import METHODS, Method, get_method

#: public names defined in submodules, loaded on first access (PEP 562)
_LAZY = {"EmbedContext": "base", "NotOperable": "base", "SkipMethod": "base", "embed": "base",
         "embed_extend": "base", "run_method": "base"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = ["METHODS", "Method", "get_method", *_LAZY]
