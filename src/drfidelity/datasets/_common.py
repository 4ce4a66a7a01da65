"""Pieces every latent-space generator shares: the result type and four geometric helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.neighbors import NearestNeighbors


@dataclass(frozen=True)
class Dataset:
    """A generated dataset.

    ``clean`` (N, D) are the noise-free features, ``truth`` (N, Dt) the reference coordinates of
    the ``vs_truth`` metrics (``clean`` itself except for noise_dims), ``labels`` one int per row,
    ``extras`` the remaining ground truth (outlier indices, populations, time, centroids, ...),
    ``params`` every argument the generator was called with.
    """

    name: str
    clean: np.ndarray
    truth: np.ndarray
    labels: np.ndarray
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = self.clean.shape[0]
        if self.clean.ndim != 2 or self.truth.shape[0] != n or self.labels.shape != (n,):
            raise ValueError(f"{self.name}: inconsistent shapes clean {self.clean.shape}, "
                             f"truth {self.truth.shape}, labels {self.labels.shape}")


def split_counts(n: int, k: int) -> np.ndarray:
    """Equal split of ``n`` items over ``k`` groups, the remainder going to the first groups."""
    counts = np.full(k, n // k, dtype=np.int64)
    counts[: n - int(counts.sum())] += 1
    return counts


def project(latent: np.ndarray, rng: np.random.Generator, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Isometric embedding of ``latent`` (N, m) into D=``d`` dimensions.

    Draws G ~ N(0, 1)^(d x m) from ``rng``, takes the reduced QR factor Q (orthonormal columns)
    and returns ``(latent @ Q.T, Q)``; pairwise distances are unchanged up to rounding.
    """
    q, _ = np.linalg.qr(rng.standard_normal((d, latent.shape[1])))
    return np.ascontiguousarray(latent @ q.T), q


def haar_orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed (uniform) random orthogonal ``d`` x ``d`` matrix.

    Draws G ~ N(0, 1)^(d x d) from ``rng`` (one ``standard_normal((d, d))`` call, row-major),
    takes G = QR (``numpy.linalg.qr``) and flips each column j of Q by the sign of R[j, j]
    (+1 where R[j, j] is 0). Without the flip, Q would lean on LAPACK's sign convention and
    not be Haar (Mezzadri 2007, "How to generate random matrices from the classical compact
    groups").
    """
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def intra_cluster_nn(blocks: list[np.ndarray]) -> float:
    """Median over all points of the distance to the nearest other member of the same block.

    This is the within-cluster spacing that sets the centroid scale of the cluster datasets.
    """
    nearest = [NearestNeighbors(n_neighbors=2).fit(b).kneighbors(b)[0][:, 1] for b in blocks]
    return float(np.median(np.concatenate(nearest)))


def radius_of_gyration(points: np.ndarray) -> float:
    """Rg = sqrt(mean_i ||p_i - mean(p)||^2), the RMS distance to the centroid."""
    centred = points - points.mean(axis=0)
    return float(np.sqrt(np.mean(np.sum(centred**2, axis=1))))


def offset_clusters(rng: np.random.Generator, counts: np.ndarray, dim: int,
                    sigma: float) -> tuple[list[np.ndarray], np.ndarray]:
    """Draw isotropic N(0, sigma^2) offsets cluster by cluster (in order) and their labels."""
    blocks = [rng.normal(0.0, sigma, (int(c), dim)) for c in counts]
    return blocks, np.repeat(np.arange(len(counts), dtype=np.int64), counts)
