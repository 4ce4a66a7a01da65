"""DR methods behind one interface, in the benchmark's canonical order.

Each wrapper module imports its library lazily, so listing the registry is cheap.
"""

from __future__ import annotations

from drfidelity.validation import integer, one_of, real

from . import mde, pcc_method, tsne
from .base import (EmbedContext, Method, NotOperable, SkipMethod, embed, embed_extend,
                   run_method)
from .dreams import extend_dreams, fit_dreams
from .isomap import extend_isomap, fit_isomap
from .linear import extend_pca, fit_pca
from .neighbourhood import clamp_neighbours, clamp_perplexity
from .toorpia import TOORPIA_MODES, TOORPIA_SETTINGS, extend_toorpia, fit_toorpia
from .umap_ import extend_umap, fit_umap

CANONICAL_ORDER = ("PCA", "Isomap", "PyMDE", "PCC", "t-SNE", "UMAP", "DREAMS", "toorPIA")


def _int(minimum: int):
    return lambda name, value: integer(name, value, minimum)


def _real(**bounds):
    return lambda name, value: real(name, value, **bounds)


def _choice(*options: str):
    return lambda name, value: one_of(name, value, options)


POSITIVE = _real(low=0.0, low_open=True)
NON_NEGATIVE = _real(low=0.0)

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("PCA", stochastic=False, fit=fit_pca, extend=extend_pca),
        Method("Isomap", stochastic=False, fit=fit_isomap, defaults={"n_neighbors": 15},
               checks={"n_neighbors": _int(1)}, clamps={"n_neighbors": clamp_neighbours},
               extend=extend_isomap),
        Method("PyMDE", stochastic=True, fit=mde.fit_pymde,
               defaults={"max_iter": 300, "device": "cpu"},
               checks={"max_iter": _int(1), "device": _choice("cpu", "cuda")},
               not_operable=mde.NOT_OPERABLE),
        Method("PCC", stochastic=True, fit=pcc_method.fit_pcc, defaults={"num_epochs": 500},
               checks={"num_epochs": _int(1)}, not_operable=pcc_method.NOT_OPERABLE),
        Method("t-SNE", stochastic=True, fit=tsne.fit_tsne, defaults={"perplexity": 30},
               checks={"perplexity": POSITIVE}, clamps={"perplexity": clamp_perplexity},
               not_operable=tsne.NOT_OPERABLE),
        Method("UMAP", stochastic=True, fit=fit_umap,
               defaults={"n_neighbors": 15, "min_dist": 0.1},
               checks={"n_neighbors": _int(2), "min_dist": NON_NEGATIVE},
               clamps={"n_neighbors": clamp_neighbours}, extend=extend_umap),
        Method("DREAMS", stochastic=False, fit=fit_dreams,
               defaults={"reg_lambda": 0.15, "perplexity": 30},
               checks={"reg_lambda": _real(low=0.0, high=1.0), "perplexity": POSITIVE},
               clamps={"perplexity": clamp_perplexity}, extend=extend_dreams),
        Method("toorPIA", stochastic=False, fit=fit_toorpia, extend=extend_toorpia,
               defaults=TOORPIA_SETTINGS,
               checks={"mode": _choice(*TOORPIA_MODES), "deadline_s": POSITIVE,
                       "max_attempts": _int(1), "backoff_s": NON_NEGATIVE,
                       "wait_budget_s": POSITIVE}, local_only=True),
    )
}


def get_method(name: str) -> Method:
    """The registered method called ``name``; a clear error lists the known names."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}") from None


__all__ = ["CANONICAL_ORDER", "METHODS", "EmbedContext", "Method", "NotOperable", "SkipMethod",
           "embed", "embed_extend", "get_method", "run_method"]
