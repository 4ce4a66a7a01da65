"""Exact, all-pairs quality measures of 2-D embeddings.

``score(X, Y, ...)`` returns every metric column of one embedding; a :class:`Reference` holds
the high-D side of a dataset so that many embeddings of it are scored without recomputing it.
``neighbourhood_scores(X, Y, k=(5, 15, 30))`` gives trustworthiness, continuity and recall at
several k from one pass over the distances (Venna & Kaski 2001).
The co-ranking family (Lee & Verleysen 2009) and the two-parameter rank-error quality
(Lueks et al. 2011) share the rank kernel of ``ranks.py``.
"""

import importlib

#: public names defined in submodules, loaded on first access (PEP 562)
_LAZY = {"Reference": "engine", "score": "engine", "neighbourhood_scores": "neighbours",
          "trustworthiness": "neighbours", "continuity": "neighbours",
          "recall_at_k": "neighbours", "coranking_matrix": "coranking", "q_nx": "coranking",
          "b_nx": "coranking", "r_nx": "coranking", "auc_log_rnx": "coranking",
          "lcmc": "coranking", "local_global_quality": "coranking",
          "rank_error_quality": "coranking", "rank_error_quality_from_coranking": "coranking",
          "pointwise_quality": "coranking"}
__all__ = list(_LAZY)


def __getattr__(name: str):
    """Import the engine (numba, scipy) on first use: ``drfidelity score`` checks its inputs
    before that, so bad input is refused in about a second."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
