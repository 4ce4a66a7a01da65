"""Composite distance-fidelity ranking (the rule of the DR Fidelity Benchmark v1.3.0).

Per scored column, methods are sorted by descending median (missing values last); the stable
sort keeps the canonical method order on exact ties, and medians are compared unrounded.
Place i (0-based) earns max(0, 5 - i) points. Rows are ordered by total points, then by full rho.
The scored columns are full and near rho on every dataset, then a dataset's own (outliers: the
outlier-pair rho), then those a release's rule adds (params ``ranking``; v1.4.0: populations'
minority-pair rho; the living configuration: full and near rho against the ground truth).
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
#: columns a rule may add on every dataset: full and near ρ against the ground truth (the
#: points before the noise), where a map that follows the noise earns nothing for it
TRUTH_RANKABLE = (
    ScoredColumn("shepard_p100__vs_truth", "full/truth pts", "full · truth",
                 "Band-Shepard ρ against the ground truth", "full (T)", r"full $\rho$ (truth)"),
    ScoredColumn("shepard_near__vs_truth", "near/truth pts", "near · truth",
                 "Band-Shepard ρ against the ground truth", "near (T)", r"near $\rho$ (truth)"),
)


def rankable_columns(dataset: str) -> dict[str, ScoredColumn]:
    """Metric -> column of those a rule may add to ``dataset``'s ranking: the truth columns,
    then its spec's ``rankable`` ones."""
    return {c.metric: c for c in (*TRUTH_RANKABLE, *DATASETS[dataset].rankable)}


def scored_columns(dataset: str, ranking: Mapping[str, Sequence[str]]
                   ) -> tuple[ScoredColumn, ...]:
    """``dataset``'s scored columns beyond full and near ρ: its spec's own, then those the
    rule ``ranking`` (params ``ranking``: dataset -> metric names) adds from its ``rankable``
    columns (:func:`rankable_columns`). A name it cannot rank is a :class:`ParamsError`
    naming ``ranking.<dataset>``."""
    rankable = rankable_columns(dataset)
    added = ranking.get(dataset, ())
    for name in added:
        if name not in rankable:
            known = ", ".join(rankable) or "none"
            raise ParamsError(f"ranking.{dataset}: {name!r} is not a column {dataset} can rank"
                              f"{close_match(name, rankable)} (rankable: {known})")
    return DATASETS[dataset].scored + tuple(rankable[name] for name in dict.fromkeys(added))


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


def dataset_leaders(medians: Mapping[str, Mapping[str, float]], methods: Sequence[str],
                    keys: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...], dict]:
    """(Σ leaders, row order, Σ per method) of one dataset's ranking from its medians."""
    points = composite_points(medians, methods, keys)
    totals = {m: points[m]["total"] for m in methods}
    top = max(totals.values(), default=0)
    return (tuple(m for m in methods if totals[m] == top),
            tuple(row_order(points, medians, methods)), totals)


def _rankings(per_run, datasets: Sequence[str], ranking: Mapping[str, Sequence[str]],
              methods: Sequence[str]) -> dict[str, tuple]:
    """Per dataset of ``per_run`` (one row per run, a column per metric), its
    :func:`dataset_leaders` from the runs' medians."""
    found = {}
    for dataset in datasets:
        keys = list(scored_keys(dataset, ranking))
        runs = per_run[per_run["dataset"] == dataset]
        ran = [m for m in methods if m in set(runs["method"])]
        columns = list(dict.fromkeys([*keys, "full_shepard"]))  # row order's tie-break
        medians = {m: runs.loc[runs["method"] == m, columns].median().to_dict() for m in ran}
        found[dataset] = dataset_leaders(medians, ran, keys)
    return found


def row_orders(per_run, datasets: Sequence[str], ranking: Mapping[str, Sequence[str]],
               methods: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Per dataset, the ranking table's row order from the runs of ``per_run`` (one row per
    run) under the rule ``ranking``, over the ``methods`` that ran there."""
    return {d: found[1] for d, found in _rankings(per_run, datasets, ranking, methods).items()}


def rank_stability(per_run, datasets: Sequence[str], ranking: Mapping[str, Sequence[str]],
                   methods: Sequence[str]) -> dict:
    """How far the ranking rests on one seed or one dataset.

    ``seeds``: per dataset, of the rankings with one seed's runs of the stochastic methods left
    out (the deterministic ones run once and stay), how many keep the Σ leaders (``leader``)
    and the whole row order (``order``), out of ``n``; ``order``: each dataset's row order
    with every run. ``datasets``: per dataset left out, the
    method(s) with the highest Σ summed over the others, and whether that is the method(s) of
    all of them (``all``). Medians are recomputed from the runs; the metric table's own
    medians are the same numbers (the median of the finite runs).
    """
    full = _rankings(per_run, datasets, ranking, methods)
    stochastic = per_run["stochastic"].astype(bool)
    seeds = sorted(set(per_run.loc[stochastic, "seed"]))
    kept = {d: {"leader": 0, "order": 0, "n": 0} for d in datasets}
    if len(seeds) > 1:
        for seed in seeds:
            left = _rankings(per_run[~(stochastic & (per_run["seed"] == seed))], datasets,
                             ranking, methods)
            for dataset in datasets:
                counts = kept[dataset]
                counts["n"] += 1
                counts["leader"] += left[dataset][0] == full[dataset][0]
                counts["order"] += left[dataset][1] == full[dataset][1]

    def top_of(subset: Sequence[str]) -> tuple[str, ...]:
        summed = {m: sum(full[d][2].get(m, 0) for d in subset) for m in methods}
        best = max(summed.values(), default=0)
        return tuple(m for m in methods if summed[m] == best)

    return {"seeds": kept, "n_seeds": len(seeds), "all": top_of(datasets),
            "order": {d: full[d][1] for d in datasets},
            "datasets": {d: top_of([o for o in datasets if o != d]) for d in datasets}}
