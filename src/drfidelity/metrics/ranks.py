"""Neighbour ranks: the kernel shared by trustworthiness, continuity and the co-ranking family.

rank[i, j] = rho_ij = |{k != i : d_ik < d_ij or (d_ik == d_ij and k < j)}| + 1 for j != i
(nearest = 1, self excluded, ties broken by index), and rank[i, i] = 0. Lee & Verleysen (2009).
Rows are independent, so callers that cannot hold N x N at once pass row blocks.
"""

from __future__ import annotations

import numpy as np


def row_ranks(distances: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Ranks for a block of rows.

    ``distances`` is (b, N): row ``q`` holds the distances from point ``rows[q]`` to all N
    points. Returns int32 (b, N) with rank 0 at the point itself. A stable sort breaks ties by
    index, so the result does not depend on the sort implementation.
    """
    distances = np.asarray(distances, dtype=np.float64)
    rows = np.asarray(rows, dtype=np.intp)
    if distances.ndim != 2 or distances.shape[0] != rows.shape[0]:
        raise ValueError(f"distances must be (len(rows), N); got {distances.shape} for "
                         f"{rows.shape[0]} rows")
    keyed = distances.copy()
    keyed[np.arange(rows.shape[0]), rows] = -np.inf  # self sorts first, whatever its distance
    order = np.argsort(keyed, axis=1, kind="stable")
    ranks = np.empty(keyed.shape, dtype=np.int32)
    np.put_along_axis(ranks, order, np.arange(keyed.shape[1], dtype=np.int32)[None, :], axis=1)
    return ranks


def rank_matrix(distances: np.ndarray) -> np.ndarray:
    """Ranks of a full square distance matrix (see module docstring)."""
    distances = np.asarray(distances, dtype=np.float64)
    if distances.ndim != 2 or distances.shape[0] != distances.shape[1]:
        raise ValueError(f"distances must be a square matrix, got shape {distances.shape}")
    return row_ranks(distances, np.arange(distances.shape[0]))
