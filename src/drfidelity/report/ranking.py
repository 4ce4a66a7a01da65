"""Composite distance-fidelity ranking (the rule of the DR Fidelity Benchmark v1.3.0).

Per scored column, methods are sorted by descending median (missing values last); the stable
sort keeps the canonical method order on exact ties, and medians are compared unrounded.
Place i (0-based) earns max(0, 5 - i) points. Rows are ordered by total points, then by full rho.
The scored columns are full and near rho on every dataset, then a dataset's own (outliers: the
outlier-pair rho), then those a release's rule adds (params ``ranking``; v1.4.0: populations'
minority-pair rho).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from drfidelity.core.params import ParamsError
from drfidelity.core.validation import close_match
from drfidelity.datasets.registry import DATASETS
from drfidelity.datasets.spec import ScoredColumn

MISSING = -1e9
#: points of the first place; each later place earns one less, never below 0.
TOP_POINTS = 5

#: scored key -> points column name, on every dataset; a spec's ``scored`` columns follow.
SCORED = {"full_shepard": "full pts", "shepard_near__vs_ambient": "near pts"}


def scored_columns(dataset: str, ranking: Mapping[str, Sequence[str]]
                   ) -> tuple[ScoredColumn, ...]:
    """``dataset``'s scored columns beyond full and near ρ: its spec's own, then those the
    rule ``ranking`` (params ``ranking``: dataset -> metric names) adds from its ``rankable``
    columns. A name it cannot rank is a :class:`ParamsError` naming ``ranking.<dataset>``."""
    spec = DATASETS[dataset]
    rankable = {c.metric: c for c in spec.rankable}
    added = ranking.get(dataset, ())
    for name in added:
        if name not in rankable:
            known = ", ".join(rankable) or "none"
            raise ParamsError(f"ranking.{dataset}: {name!r} is not a column {dataset} can rank"
                              f"{close_match(name, rankable)} (rankable: {known})")
    return spec.scored + tuple(rankable[name] for name in dict.fromkeys(added))


def scored_keys(dataset: str, ranking: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Scored metric -> points column name of ``dataset``'s ranking under the rule
    ``ranking`` (see :func:`scored_columns`), in column order."""
    return {**SCORED, **{c.metric: c.points for c in scored_columns(dataset, ranking)}}


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
