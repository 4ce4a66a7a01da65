"""Neighbourhood sizes clamped so that small inputs stay valid (benchmark §2.3)."""

from __future__ import annotations

from .base import check_positive


def clamp_perplexity(perplexity: float, n: int) -> float:
    """min(perplexity, max(5, (N-1)//3)): at most a third of the other points, at least 5."""
    check_positive("perplexity", perplexity)
    return min(perplexity, max(5, (n - 1) // 3))


def clamp_neighbours(n_neighbors: int, n: int) -> int:
    """min(n_neighbors, max(2, N-1)): a k-NN graph needs 2 <= k < N."""
    check_positive("n_neighbors", n_neighbors, integer=True)
    return min(n_neighbors, max(2, n - 1))
