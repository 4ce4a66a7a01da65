"""Tightest-cluster scale, "over-compression x".

The tightest cluster is chosen once, in truth space: among labels >= 0 with at least 20 members
(ascending label order, strict '<' so ties keep the lower label) the one with the smallest median
within-cluster pair distance. ratio(space) = median(within-cluster pairs) / median(all pairs);
tight_over_compression = ratio_truth / ratio_2d (~1 kept, >>1 crushed, <<1 inflated).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .distances import within_group_positions

MIN_CLUSTER_POINTS = 20
KEYS = ("tight_cluster", "tight_ratio_truth", "tight_ratio_2d", "tight_over_compression")


@dataclass(frozen=True)
class TightCluster:
    """The selected cluster (None if no label qualifies), its pair positions and truth ratio."""

    label: int | None
    positions: np.ndarray
    ratio_truth: float


def select_tightest(d_truth: np.ndarray, n: int, labels: np.ndarray) -> TightCluster:
    """Pick the tightest cluster of at least MIN_CLUSTER_POINTS members in truth space."""
    best = None
    for label in np.unique(labels[labels >= 0]):
        members = np.flatnonzero(labels == label)
        if members.shape[0] < MIN_CLUSTER_POINTS:
            continue
        positions = within_group_positions(members, n)
        spread = np.median(d_truth[positions])
        if best is None or spread < best[1]:
            best = (int(label), spread, positions)
    if best is None:
        return TightCluster(None, np.empty(0, dtype=np.int64), float("nan"))
    label, spread, positions = best
    return TightCluster(label, positions, float(spread / np.median(d_truth)))


def cluster_scale(cluster: TightCluster, d_2d: np.ndarray,
                  median_2d: float | None = None) -> dict[str, float]:
    """The four tight_* columns for one embedding (all NaN when no cluster qualified).

    ``median_2d``: ``np.median(d_2d)`` when the caller has it already (saves a copy of d_2d).
    """
    if cluster.label is None:
        return dict.fromkeys(KEYS, float("nan"))
    if median_2d is None:
        median_2d = np.median(d_2d)
    ratio_2d = float(np.median(d_2d[cluster.positions]) / median_2d)
    compression = cluster.ratio_truth / ratio_2d if ratio_2d > 0 else float("nan")
    return dict(zip(KEYS, (float(cluster.label), cluster.ratio_truth, ratio_2d, compression)))
