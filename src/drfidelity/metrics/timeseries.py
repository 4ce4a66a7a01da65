"""Time-series probe readouts (random-walk data).

Several independent random walks are embedded together. Pair subsets of the condensed
(``pdist``-order) distance vectors separate what a map does to one trajectory from what it does
between trajectories:

* ``full_shepard``: Spearman rho over all pairs;
* ``within_series_shepard``: pairs from the same series;
* ``within_series_near_shepard``: same series and |t_i - t_j| <= lag (local step structure);
* ``cross_series_shepard``: pairs from different series;
* ``step_structure``: the saw-tooth score (tau_2D - 1) / (tau_HD - 1), see :func:`sawtooth_tau`.

Spearman rho is ``scipy.stats.spearmanr`` (average ranks for ties), NaN below 3 pairs.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from .distances import condensed_distances


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(spearmanr(a, b).statistic) if a.shape[0] >= 3 else float("nan")


def _validate_series(n: int, series, t) -> tuple[np.ndarray, np.ndarray]:
    series = np.asarray(series)
    t = np.asarray(t)
    if series.shape != (n,) or t.shape != (n,):
        raise ValueError(f"series and t must both have shape ({n},), got {series.shape} and "
                         f"{t.shape}")
    if not np.issubdtype(t.dtype, np.number) or not np.isfinite(t).all():
        raise ValueError("t must hold finite numeric time stamps")
    return series, t


def sawtooth_tau(P: np.ndarray, series, t, window: int) -> float:
    """Median path-to-chord ratio tau over all windows of ``window`` steps of every series.

    Per series (rows ordered by t): steps s_u = ||P_{u+1} - P_u||, cum = [0, cumsum(s)], and for
    each start u: path = cum[u+w] - cum[u], chord = ||P_{u+w} - P_u||; windows with chord = 0 are
    dropped. tau = median(path / chord) pooled over series and windows. A straight path gives 1;
    a d-dimensional random walk gives about sqrt(w) (its chord grows like sqrt(w) steps), and a
    map that smooths the walk pulls tau toward 1. NaN when no window qualifies.
    """
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2:
        raise ValueError(f"P must be an (N, d) array of positions, got shape {P.shape}")
    series, t = _validate_series(P.shape[0], series, t)
    if not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    ratios = []
    for s in np.unique(series):
        rows = np.flatnonzero(series == s)
        path_points = P[rows[np.argsort(t[rows], kind="stable")]]
        if path_points.shape[0] <= window:
            continue
        steps = np.linalg.norm(np.diff(path_points, axis=0), axis=1)
        cum = np.concatenate(([0.0], np.cumsum(steps)))
        path = cum[window:] - cum[:-window]
        chord = np.linalg.norm(path_points[window:] - path_points[:-window], axis=1)
        moving = chord > 0
        ratios.append(path[moving] / chord[moving])
    pooled = np.concatenate(ratios) if ratios else np.empty(0)
    return float(np.median(pooled)) if pooled.size else float("nan")


def random_walk_readouts(X: np.ndarray, Y: np.ndarray, series, t, lag: int = 20
                         ) -> dict[str, float]:
    """The five time-series readouts (module docstring), keys in ``random_walk_per_run.csv`` order.

    ``X`` (N, D) walks, ``Y`` (N, 2) map, ``series`` (N,) series id, ``t`` (N,) time index.
    The saw-tooth window equals ``lag``. ``step_structure`` is a ratio of median-minus-one
    values (not a median of per-window ratios), as v1.4.0 computes it; NaN when the data are
    straight (tau_HD = 1) or too short for a window.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must be 2-D with the same number of rows, got {X.shape} and "
                         f"{Y.shape}")
    series, t = _validate_series(X.shape[0], series, t)
    if not isinstance(lag, (int, np.integer)) or lag < 1:
        raise ValueError(f"lag must be a positive integer, got {lag!r}")
    d_hd = condensed_distances(X, "euclidean")
    d_2d = condensed_distances(Y, "euclidean", "Y")
    i, j = np.triu_indices(X.shape[0], 1)
    same = series[i] == series[j]
    near = same & (np.abs(t[i] - t[j]) <= lag)
    tau_hd = sawtooth_tau(X, series, t, lag)
    tau_2d = sawtooth_tau(Y, series, t, lag)
    return {
        "full_shepard": _spearman(d_hd, d_2d),
        "within_series_shepard": _spearman(d_hd[same], d_2d[same]),
        "within_series_near_shepard": _spearman(d_hd[near], d_2d[near]),
        "cross_series_shepard": _spearman(d_hd[~same], d_2d[~same]),
        "step_structure": (tau_2d - 1.0) / (tau_hd - 1.0) if tau_hd != 1.0 else float("nan"),
    }
