"""The per-dataset ranking table as data: columns, cell texts and highlight marks.

REPORT.md and the LaTeX paper tables render this one model, so they cannot disagree.
Marks: ``best`` (bold), ``worst`` (italic), ``crit`` (outright failure, overrides both; a
negative ρ is a failure only when its whole CI is below 0, so a median of -0.0002 with a CI
across 0 is not flagged).
The points sum Σ is marked like any higher-is-better column: bold only on the best total,
italic only on the worst (the previous release bolded every Σ cell, so bold did not mean best).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from drfidelity.registry import METHODS
from drfidelity.report.ranking import composite_points, row_order, scored_columns, scored_keys

CI_MIN_WIDTH = 5e-4
#: a tightest cluster crushed more than this (the column's largest value) is an outright failure
CRUSH_LIMIT = 5
#: the columns whose value below 0 is an outright failure, outside a ranking table (where they
#: are the ρ its rule scores, full ρ aside)
SIGNED = ("shepard_near__vs_ambient", "outlier_shepard__vs_ambient")


@dataclass(frozen=True)
class Column:
    key: str          # metric name, or a points key / "total"
    header: str
    group: str
    kind: str         # "points" | "total" | "higher" | "scale" | "unit" | "reference" | "plain"


@dataclass
class Cell:
    """One table cell; ``span`` > 1 makes it cover that many columns (the next ``span - 1``
    cells of the row are left out), e.g. an add-plot row saying "not operable"."""

    text: str
    mark: str | None = None
    span: int = 1


@dataclass
class RankingTable:
    dataset: str
    columns: list[Column]
    rows: list[tuple[str, list[Cell]]] = field(default_factory=list)
    label: str = "method"  # the header of the rows' first column

    @property
    def groups(self) -> list[tuple[str, int]]:
        spans: list[tuple[str, int]] = []
        for column in self.columns:
            if spans and spans[-1][0] == column.group:
                spans[-1] = (column.group, spans[-1][1] + 1)
            else:
                spans.append((column.group, 1))
        return spans


def columns_for(dataset: str, ranking: Mapping[str, Sequence[str]]) -> list[Column]:
    """The ranking table's columns: points per scored column under the rule ``ranking``, Σ,
    the primary ρ, the scale, the k-NN reference block, then the scored columns' values."""
    points = [Column(key, name, "Distance-fidelity ranking", "points")
              for key, name in scored_keys(dataset, ranking).items()]
    columns = points + [
        Column("total", "Σ", "Distance-fidelity ranking", "total"),
        Column("full_shepard", "full · global", "Band-Shepard ρ (primary)", "higher"),
        Column("shepard_near__vs_ambient", "near · first-mode band", "Band-Shepard ρ (primary)",
               "higher"),
        Column("tight_over_compression", "tight-cluster scale ×", "Tightest-cluster scale",
               "scale"),
        Column("recall_k15", "recall@15", "Reference (k-NN, biased)", "reference"),
        Column("trust_k15", "trust@15", "Reference (k-NN, biased)", "reference"),
        Column("cont_k15", "continuity@15", "Reference (k-NN, biased)", "reference"),
    ]
    return columns + [Column(c.metric, c.header, c.group, "higher")
                      for c in scored_columns(dataset, ranking)]


def fixed(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` decimals, a value that rounds to zero printed unsigned
    ("0.000", never "-0.000": the sign of a rounded zero says nothing)."""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def format_value(median: float, lo: float, hi: float, n_runs: int) -> str:
    """Median to 3 decimals; the CI is appended when there are several runs and it is wide."""
    if median is None or math.isnan(median):
        return "—"
    text = fixed(median)
    if n_runs > 1 and abs(hi - lo) >= CI_MIN_WIDTH:
        text += f" [{fixed(lo)}, {fixed(hi)}]"
    return text


def lowest_median_chance(runs: int) -> float:
    """The chance that the median of a bootstrap resample of ``runs`` values is the lowest of
    them (by symmetry, the highest): more than half of the draws must be that value."""
    p = 1 / runs
    return math.fsum(math.comb(runs, k) * p ** k * (1 - p) ** (runs - k)
                     for k in range(runs // 2 + 1, runs + 1))


def and_list(items: list[str]) -> str:
    """"a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def interval_words(runs: int, alpha: float) -> str:
    """What the bracketed interval after a median over ``runs`` runs is, in words. It is the
    bootstrap's percentile interval of the median; with few runs a resampled median is the
    lowest (or highest) run far more often than alpha / 2, so the interval is their range,
    not a confidence interval (3 runs: 7/27 against 0.025)."""
    level = f"{100 * (1 - alpha):g}%"
    chance = lowest_median_chance(runs) if runs > 1 else 0.0
    if chance > alpha / 2:
        return (f"the range of the {runs} runs, lowest to highest (their {level} bootstrap "
                f"interval of the median, which with {runs} runs is their range: a resampled "
                f"median is the lowest run with probability {chance:.2f}, above {alpha / 2:g})")
    return f"the {level} bootstrap interval of the median over the runs"


def _dataset_stats(aggregated: pd.DataFrame, dataset: str):
    """(methods in canonical order, aggregated rows by method and metric, medians)."""
    subset = aggregated[aggregated["dataset"] == dataset]
    present = set(subset["method"])
    methods = [m for m in METHODS if m in present]
    stats = {m: {r.metric: r for r in subset[subset["method"] == m].itertuples()} for m in methods}
    medians = {m: {k: r.median for k, r in stats[m].items()} for m in methods}
    return methods, stats, medians


def dataset_headline(aggregated: pd.DataFrame, dataset: str,
                     ranking: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """Per method of ``dataset``: the full ρ median and the ranking table's total Σ."""
    methods, _, medians = _dataset_stats(aggregated, dataset)
    points = composite_points(medians, methods, list(scored_keys(dataset, ranking)))
    return {m: {"full_rho": medians[m]["full_shepard"], "sigma": points[m]["total"]}
            for m in methods}


def headline(aggregated: pd.DataFrame, datasets, ranking: Mapping[str, Sequence[str]]) -> dict:
    """The DVC metrics file ``results/headline.json``, one screen of ``dvc metrics diff`` and
    ``dvc exp show``: which method leads, by how much, and whether a run changed that.

    Per method (canonical order): ``sigma``, its ranking totals Σ summed over the datasets it
    ran on, and ``full_rho``, the mean of its full ρ medians there; ``winner``: per dataset the
    Σ leader (ties joined by "+").
    """
    per = {d: dataset_headline(aggregated, d, ranking) for d in datasets}
    result: dict = {}
    for method in METHODS:
        ran = [per[d][method] for d in datasets if method in per[d]]
        if ran:
            result[method] = {"sigma": sum(r["sigma"] for r in ran),
                              # fsum: exactly rounded, so the datasets' order does not matter
                              "full_rho": math.fsum(r["full_rho"] for r in ran) / len(ran)}
    result["winner"] = {}
    for dataset, rows in per.items():
        top = max((r["sigma"] for r in rows.values()), default=None)
        result["winner"][dataset] = "+".join(m for m, r in rows.items() if r["sigma"] == top)
    return result


def ranking_table(aggregated: pd.DataFrame, dataset: str,
                  ranking: Mapping[str, Sequence[str]]) -> RankingTable:
    """Build the ranking table of ``dataset`` from the aggregated long table, under the rule
    ``ranking`` (params ``ranking``)."""
    methods, stats, medians = _dataset_stats(aggregated, dataset)
    keys = list(scored_keys(dataset, ranking))
    points = composite_points(medians, methods, keys)
    columns = columns_for(dataset, ranking)
    # a ρ the ranking scores (not full ρ) below 0 is an outright failure
    signed = {key for key in keys if key != "full_shepard"}
    table = RankingTable(dataset, columns)
    order = row_order(points, medians, methods)
    cells = {m: [] for m in order}
    for column in columns:
        if column.kind in ("points", "total"):
            values = {m: points[m][column.key] for m in order}
            texts = {m: "—" if v is None else str(v) for m, v in values.items()}
        else:
            values = {m: medians[m].get(column.key, np.nan) for m in order}
            upper = {m: stats[m][column.key].ci_hi for m in order if column.key in stats[m]}
            texts = {}
            for m in order:
                r = stats[m].get(column.key)
                texts[m] = "—" if r is None else format_value(r.median, r.ci_lo, r.ci_hi, r.n_runs)
        marks = column_marks(column, values, upper if column.kind not in ("points", "total")
                             else None, signed)
        for m in order:
            cells[m].append(Cell(texts[m], marks.get(m)))
    table.rows = [(m, cells[m]) for m in order]
    return table


#: the ranking's two ρ, each against the ambient (noisy) data and against the ground truth
#: (the same points before the noise): (group, metric vs ambient, metric vs truth)
TRUTH_PAIRS = (("Full ρ · all pairs", "full_shepard", "shepard_p100__vs_truth"),
               ("Near ρ · first-mode band", "shepard_near__vs_ambient",
                "shepard_near__vs_truth"))


#: the truth table's last row: the noise-free geometry scored as a map (results/noise_ceiling.csv)
CEILING_LABEL = "*noise-free geometry (ceiling)*"


def truth_table(aggregated: pd.DataFrame, dataset: str, order: Sequence[str],
                ceiling: dict[str, float] | None = None) -> RankingTable:
    """Full and near ρ of ``dataset`` against the ambient data beside the same ρ against the
    ground truth, one row per method of ``order`` (the ranking table's), best and worst
    marked per column. The ranking scores the ambient columns, so they include how a map
    follows the noise; the truth columns score the geometry the data was drawn from. With
    ``ceiling`` (the truth's own scores), a last row shows what drawing the truth perfectly
    scores against the ambient data (unmarked: it is no method)."""
    _, stats, _ = _dataset_stats(aggregated, dataset)
    columns = [Column(key, header, group, "higher") for group, ambient, truth in TRUTH_PAIRS
               for key, header in ((ambient, "vs ambient"), (truth, "vs truth"))]
    cells: dict[str, list[Cell]] = {m: [] for m in order}
    for column in columns:
        rows = {m: stats[m].get(column.key) for m in order}
        values = {m: np.nan if r is None else r.median for m, r in rows.items()}
        marks = column_marks(column, values, {m: r.ci_hi for m, r in rows.items() if r},
                             signed=())
        for m, r in rows.items():
            text = "—" if r is None else format_value(r.median, r.ci_lo, r.ci_hi, r.n_runs)
            cells[m].append(Cell(text, marks.get(m)))
    rows = [(m, cells[m]) for m in order]
    if ceiling:
        rows.append((CEILING_LABEL, [Cell(fixed(ceiling[c.key]) if c.key in ceiling else "—")
                                     for c in columns]))
    return RankingTable(dataset, columns, rows)


def column_marks(column: Column, values: dict[str, float | None],
                 upper: dict[str, float] | None = None,
                 signed: Collection[str] = SIGNED) -> dict[str, str]:
    """Row label -> mark of one column: best/worst by the column's kind (none for ``plain``;
    ``scale`` closest to 1 in log terms, no worst; ``unit`` closest/farthest to 1), then the
    outright failures. ``upper``: each row's CI upper bound (absent: the median is its own
    bound, as for a single run); ``signed``: the columns failed below 0."""
    finite = {m: float(v) for m, v in values.items() if v is not None and not math.isnan(v)}
    marks: dict[str, str] = {}
    if len(set(finite.values())) > 1:
        if column.kind == "plain":
            pass
        elif column.kind == "scale":
            distance = {m: abs(math.log2(v)) if v > 0 else math.inf for m, v in finite.items()}
            best = min(distance.values())
            marks.update({m: "best" for m, d in distance.items() if d == best})
        elif column.kind == "unit":
            distance = {m: abs(v - 1) for m, v in finite.items()}
            near, far = min(distance.values()), max(distance.values())
            marks.update({m: "best" for m, d in distance.items() if d == near})
            marks.update({m: "worst" for m, d in distance.items() if d == far})
        else:
            hi, lo = max(finite.values()), min(finite.values())
            marks.update({m: "best" for m, v in finite.items() if v == hi})
            marks.update({m: "worst" for m, v in finite.items() if v == lo})
    marks.update({m: "crit" for m in _failures(column, finite, upper or {}, signed)})
    return marks


def _failures(column: Column, finite: dict[str, float], upper: dict[str, float],
              signed: Collection[str]) -> list[str]:
    """Outright failures: a rho of ``signed`` whose CI lies below 0 (its upper bound, or the
    median of a single run, is negative); a crushed tightest cluster."""
    if column.key in signed:
        return [m for m, v in finite.items() if max(v, upper.get(m, v)) < 0]
    if column.kind == "scale" and finite:
        top = max(finite.values())
        return [m for m, v in finite.items() if v == top and v > CRUSH_LIMIT]
    return []
