"""Neighbourhood sizes clamped so that small inputs stay valid (the values used are recorded)."""

from __future__ import annotations

from drfidelity.validation import integer, real


def clamp_perplexity(perplexity: float, n: int) -> float:
    """min(perplexity, max(5, (N-1)//3)): at most a third of the other points, at least 5."""
    real("perplexity", perplexity, low=0.0, low_open=True)
    return min(perplexity, max(5, (n - 1) // 3))


def clamp_neighbours(n_neighbors: int, n: int) -> int:
    """min(n_neighbors, max(2, N-1)): a k-NN graph needs 2 <= k < N."""
    integer("n_neighbors", n_neighbors, 1)
    return min(n_neighbors, max(2, n - 1))
