"""Composite distance-fidelity ranking (the rule of the DR Fidelity Benchmark v1.3.0).

Per scored column, methods are sorted by descending median (missing values last); the stable
sort keeps the canonical method order on exact ties, and medians are compared unrounded.
Place i (0-based) earns max(0, 5 - i) points. Rows are ordered by total points, then by full rho.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from drfidelity.datasets.registry import DATASETS

MISSING = -1e9
#: points of the first place; each later place earns one less, never below 0.
TOP_POINTS = 5

#: scored key -> points column name, on every dataset; a spec's ``scored`` columns follow.
SCORED = {"full_shepard": "full pts", "shepard_near__vs_ambient": "near pts"}


def scored_keys(dataset: str) -> dict[str, str]:
    """Scored metric -> points column name of ``dataset``'s ranking, in column order."""
    return {**SCORED, **{c.metric: c.points for c in DATASETS[dataset].scored}}


def composite_points(medians: Mapping[str, Mapping[str, float]], methods: Sequence[str],
                     keys: Sequence[str]) -> dict[str, dict[str, int | None]]:
    """Points per method and key (None where the method has no value), plus key "total".

    ``medians[method][key]`` is the aggregated median; ``methods`` is in canonical order.
    """
    points: dict[str, dict[str, int | None]] = {m: {} for m in methods}
    for key in keys:
        def value(method: str) -> float:
            v = medians[method].get(key)
            return MISSING if v is None or math.isnan(v) else v

        for place, method in enumerate(sorted(methods, key=value, reverse=True)):
            has_value = value(method) != MISSING
            points[method][key] = max(0, TOP_POINTS - place) if has_value else None
    for method in methods:
        points[method]["total"] = sum(p for k, p in points[method].items() if p is not None)
    return points


def row_order(points: Mapping[str, Mapping[str, int | None]],
              medians: Mapping[str, Mapping[str, float]], methods: Sequence[str]) -> list[str]:
    """Descending total, ties by descending full rho (stable: canonical order last)."""
    def full(method: str) -> float:
        v = medians[method].get("full_shepard")
        return MISSING if v is None or math.isnan(v) else v

    return sorted(methods, key=lambda m: (points[m]["total"], full(m)), reverse=True)
