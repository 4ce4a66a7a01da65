"""Our result tables against a previous release's, cell by cell, with a verdict per method.

Exactly reproducible methods (PCA and Isomap; scikit-learn's t-SNE, whose seeded runs are
deterministic; toorPIA, whose maps are the previous release's own) must give the same value
in every per-run cell (1e-9; 1e-6 for angles in degrees, where arccos amplifies rounding). For
the other methods a median may move with run-to-run noise: the verdict says how far, and
whether our median lies inside the published bootstrap CI. DREAMS is deterministic but its map
reacts to the last bits of the compiled Barnes-Hut gradient (docs/methods.md), so it is
judged like a stochastic method.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from drfidelity.core.layout import STUDIES
from drfidelity.studies import all_studies

EXACT_METHODS = ("PCA", "Isomap", "t-SNE", "toorPIA", "toorPIA-embedding")
#: columns that no implementation can reproduce exactly on clean data with exact ties (a
#: study's ``tie_sensitive`` table pairs, e.g. the outlier sweep: all outlier pairs equally
#: separated, outliers equidistant from the bulk), so neighbour ranks, isolation ranks and
#: outlier-pair rho follow how rounding breaks them, and PCA/Isomap place the outliers on the
#: bulk centroid, so their 2-D pair angles are noise
TIE_COLUMNS = re.compile(r"^(trust_k|cont_k|recall_k|iso_rank|pair_angle_2d|outlier_shepard)")
ROW_INFO = {"stochastic", "n", "d", "supported", "note", "new", "snr", "n_runs", "injected",
            "mean", "std", "ci_lo", "ci_hi"}


@dataclass(frozen=True)
class Table:
    """A per-run table, the columns that identify a run, and its aggregated counterpart with
    the columns that identify a median (None: the table has no aggregated form), and whether
    its neighbour-rank columns are tie-sensitive (:data:`TIE_COLUMNS`). The file names are the
    published ones; ours sit in ``folder`` below our results (a study's: ``studies``)."""

    per_run: str
    keys: tuple[str, ...]
    aggregated: str | None = None
    group: tuple[str, ...] = ()
    tie_sensitive: bool = False
    folder: str = ""


def tables() -> tuple[Table, ...]:
    """The main benchmark's tables, then every study's table pairs, then the main
    benchmark's stability and bridge gaps."""
    studies = tuple(Table(f"{p.per_run}.csv", p.compare_keys, f"{p.aggregated}.csv",
                          p.compare_group, p.tie_sensitive, STUDIES)
                    for spec in all_studies() for p in spec.tables)
    return (MAIN,) + studies + MAIN_EXTRAS


MAIN = Table("metrics_per_run.csv", ("dataset", "method", "seed"), "metrics_aggregated.csv",
             ("dataset", "method", "metric"))
MAIN_EXTRAS = (
    Table("stability.csv", ("dataset", "method")),
    Table("bridge_gaps.csv", ("method", "seed", "bridge")),
)
#: the headline column whose largest per-run difference each summary row reports
HEADLINE = "full_shepard"
SUMMARY_COLUMNS = ["table", "method", "rows", "new_rows", "missing_rows", "cells",
                   "max_abs_diff", "max_full_rho_diff", "medians", "medians_within_ci",
                   "verdict"]


def tolerance(column: str) -> float:
    return 1e-6 if "angle" in column else 1e-9


def tie_sensitive() -> set[str]:
    """The file names of the tie-sensitive tables."""
    return {name for table in tables() if table.tie_sensitive
            for name in (table.per_run, table.aggregated)}


def exempt(table: str, column: str) -> bool:
    """Whether ``column`` (a per-run column, or an aggregated table's metric) of ``table`` is
    tie-sensitive, hence compared but never held to the exact tolerance."""
    return table in tie_sensitive() and bool(TIE_COLUMNS.match(column))


def _read(path) -> pd.DataFrame:
    table = pd.read_csv(path, float_precision="round_trip")
    if "value" in table:  # knob values: 5 and 5.0 are the same value
        table["value"] = table["value"].astype(float)
    if "supported" in table:
        table = table[table["supported"].astype(bool)]
    return table


def _cells(ours: pd.DataFrame, published: pd.DataFrame, keys: list[str], name: str) -> tuple:
    """(rows, new, missing, cells, max |diff|, max |diff| of full rho, cells beyond
    tolerance) over the shared value columns. A published NaN where we have a value is not
    compared (that table predates the metric); our NaN where it has a value is a difference."""
    merged = ours.merge(published, on=keys, how="outer", suffixes=("", "_pub"),
                        indicator=True)
    both = merged[merged["_merge"] == "both"]
    columns = [c for c in published.columns if c not in keys and c not in ROW_INFO
               and c in ours.columns and pd.api.types.is_numeric_dtype(published[c])]
    cells, worst, beyond, headline = 0, 0.0, 0, float("nan")
    for column in columns:
        a = both[column].to_numpy(float)
        b = both[f"{column}_pub"].to_numpy(float)
        finite = ~np.isnan(a) & ~np.isnan(b)
        lost = int((np.isnan(a) & ~np.isnan(b)).sum())
        gap = np.abs(a[finite] - b[finite])
        cells += int(finite.sum()) + lost
        if not exempt(name, column):
            beyond += int((gap > tolerance(column)).sum()) + lost
        worst = max(worst, float(gap.max()) if gap.size else 0.0)
        if column == HEADLINE and gap.size:
            headline = float(gap.max())
    return (len(both), int((merged["_merge"] == "left_only").sum()),
            int((merged["_merge"] == "right_only").sum()), cells, worst, headline, beyond)


def _medians(ours: pd.DataFrame, published: pd.DataFrame, group: list[str]) -> tuple[int, int]:
    """(medians compared, ours inside the published bootstrap CI)."""
    merged = ours.merge(published, on=group, suffixes=("", "_pub"))
    inside = (merged["median"] >= merged["ci_lo_pub"]) & (merged["median"] <= merged["ci_hi_pub"])
    return len(merged), int(inside.sum())


def verdict(method: str, row: dict) -> str:
    """One line on what the numbers say."""
    if row["rows"] == 0 and row["new_rows"]:
        return "new in this release (the previous release did not run it here)"
    if row["rows"] == 0:
        return "not produced here (the method did not run; see skipped_methods.csv)"
    note = f"; {row['new_rows']} new row(s)" if row["new_rows"] else ""
    note += f"; {row['missing_rows']} published row(s) not produced" if row["missing_rows"] \
        else ""
    if method in EXACT_METHODS:
        if row["beyond"] == 0:
            ties = (f" except the tie-sensitive columns of clean data (max |diff| "
                    f"{row['max_abs_diff']:.3g})" if row["table"] in tie_sensitive()
                    and row["max_abs_diff"] > 1e-6 else "")
            return f"exact: every cell within {tolerance('x'):g} (angles 1e-6){ties}{note}"
        return f"DIFFERS: {row['beyond']} cell(s) beyond tolerance, max |diff| " \
               f"{row['max_abs_diff']:.3g}{note}"
    rho = (f"full rho moved by up to {row['max_full_rho_diff']:.3g}"
           if not np.isnan(row["max_full_rho_diff"]) else f"max |diff| {row['max_abs_diff']:.3g}")
    if method == "DREAMS":
        return (f"not exact: {rho} (deterministic, but chaotic in the last bits of the "
                f"compiled Barnes-Hut gradient; docs/methods.md){note}")
    if not row["medians"]:
        return f"{rho} (run-to-run noise of a seeded stochastic method){note}"
    inside = f"{row['medians_within_ci']}/{row['medians']} medians inside the published CI"
    if row["medians_within_ci"] == row["medians"]:
        return f"{inside}; {rho} per run (run-to-run noise){note}"
    return (f"{inside}; {rho} per run (the rest: a seed that ends in another basin of the "
            f"stochastic optimisation){note}")


def compare(ours_dir, published_dir) -> pd.DataFrame:
    """One row per (table, method): rows and cells compared, largest difference, share of
    medians inside the published CI, and the verdict."""
    rows = []
    for table in tables():
        here = ours_dir / table.folder
        if not (published_dir / table.per_run).exists() or not (here / table.per_run).exists():
            continue
        ours, published = _read(here / table.per_run), _read(published_dir / table.per_run)
        aggregated = table.aggregated and (here / table.aggregated).exists() \
            and (published_dir / table.aggregated).exists()
        if aggregated:
            ours_agg = _read(here / table.aggregated)
            published_agg = _read(published_dir / table.aggregated)
        for method in sorted(set(ours["method"]) | set(published["method"])):
            mine, theirs = ours[ours["method"] == method], published[published["method"] == method]
            n, new, missing, cells, worst, headline, beyond = _cells(mine, theirs,
                                                                     list(table.keys),
                                                                     table.per_run)
            medians = within = 0
            stochastic = bool(theirs["stochastic"].any()) if "stochastic" in theirs else False
            if aggregated and stochastic and method not in EXACT_METHODS:
                medians, within = _medians(ours_agg[ours_agg["method"] == method],
                                           published_agg[published_agg["method"] == method],
                                           list(table.group))
            row = {"table": table.per_run, "method": method, "rows": n, "new_rows": new,
                   "missing_rows": missing, "cells": cells, "max_abs_diff": worst,
                   "max_full_rho_diff": headline, "medians": medians,
                   "medians_within_ci": within, "beyond": beyond}
            row["verdict"] = verdict(method, row)
            rows.append(row)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def to_markdown(summary: pd.DataFrame, release: str) -> str:
    """The summary as a Markdown page, one section per table."""
    lines = [f"# Comparison with {release}", "",
             f"Generated by `drfidelity stage compare` from `results/` and the {release} tables "
             "(`reference/`). Exact methods must match every per-run cell; for the others "
             "the aggregated medians are checked against the published bootstrap CIs.", ""]
    exact = summary[summary["method"].isin(EXACT_METHODS)]
    lines += [f"Exactly reproducible methods: {int(exact['cells'].sum())} cells compared, "
              f"{int((exact['verdict'].str.startswith('DIFFERS')).sum())} (table, method) "
              "pairs differ.", ""]
    for name, part in summary.groupby("table", sort=False):
        lines += [f"## `{name}`", "", "| method | rows | cells | max abs diff | medians in CI "
                  "| verdict |", "|---|---|---|---|---|---|"]
        for r in part.itertuples():
            medians = f"{r.medians_within_ci}/{r.medians}" if r.medians else "—"
            lines.append(f"| {r.method} | {r.rows} | {r.cells} | {r.max_abs_diff:.3g} | "
                         f"{medians} | {r.verdict} |")
        lines.append("")
    return "\n".join(lines)
