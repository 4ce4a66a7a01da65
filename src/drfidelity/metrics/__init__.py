"""Exact, all-pairs quality measures of 2-D embeddings.

``score(X, Y, ...)`` returns every metric column of one embedding; a :class:`Reference` holds
the high-D side of a dataset so that many embeddings of it are scored without recomputing it.
``neighbourhood_scores(X, Y, k=(5, 15, 30))`` gives trustworthiness, continuity and recall at
several k from one pass over the distances (Venna & Kaski 2001).
The co-ranking family (Lee & Verleysen 2009) and the two-parameter rank-error quality
(Lueks et al. 2011) share the rank kernel of ``ranks.py``.
"""

from .coranking import (auc_log_rnx, b_nx, coranking_matrix, lcmc, local_global_quality,
                        pointwise_quality, q_nx, r_nx, rank_error_quality,
                        rank_error_quality_from_coranking)
from .engine import Reference, score
from .neighbours import continuity, neighbourhood_scores, recall_at_k, trustworthiness

__all__ = ["Reference", "score", "neighbourhood_scores", "trustworthiness", "continuity",
           "recall_at_k", "coranking_matrix", "q_nx", "b_nx", "r_nx", "auc_log_rnx", "lcmc",
           "local_global_quality", "rank_error_quality", "rank_error_quality_from_coranking",
           "pointwise_quality"]
