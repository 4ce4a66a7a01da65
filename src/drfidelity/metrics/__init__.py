"""Exact, all-pairs quality measures of 2-D embeddings (benchmark.md §3, quality.md).

``score(X, Y, ...)`` returns every metric column of one embedding; a :class:`Reference` holds
the high-D side of a dataset so that many embeddings of it are scored without recomputing it.
"""

from .engine import Reference, score
from .neighbours import continuity, recall_at_k, trustworthiness

__all__ = ["Reference", "score", "trustworthiness", "continuity", "recall_at_k"]
