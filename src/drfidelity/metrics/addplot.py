"""Out-of-sample ("addplot") readouts for anchored anomalies.

A basemap is fitted on normal points only; then added rows are placed into it: ``n_anom``
anchored anomalies (each pushed off the bulk from a known source cluster, two per cluster)
followed by normal control points. In a space Z (the map, or the high-D features):

* c = mean of the fit rows, r_bulk = median ||Zf_i - c||;
* radius ratio of anomaly a = ||Za_a - c|| / r_bulk  (``anomaly_radius_ratio_med`` / ``_min``);
* unit directions u_a = (Za_a - c)/||.|| and, per cluster k, v_k = (mean of k's fit rows - c)/||.||;
  angle(a, k) = degrees(arccos(clip(u_a . v_k, -1, 1)));
  ``attribution_accuracy`` = share of anomalies whose smallest-angle cluster is their anchor,
  ``angle_to_own_med`` / ``_max`` = median / max of angle(a, anchor_a).

Map only: ``pair_angle_c{k}`` = degrees(arccos(clip(u_a . u_b, -1, 1))) between the two anomalies
of cluster k, their median/max, and ``add_bulk_radius_ratio`` = [median ||Ya_ctrl - mean Yf|| /
RMS radius of Yf] / [the same in X] (about 1 when the map places new normal points at the bulk's
own scale).
"""

from __future__ import annotations

import numpy as np

_DETECTION_KEYS = ("anomaly_radius_ratio_med", "anomaly_radius_ratio_min", "attribution_accuracy",
                   "angle_to_own_med", "angle_to_own_max")


def _unit_rows(V: np.ndarray) -> np.ndarray:
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def _degrees_between(U: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Angle matrix (degrees) between the rows of two unit-vector arrays."""
    return np.degrees(np.arccos(np.clip(U @ V.T, -1.0, 1.0)))


def _validate(Zf, Za, labels_fit, anchor, n_anom: int):
    Zf = np.asarray(Zf, dtype=np.float64)
    Za = np.asarray(Za, dtype=np.float64)
    labels_fit = np.asarray(labels_fit)
    anchor = np.asarray(anchor)
    if Zf.ndim != 2 or Za.ndim != 2 or Zf.shape[1] != Za.shape[1]:
        raise ValueError(f"fit and added rows must be 2-D with the same width, got {Zf.shape} "
                         f"and {Za.shape}")
    if labels_fit.shape != (Zf.shape[0],):
        raise ValueError(f"labels_fit must have shape ({Zf.shape[0]},), got {labels_fit.shape}")
    if not isinstance(n_anom, (int, np.integer)) or not 1 <= n_anom <= Za.shape[0]:
        raise ValueError(f"n_anom must be an integer in [1, {Za.shape[0]}] (the anomalies are "
                         f"the first n_anom added rows), got {n_anom!r}")
    if anchor.shape != (n_anom,):
        raise ValueError(f"anchor must have shape ({n_anom},) (one source cluster per anomaly), "
                         f"got {anchor.shape}")
    if not np.isin(anchor, labels_fit).all():
        raise ValueError("every anchor must be a cluster label present in labels_fit")
    return Zf, Za, labels_fit, anchor


def anomaly_readouts(Zf, Za, labels_fit, anchor, *, n_anom: int, prefix: str = ""
                     ) -> tuple[dict[str, float], np.ndarray]:
    """Radius ratios, attribution and angle-to-own in one space Z (module docstring).

    ``Zf`` fit rows, ``Za`` added rows (the first ``n_anom`` are the anomalies), ``labels_fit``
    cluster ids of the fit rows, ``anchor`` source cluster per anomaly. Keys carry ``prefix``
    (``""`` for the map, ``"hd_"`` for the features). Also returns the anomalies' unit
    directions from c, which the pair angles reuse.
    """
    Zf, Za, labels_fit, anchor = _validate(Zf, Za, labels_fit, anchor, n_anom)
    centre = Zf.mean(axis=0)
    r_bulk = np.median(np.linalg.norm(Zf - centre, axis=1))
    offsets = Za[:n_anom] - centre
    radius_ratio = np.linalg.norm(offsets, axis=1) / r_bulk
    clusters = np.unique(labels_fit)
    cluster_means = np.stack([Zf[labels_fit == k].mean(axis=0) for k in clusters])
    directions = _unit_rows(offsets)
    angles = _degrees_between(directions, _unit_rows(cluster_means - centre))
    own = np.searchsorted(clusters, anchor)
    angle_to_own = angles[np.arange(n_anom), own]
    values = (np.median(radius_ratio), radius_ratio.min(),
              np.mean(np.argmin(angles, axis=1) == own),
              np.median(angle_to_own), angle_to_own.max())
    return {prefix + key: float(v) for key, v in zip(_DETECTION_KEYS, values)}, directions


def _bulk_scale(Zf: np.ndarray, Z_controls: np.ndarray) -> float:
    """median ||control - mean(Zf)|| / RMS radius of Zf."""
    centre = Zf.mean(axis=0)
    rms = np.sqrt(np.mean(np.sum((Zf - centre) ** 2, axis=1)))
    return float(np.median(np.linalg.norm(Z_controls - centre, axis=1)) / rms)


def anchored_metrics(Yf, Ya, Xf, Xa, labels_fit, anchor, n_anom: int = 10) -> dict[str, float]:
    """All addplot readouts of one run, keys and order as in ``addplot_per_run.csv``.

    ``Yf``/``Ya`` map rows of the fit and added points, ``Xf``/``Xa`` the same rows in high-D.
    Pair angles are reported for every cluster with exactly two anomalies, by cluster id.
    """
    Yf, Ya, Xf, Xa = (np.asarray(a, dtype=np.float64) for a in (Yf, Ya, Xf, Xa))
    if Xf.shape[0] != Yf.shape[0] or Xa.shape[0] != Ya.shape[0]:
        raise ValueError(f"Xf/Xa must hold the same rows as Yf/Ya, got {Xf.shape[0]}/"
                         f"{Xa.shape[0]} and {Yf.shape[0]}/{Ya.shape[0]} rows")
    embedded, directions = anomaly_readouts(Yf, Ya, labels_fit, anchor, n_anom=n_anom)
    high_d, _ = anomaly_readouts(Xf, Xa, labels_fit, anchor, n_anom=n_anom, prefix="hd_")
    if Ya.shape[0] <= n_anom:
        raise ValueError("the added rows must include control points after the n_anom anomalies")
    anchor = np.asarray(anchor)
    pair_angles = {}
    for k in np.unique(anchor):
        members = np.flatnonzero(anchor == k)
        if members.shape[0] == 2:
            first, second = directions[members[:1]], directions[members[1:]]
            pair_angles[f"pair_angle_c{k}"] = float(_degrees_between(first, second)[0, 0])
    if not pair_angles:
        raise ValueError("anchor must name some cluster exactly twice (an anomaly pair)")
    values = list(pair_angles.values())
    control_ratio = _bulk_scale(Yf, Ya[n_anom:]) / _bulk_scale(Xf, Xa[n_anom:])
    return {**embedded, **pair_angles, "pair_angle_med": float(np.median(values)),
            "pair_angle_max": float(np.max(values)), "add_bulk_radius_ratio": control_ratio,
            **high_d}
