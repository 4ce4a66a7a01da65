"""Outlier metrics (vs the ambient space only).

O = outlier indices (ascending), B = the rest (bulk).
* outlier rho: Spearman over the pairs with at least one endpoint in O.
* OSP(o) = s_2D(o) / s_HD(o), s_Z(o) = (distance from o to its nearest bulk point) / (median over
  bulk points of the distance to the nearest other bulk point); log2 of it.
* isolation rank: points ordered by nearest-neighbour distance, largest first (rank 1), ties to
  the lower index; delta = rank_2D - rank_HD.
* pair cohesion / pair angle, per direction holding exactly two outliers a < b: the pair distance
  in units of the bulk NN median (2-D over high-D), and the angle between a and b seen from the
  bulk centroid (degrees).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .distances import pair_class, pair_positions, row_blocks


@dataclass(frozen=True)
class OutlierSpace:
    """Per-space quantities that do not depend on the other space."""

    nn: np.ndarray              # nearest-neighbour distance of every point
    to_bulk: np.ndarray         # distance of every outlier to its nearest bulk point
    bulk_nn_median: float       # median over bulk points of the nearest other bulk point
    iso_rank: np.ndarray        # isolation rank of every outlier
    pair_distance: np.ndarray   # distance within each qualifying direction pair
    pair_angle: np.ndarray      # angle (degrees) within each pair from the bulk centroid


@dataclass(frozen=True)
class OutlierSet:
    """Which points are outliers and which outlier pairs share a direction."""

    idx: np.ndarray
    bulk: np.ndarray            # boolean mask over all points
    directions: np.ndarray      # direction ids with exactly two outliers
    pairs: np.ndarray           # (n_directions, 2) point indices a < b
    weights: np.ndarray         # uint8 per condensed pair: touches an outlier


def outlier_set(n: int, outlier_idx: np.ndarray, outlier_dir: np.ndarray | None) -> OutlierSet:
    """Index bookkeeping for the outlier metrics."""
    idx = np.sort(outlier_idx)
    bulk = np.ones(n, dtype=bool)
    bulk[idx] = False
    directions, pairs = [], []
    if outlier_dir is not None:
        dirs = outlier_dir[np.argsort(outlier_idx)]
        for direction in np.unique(dirs):
            members = idx[dirs == direction]
            if members.shape[0] == 2:
                directions.append(int(direction))
                pairs.append(np.sort(members))
    weights = (pair_class((~bulk).astype(np.uint8)) > 0).view(np.uint8)
    return OutlierSet(idx, bulk, np.asarray(directions, dtype=np.int64),
                      np.asarray(pairs, dtype=np.int64).reshape(-1, 2), weights)


def _isolation_ranks(nn: np.ndarray) -> np.ndarray:
    """Rank of every point by NN distance, 1 = most isolated, ties to the lower index."""
    ranks = np.empty(nn.shape[0], dtype=np.int64)
    ranks[np.argsort(-nn, kind="stable")] = np.arange(1, nn.shape[0] + 1)
    return ranks


def _angle(u: np.ndarray, v: np.ndarray) -> float:
    """Angle between u and v in degrees (arccos of the clipped cosine); NaN for a zero vector."""
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        return float("nan")
    return float(np.degrees(np.arccos(np.clip(np.dot(u, v) / (nu * nv), -1.0, 1.0))))


def outlier_space(outliers: OutlierSet, rows, d: np.ndarray, n: int,
                  coords: np.ndarray | None) -> OutlierSpace:
    """Scan the distance rows of one space once; ``coords`` (None: angles NaN) give the angles."""
    nn = np.empty(n)
    nn_bulk = np.empty(n)
    for block in row_blocks(n, n):
        dist = rows(block)
        dist[np.arange(block.shape[0]), block] = np.inf
        nn[block] = dist.min(axis=1)
        nn_bulk[block] = dist[:, outliers.bulk].min(axis=1)
    pair_distance = d[pair_positions(outliers.pairs[:, 0], outliers.pairs[:, 1], n)]
    if coords is None:
        angles = np.full(outliers.pairs.shape[0], np.nan)
    else:
        centre = coords[outliers.bulk].mean(axis=0)
        angles = np.array([_angle(coords[a] - centre, coords[b] - centre)
                           for a, b in outliers.pairs])
    return OutlierSpace(nn=nn, to_bulk=nn_bulk[outliers.idx],
                        bulk_nn_median=float(np.median(nn_bulk[outliers.bulk])),
                        iso_rank=_isolation_ranks(nn)[outliers.idx],
                        pair_distance=pair_distance, pair_angle=angles)


def _nan_stat(function, values: np.ndarray) -> float:
    """nanmedian / nanmin / nanmax that return NaN (without a warning) when nothing is finite."""
    return float(function(values)) if np.any(~np.isnan(values)) else float("nan")


def outlier_metrics(outliers: OutlierSet, high: OutlierSpace, low: OutlierSpace,
                    shepard_rho: float) -> dict[str, float]:
    """The outlier column block, in the reference column order (``shepard_rho``: Spearman rho
    over the pairs that touch an outlier)."""
    out = {"outlier_shepard__vs_ambient": shepard_rho}
    s_high = high.to_bulk / high.bulk_nn_median
    s_low = low.to_bulk / low.bulk_nn_median
    with np.errstate(divide="ignore", invalid="ignore"):
        osp = np.where(s_high > 0, s_low / s_high, np.nan)
    delta = low.iso_rank - high.iso_rank
    for j in range(outliers.idx.shape[0]):
        out[f"osp_o{j}__vs_ambient"] = float(osp[j])
        out[f"log2_osp_o{j}__vs_ambient"] = float(np.log2(osp[j])) if osp[j] > 0 else -np.inf
        out[f"iso_rank_hd_o{j}__vs_ambient"] = float(high.iso_rank[j])
        out[f"iso_rank_2d_o{j}"] = float(low.iso_rank[j])
        out[f"iso_rank_delta_o{j}__vs_ambient"] = float(delta[j])
    median = _nan_stat(np.nanmedian, osp)
    out["osp_median__vs_ambient"] = median
    out["osp_min__vs_ambient"] = _nan_stat(np.nanmin, osp)
    out["log2_osp_median__vs_ambient"] = float(np.log2(median)) if median > 0 else -np.inf
    out["iso_rank_delta_mean__vs_ambient"] = float(np.mean(delta))
    if outliers.directions.shape[0]:
        with np.errstate(divide="ignore", invalid="ignore"):
            cohesion = ((low.pair_distance / low.bulk_nn_median)
                        / (high.pair_distance / high.bulk_nn_median))
        for q, direction in enumerate(outliers.directions):
            out[f"pair_cohesion_dir{direction}__vs_ambient"] = float(cohesion[q])
            out[f"pair_angle_2d_dir{direction}"] = float(low.pair_angle[q])
            out[f"pair_angle_hd_dir{direction}__vs_ambient"] = float(high.pair_angle[q])
        out["pair_cohesion_median__vs_ambient"] = _nan_stat(np.nanmedian, cohesion)
        out["pair_angle_2d_max"] = _nan_stat(np.nanmax, low.pair_angle)
    return out
