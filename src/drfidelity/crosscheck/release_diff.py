"""What moved between two published releases of the previous benchmark, and why.

The previous project regenerates its tables in place, so a release's repository cannot say
what the one before it published, let alone why a number moved. This artifact imports both
releases' tables and toorPIA maps, so it can. Two releases' result tables are compared cell by
cell, on the keys and tolerances of the comparison with our own results
(:mod:`drfidelity.crosscheck.comparison`), and every cell that moved is attributed to the first cause the
imported data prove:

- ``new toorPIA maps``: a toorPIA row, and the release's maps behind that table differ;
- ``new input``: the row's input differs (its ``n``/``d`` columns, in the per-run table);
- ``no provable cause``: nothing the releases publish explains the move. This is an upstream
  inconsistency and is listed as one.

Rows published by one release only are attributed too: a method, a metric or a value of the
table's grid (a noise dimension, a data seed) that the other release does not have. Columns
that only the newer release has and that it fills for some methods only (tables that mix
vintages), and paper tables left as they were while the cells they transcribe moved, are
listed as inconsistencies.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from drfidelity.crosscheck.comparison import tables, tolerance
from drfidelity.registry import METHODS
from drfidelity.report.ranking import composite_points, scored_keys
from drfidelity.studies import all_studies

#: per main results table (its stem, before ``_per_run``/``_aggregated``), the map folders of
#: the releases' imports behind its toorPIA rows; ``{dataset}`` is the row's dataset (a study's
#: tables say theirs: ``TablePair.release_maps``)
MAIN_TOORPIA_MAPS = {
    "metrics": ("{dataset}/toorpia/embedding",),
    "stability": ("{dataset}/toorpia/embedding",),
    "bridge_gaps": ("transition/toorpia/embedding",),
}


def toorpia_maps() -> dict[str, tuple[str, ...]]:
    """Per results table stem, the map folders behind its toorPIA rows."""
    return {**MAIN_TOORPIA_MAPS, **{pair.stem: pair.release_maps for spec in all_studies()
                                    for pair in spec.tables}}


#: the per-run columns that describe a run's input
INPUT_COLUMNS = ("n", "d")
TOORPIA = ("toorPIA", "toorPIA-embedding")
#: the paper tables transcribe the main tables
PAPER_SOURCE = "metrics_aggregated.csv"

CELL_COLUMNS = ["table", "method", "row", "column", "old", "new", "cause"]
SUMMARY_COLUMNS = ["table", "method", "cause", "cells", "rows", "max_abs_diff"]
RANKING_COLUMNS = ["dataset", "method", "old_medians_old_rule", "old_medians_new_rule",
                   "new_medians_old_rule", "new_medians_new_rule", "cause", "old_rule",
                   "new_rule"]
#: how the ranking table's ``old_rule``/``new_rule`` join a rule's scored metrics of a dataset
RULE_SEPARATOR = ";"
INCONSISTENCY_COLUMNS = ["kind", "table", "detail"]


@dataclass(frozen=True)
class Release:
    """A published release as imported: its tag, result tables, paper tables, toorPIA maps and
    its ranking rule (params ``ranking``: the scored columns it adds to a dataset's)."""

    tag: str
    results: Path
    paper_tables: Path
    maps: Path
    ranking: Mapping[str, Sequence[str]]

    def table(self, name: str) -> pd.DataFrame | None:
        path = self.results / name
        return pd.read_csv(path, float_precision="round_trip") if path.exists() else None


def _stem(name: str) -> str:
    return name.removesuffix(".csv").removesuffix("_per_run").removesuffix("_aggregated")


def _files(folder: Path) -> dict[str, str]:
    """md5 per file below ``folder`` (relative path -> digest); empty when it is absent."""
    if not folder.is_dir():
        return {}
    return {p.relative_to(folder).as_posix(): hashlib.md5(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _main_datasets(old: Release, new: Release) -> list[str]:
    tables = [t for t in (old.table(PAPER_SOURCE), new.table(PAPER_SOURCE)) if t is not None]
    return sorted(set().union(*(set(t["dataset"]) for t in tables))) if tables else []


def _differs(a: pd.Series, b: pd.Series, tol: np.ndarray) -> np.ndarray:
    """Whether each pair of cells differs beyond its tolerance ``tol`` (NaN against a number
    differs; NaN against NaN does not; text must be equal)."""
    if a.dtype.kind in "fiu" and b.dtype.kind in "fiu":
        x, y = a.to_numpy(dtype=np.float64), b.to_numpy(dtype=np.float64)
        missing = np.isnan(x) | np.isnan(y)
        with np.errstate(invalid="ignore"):
            far = np.abs(x - y) > tol
        return np.where(missing, np.isnan(x) != np.isnan(y), far)
    return (a.astype(str) != b.astype(str)).to_numpy()


def _tolerances(rows: pd.DataFrame, column: str) -> np.ndarray:
    """The comparison's tolerance per row: of the row's metric in an aggregated (long) table,
    else of the column."""
    if "metric" in rows.columns:
        return np.array([tolerance(m) for m in rows["metric"]], dtype=np.float64)
    return np.full(len(rows), tolerance(column))


def _code(names: Sequence[str]) -> str:
    """Column names as Markdown code (they are names, not prose)."""
    return ", ".join(f"`{name}`" for name in names)


def _row_label(row: pd.Series, keys: Sequence[str]) -> str:
    return ";".join(f"{k}={row[k]:g}" if isinstance(row[k], float) else f"{k}={row[k]}"
                    for k in keys if k != "method")


class _Diff:
    """The moved cells, one-release rows and inconsistencies of two releases, as found."""

    def __init__(self, old: Release, new: Release):
        self.old, self.new = old, new
        self.patterns = toorpia_maps()      # table stem -> map folders behind its toorPIA rows
        self.folders: dict[str, bool] = {}  # map folder -> its files differ
        self.cells: list[dict] = []
        self.rows: list[dict] = []       # (table, method, cause) per one-release row
        self.added: list[dict] = []      # (table, method, cause, cells) of new columns
        self.inconsistencies: list[dict] = []

    def maps_changed(self, table: str, row: pd.Series) -> bool:
        """Whether a map folder behind the toorPIA rows of ``table`` (for ``row``'s dataset)
        holds other files, or other bytes, in the two releases."""
        for pattern in self.patterns.get(_stem(table), ()):
            folder = pattern.format(dataset=row.get("dataset", ""))
            if folder not in self.folders:
                self.folders[folder] = (_files(self.old.maps / folder)
                                        != _files(self.new.maps / folder))
            if self.folders[folder]:
                return True
        return False

    def compare(self, name: str, keys: Sequence[str], inputs: dict[str, bool]) -> None:
        """Table ``name`` of both releases; ``inputs[method]``: its runs' input changed."""
        a, b = self.old.table(name), self.new.table(name)
        if a is None or b is None:
            return
        keys = list(keys)
        merged = a.merge(b, on=keys, how="outer", suffixes=("_old", "_new"), indicator=True)
        self._one_release_rows(name, keys, merged, a, b)
        both = merged[merged["_merge"] == "both"]
        for column in [c for c in a.columns if c in b.columns and c not in keys]:
            moved = both[_differs(both[f"{column}_old"], both[f"{column}_new"],
                                  _tolerances(both, column))]
            for _, row in moved.iterrows():
                self.cells.append({"table": name, "method": row["method"],
                                   "row": _row_label(row, keys), "column": column,
                                   "old": row[f"{column}_old"], "new": row[f"{column}_new"],
                                   "cause": self._cause(name, row, inputs)})
        self._new_columns(name, a, b)

    def _cause(self, name: str, row: pd.Series, inputs: dict[str, bool]) -> str:
        if inputs.get(row["method"]):
            return "new input"
        if row["method"] in TOORPIA and self.maps_changed(name, row):
            return "new toorPIA maps"
        return "no provable cause"

    def _one_release_rows(self, name: str, keys: list[str], merged: pd.DataFrame,
                          a: pd.DataFrame, b: pd.DataFrame) -> None:
        for side, other, verb in (("right_only", a, "new"), ("left_only", b, "dropped")):
            for _, row in merged[merged["_merge"] == side].iterrows():
                self.rows.append({"table": name, "method": row["method"],
                                  "cause": self._row_cause(row, keys, other, verb)})

    @staticmethod
    def _row_cause(row: pd.Series, keys: list[str], other: pd.DataFrame, verb: str) -> str:
        """Why a row is in one release only: its method is not in the other release's table,
        or the first of its keys whose value the other release never has for that method (a
        metric, a value of the grid)."""
        same = other[other["method"] == row["method"]]
        if same.empty:
            return f"{verb} method"
        for key in (k for k in keys if k != "method"):
            if row[key] not in set(same[key]):
                what = "metric" if key == "metric" else "grid"
                return f"{verb} {what}: {key} = {row[key]}"
        return f"{verb} row"

    def _new_columns(self, name: str, a: pd.DataFrame, b: pd.DataFrame) -> None:
        """Columns only the newer table has: counted per method where filled, and an
        inconsistency where filled for some methods only (rows not rerun: mixed vintages)."""
        added = [c for c in b.columns if c not in a.columns]
        if not added:
            return
        counts = b[added].notna().sum(axis=1).groupby(b["method"], sort=False).sum()
        for method, cells in counts[counts > 0].items():
            self.added.append({"table": name, "method": method,
                               "cause": f"new column(s): {_code(added)}", "cells": cells})
        if (counts > 0).all():
            return
        self.inconsistencies.append({
            "kind": "mixed vintages", "table": name,
            "detail": f"{len(added)} column(s) new in {self.new.tag} ({_code(added)}) are "
                      f"filled for {', '.join(counts.index[counts > 0])} only, empty for "
                      f"{', '.join(counts.index[counts == 0])}: those rows were not rerun"})


def input_changed(old: Release, new: Release, per_run: str) -> dict[str, bool]:
    """Per method of a per-run table: whether its runs' inputs (``n``, ``d``) differ."""
    a, b = old.table(per_run), new.table(per_run)
    if a is None or b is None:
        return {}
    columns = [c for c in INPUT_COLUMNS if c in a.columns and c in b.columns]
    result = {}
    for method in set(a["method"]) & set(b["method"]):
        inputs = [frozenset(map(tuple, t.loc[t["method"] == method, columns].to_numpy()))
                  for t in (a, b)]
        result[method] = bool(columns) and inputs[0] != inputs[1]
    return result


def diff_releases(old: Release, new: Release) -> dict[str, pd.DataFrame]:
    """Everything that moved from ``old`` to ``new``.

    Returns
    -------
    dict of str to DataFrame
        ``cells``: every moved cell (table, method, row keys, column, both values, cause);
        ``summary``: per (table, method, cause) the moved cells, the one-release rows and the
        largest numeric move; ``ranking``: the composite Σ of each dataset's methods, from
        either release's medians under either release's rule, and what moved it;
        ``inconsistencies``: what the releases publish that cannot all be true at once.
    """
    found = _Diff(old, new)
    for table in tables():
        inputs = input_changed(old, new, table.per_run)
        found.compare(table.per_run, table.keys, inputs)
        if table.aggregated:
            found.compare(table.aggregated, table.group, inputs)
    cells = pd.DataFrame(found.cells, columns=CELL_COLUMNS)
    summary = _summary(cells, pd.DataFrame(found.rows, columns=["table", "method", "cause"]),
                       pd.DataFrame(found.added, columns=["table", "method", "cause", "cells"]))
    unexplained = summary[summary["cause"] == "no provable cause"]
    for row in unexplained.itertuples():
        found.inconsistencies.append({
            "kind": "moved without a cause", "table": row.table,
            "detail": f"{row.method}: {row.cells} cell(s) moved (largest by {row.max_abs_diff:.3g}) "
                      "with the same input and no map of it changed"})
    found.inconsistencies += _stale_paper_tables(old, new, cells)
    return {"cells": cells, "summary": summary, "ranking": ranking_both_ways(old, new),
            "inconsistencies": pd.DataFrame(found.inconsistencies,
                                            columns=INCONSISTENCY_COLUMNS)}


def abs_moves(cells: pd.DataFrame) -> pd.Series:
    """|new - old| per moved cell of a ``cells`` table; NaN where either value is not a number
    (a text cell, a value that appeared or vanished), so a summary of moves skips it."""
    return (pd.to_numeric(cells["old"], errors="coerce")
            - pd.to_numeric(cells["new"], errors="coerce")).abs()


def _summary(cells: pd.DataFrame, rows: pd.DataFrame, added: pd.DataFrame) -> pd.DataFrame:
    """Per (table, method, cause): cells moved or added, rows in one release only, and the
    largest numeric move; tables in the comparison's order."""
    moved = cells.assign(diff=abs_moves(cells)).groupby(["table", "method", "cause"], sort=False)
    summary = moved.agg(cells=("column", "size"), max_abs_diff=("diff", "max")).reset_index()
    summary = pd.concat([summary, added], ignore_index=True) if len(added) else summary
    one_side = rows.groupby(["table", "method", "cause"], sort=False).size()
    one_side = one_side.rename("rows").reset_index()
    merged = summary.merge(one_side, on=["table", "method", "cause"], how="outer")
    merged["cells"] = merged["cells"].fillna(0).astype(int)
    merged["rows"] = merged["rows"].fillna(0).astype(int)
    order = {name: i for i, name in enumerate(t for table in tables()
                                              for t in (table.per_run, table.aggregated) if t)}
    merged = merged.sort_values(["table", "method", "cause"], kind="stable",
                                key=lambda c: c.map(order) if c.name == "table" else c)
    return merged[SUMMARY_COLUMNS].reset_index(drop=True)


def _stale_paper_tables(old: Release, new: Release, cells: pd.DataFrame) -> list[dict]:
    """The newer paper tables, when they are the older ones byte for byte although cells of
    the table they transcribe moved."""
    a, b = _files(old.paper_tables), _files(new.paper_tables)
    source = cells[cells["table"] == PAPER_SOURCE]
    if not a or a != b or source.empty:
        return []
    return [{"kind": "paper tables not regenerated", "table": "paper/tables",
             "detail": f"the {len(b)} files of {new.tag} are those of {old.tag} byte for byte, "
                       f"while {len(source)} cell(s) of `{PAPER_SOURCE}` moved "
                       f"({', '.join(sorted(set(source['method'])))})"}]


def _medians(release: Release, dataset: str) -> tuple[list[str], dict[str, dict[str, float]]]:
    table = release.table(PAPER_SOURCE)
    subset = table[table["dataset"] == dataset]
    methods = [m for m in METHODS if m in set(subset["method"])]
    return methods, {m: dict(zip(subset.loc[subset["method"] == m, "metric"],
                                 subset.loc[subset["method"] == m, "median"]))
                     for m in methods}


def ranking_both_ways(old: Release, new: Release) -> pd.DataFrame:
    """Σ per dataset and method from each release's medians under each release's rule, so
    that a change of Σ is seen to come from the rule, the medians, or both; ``old_rule`` and
    ``new_rule`` name the scored metrics each rule sums on the dataset (joined by
    :data:`RULE_SEPARATOR`), so the report can say the rules without reading params."""
    rows = []
    for dataset in _main_datasets(old, new):
        rules = {tag: list(scored_keys(dataset, release.ranking))
                 for tag, release in (("old", old), ("new", new))}
        totals = {}
        for side, release in (("old", old), ("new", new)):
            methods, medians = _medians(release, dataset)
            for rule, keys in rules.items():
                points = composite_points(medians, methods, keys)
                for method in methods:
                    totals.setdefault(method, {})[f"{side}_medians_{rule}_rule"] = \
                        points[method]["total"]
        for method, sigma in totals.items():
            rule_moved = sigma.get("old_medians_old_rule") != sigma.get("old_medians_new_rule")
            medians_moved = sigma.get("old_medians_new_rule") != sigma.get("new_medians_new_rule")
            cause = {(False, False): "unchanged", (True, False): "new rule",
                     (False, True): "new medians", (True, True): "new rule and new medians"}
            rows.append({"dataset": dataset, "method": method, **sigma,
                         "cause": cause[(rule_moved, medians_moved)],
                         **{f"{rule}_rule": RULE_SEPARATOR.join(keys)
                            for rule, keys in rules.items()}})
    return pd.DataFrame(rows, columns=RANKING_COLUMNS)
