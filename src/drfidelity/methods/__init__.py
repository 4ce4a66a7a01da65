"""DR methods behind one interface, in the benchmark's canonical order.

Each wrapper module imports its library lazily, so listing the registry is cheap.
"""

from __future__ import annotations

from .base import EmbedContext, Method, SkipMethod, embed
from .isomap import fit_isomap
from .linear import fit_pca

CANONICAL_ORDER = ("PCA", "Isomap", "PyMDE", "PCC", "t-SNE", "UMAP", "DREAMS", "toorPIA")

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("PCA", stochastic=False, fit=fit_pca),
        Method("Isomap", stochastic=False, fit=fit_isomap, defaults={"n_neighbors": 15}),
    )
}


def get_method(name: str) -> Method:
    """The registered method called ``name``; a clear error lists the known names."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}") from None


__all__ = ["CANONICAL_ORDER", "METHODS", "EmbedContext", "Method", "SkipMethod", "embed",
           "get_method"]
