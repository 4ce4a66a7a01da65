"""What one dataset's figures are drawn from, computed once: :class:`DatasetView` (the data,
the representative maps, the results rows) and :class:`Analysis` (distances, bands, co-ranking
curves, point-wise qualities), and the facts the captions quote (:func:`facts`).

Ranks, co-ranking matrices, first-mode bands and point-wise qualities all come from the
metric engine (:mod:`drfidelity.metrics`); this module only gathers them for the painters.

References: the co-ranking matrix and R_NX(K) follow Lee & Verleysen (2009) and Lee,
Peluffo-Ordonez & Verleysen (2015); the two-parameter rank-error quality and its point-wise
form follow Lueks, Mokbel, Biehl & Hammer (2011).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.spatial.distance import pdist

from drfidelity.figures.settings import (POINTWISE_KAPPA_S, POINTWISE_KAPPA_T, POINTWISE_VMAX,
                                         RECALL_K)
from drfidelity.metrics import (auc_log_rnx, coranking_matrix, pointwise_quality, r_nx,
                                rank_error_quality_from_coranking)
from drfidelity.metrics.bands import first_mode_threshold, percentile_thresholds
from drfidelity.metrics.distances import distance_rows

#: tolerances shown as rows of the rank-error quality figure.
KAPPA_T_GRID = (0, 1, 2, 5, 10, 20, 50, 100, 200)
KAPPA_S_POINTS = 24


@dataclass
class DatasetView:
    """What one dataset's figures are drawn from.

    ``arrays`` are the generated arrays (X and its ground truth), ``maps`` the representative
    map of each method (its lowest seed), in canonical order, ``seeds`` that seed;
    ``aggregated`` and ``per_run`` are this dataset's rows of the results tables; ``heading``
    (:func:`dataset_heading`) is the line every figure carries on top.
    """

    dataset: str
    title: str
    arrays: dict[str, np.ndarray]
    maps: dict[str, np.ndarray]
    seeds: dict[str, int]
    aggregated: pd.DataFrame
    per_run: pd.DataFrame
    heading: str = ""

    @property
    def X(self) -> np.ndarray:
        return self.arrays["X"]

    def median(self, method: str, metric: str) -> float:
        rows = self.aggregated[(self.aggregated["method"] == method)
                               & (self.aggregated["metric"] == metric)]
        return float(rows["median"].iloc[0]) if len(rows) else float("nan")

    def ci(self, method: str, metric: str) -> tuple[float, float]:
        rows = self.aggregated[(self.aggregated["method"] == method)
                               & (self.aggregated["metric"] == metric)]
        if not len(rows):
            return float("nan"), float("nan")
        return float(rows["ci_lo"].iloc[0]), float(rows["ci_hi"].iloc[0])

    def run_value(self, method: str, metric: str) -> float:
        """The value of the representative (drawn) run of ``method``."""
        rows = self.per_run[(self.per_run["method"] == method)
                            & (self.per_run["seed"] == self.seeds[method])]
        return float(rows[metric].iloc[0]) if len(rows) and metric in rows else float("nan")


@dataclass
class Analysis:
    """Everything computed once per dataset for several figures."""

    d_ambient: np.ndarray
    near_radius: float
    near_fallback: bool
    radii: dict
    d_maps: dict[str, np.ndarray] = field(default_factory=dict)
    rnx: dict[str, np.ndarray] = field(default_factory=dict)
    auc: dict[str, float] = field(default_factory=dict)
    kappa_s: np.ndarray | None = None
    rank_quality: dict[str, np.ndarray] = field(default_factory=dict)
    pointwise: dict[str, np.ndarray] = field(default_factory=dict)
    k: int = RECALL_K
    kth_distance: np.ndarray | None = None

    @property
    def kth_inside(self) -> float:
        """Share of points whose k-th ambient neighbour lies inside the near band."""
        return float(np.mean(self.kth_distance <= self.near_radius))

    @property
    def near_pairs(self) -> int:
        """Pairs inside the near band."""
        return int(np.count_nonzero(self.d_ambient <= self.near_radius))

    @property
    def far_pairs(self) -> int:
        """Pairs outside the near band: those that out-vote it in a full-pair ρ."""
        return int(self.d_ambient.size) - self.near_pairs

    @property
    def near_share(self) -> float:
        return self.near_pairs / self.d_ambient.size

    @property
    def outvote_ratio(self) -> float | None:
        """Far pairs per near pair: the one number the bars, the title and the caption show."""
        return self.far_pairs / self.near_pairs if self.near_pairs else None


def analyse(view: DatasetView) -> Analysis:
    """Distances, bands, co-ranking curves and point-wise qualities of every map (engine calls)."""
    d = pdist(view.X)
    radius, fallback = first_mode_threshold(d)
    analysis = Analysis(d, radius, fallback, percentile_thresholds(d))
    n = view.X.shape[0]
    analysis.k = min(RECALL_K, n - 1)
    analysis.kth_distance = np.empty(n)
    for start in range(0, n, 256):
        rows = np.arange(start, min(start + 256, n))
        block = distance_rows(d, n, rows)  # column i of row i is 0: self is the 0-th neighbour
        analysis.kth_distance[rows] = np.partition(block, analysis.k, axis=1)[:, analysis.k]
    analysis.kappa_s = np.unique(np.geomspace(1, n // 2, KAPPA_S_POINTS).astype(int))
    kappa_t = np.array([t for t in KAPPA_T_GRID if t <= n - 2])
    for method, Y in view.maps.items():
        analysis.d_maps[method] = pdist(Y)
        Q = coranking_matrix(view.X, Y)
        analysis.rnx[method] = r_nx(Q)
        analysis.auc[method] = auc_log_rnx(Q)
        analysis.rank_quality[method] = rank_error_quality_from_coranking(
            Q, analysis.kappa_s, kappa_t)
        analysis.pointwise[method] = pointwise_quality(
            view.X, Y, min(POINTWISE_KAPPA_S, n - 1), min(POINTWISE_KAPPA_T, n - 2))
    return analysis


def rnx_k_max(n: int) -> int:
    """Largest K the R_NX figure draws: N/2. Beyond it R_NX divides by N − 1 − K, which goes
    to 0, so a handful of rank swaps swing the curve to ±1 (the tail is noise, not structure)."""
    return max(1, n // 2)


def facts(view: DatasetView, analysis: Analysis) -> dict:
    """The numbers the captions quote, so that no caption types one."""
    d = analysis.d_ambient
    best_auc = max(analysis.auc, key=analysis.auc.get) if analysis.auc else None
    return {
        "n_pairs": int(d.size),
        "near_radius": analysis.near_radius,
        "near_fallback": analysis.near_fallback,
        "near_pairs": analysis.near_pairs,
        "near_pct": 100.0 * analysis.near_pairs / d.size,
        "outvote_ratio": analysis.outvote_ratio,
        "mean_distance": float(d.mean()),
        "seeds": dict(view.seeds),
        "auc_log_rnx": dict(analysis.auc),
        "best_auc_method": best_auc,
        "pointwise_mean": {m: float(q.mean()) for m, q in analysis.pointwise.items()},
        "pointwise_kappa": [POINTWISE_KAPPA_S, POINTWISE_KAPPA_T],
        "pointwise_vmax": POINTWISE_VMAX,
        "rnx_k_max": rnx_k_max(view.X.shape[0]),
        "heading": view.heading,
        "recall_k": analysis.k,
        "kth_inside_pct": 100.0 * analysis.kth_inside,
    }
