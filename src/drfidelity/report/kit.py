"""The report's building blocks for a study's section, handed to its ``section``,
``paper_tables`` and ``macros`` as :data:`KIT` (a :class:`~drfidelity.studies.spec.ReportKit`):
the document blocks, the table cells and marks, the LaTeX helpers, and readers of an
aggregated long table (rows ``method, [group...,] metric, median, ci_lo, ci_hi, n_runs``).

A study module never imports this module (it gets it as an argument), so editing the report
reruns only the stages that draw or write the report.
"""

from __future__ import annotations

import math
from dataclasses import fields

import pandas as pd

from drfidelity.core.layout import STUDIES
from drfidelity.ordering import ordered
from drfidelity.report.document import Block, Figure, Heading, Para, Quote, Table
from drfidelity.report.latex import escape, latex_tabular, macro
from drfidelity.report.tables import (Cell, Column, RankingTable, column_marks, fixed,
                                      format_value, interval_words)
from drfidelity.studies.spec import ReportKit


def not_built(title: str, producer: str, *names: str, folder: str = f"results/{STUDIES}"
              ) -> list[Block]:
    """The one-line note of a section whose result tables ``names`` (in ``folder``: a
    study's, unless the main benchmark's ``results``) are absent (written by ``producer``,
    e.g. "the aggregate stage")."""
    files = ", ".join(f"`{folder}/{n}.csv`" for n in names)
    return [Heading(2, title),
            Quote(f"Not built in this run: {files} absent (written by {producer}).")]


def stats(long: pd.DataFrame, method: str, metric: str, **where):
    """The row of ``method``'s ``metric`` (where the group columns equal ``where``), or None."""
    rows = long[(long["method"] == method) & (long["metric"] == metric)]
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows.iloc[0] if len(rows) else None


def num(value: float | None, spec: str) -> str:
    """A fact formatted, or "—" where the figure could not measure it (``None``)."""
    return "—" if value is None else format(value, spec)


def cell_text(row) -> str:
    return "—" if row is None else format_value(row["median"], row["ci_lo"], row["ci_hi"],
                                                int(row["n_runs"]))


def median(long: pd.DataFrame, method: str, metric: str, **where) -> float:
    row = stats(long, method, metric, **where)
    return math.nan if row is None else float(row["median"])


def filled(name: str, columns: list[Column], rows: dict[str, list[Cell]]) -> RankingTable:
    table = RankingTable(name, columns)
    table.rows = list(rows.items())
    return table


def marked(name: str, columns: list[Column], methods: list[str], values: dict, texts: dict
           ) -> RankingTable:
    """A table whose cells are marked per column by :func:`column_marks`."""
    rows = {m: [] for m in methods}
    for column in columns:
        marks = column_marks(column, {m: values[m][column.key] for m in methods})
        for m in methods:
            rows[m].append(Cell(texts[m][column.key], marks.get(m)))
    return filled(name, columns, rows)


def leader(long: pd.DataFrame, metric: str, **where) -> tuple[str | None, float]:
    """The method with the highest median of ``metric`` (canonical order on ties)."""
    values = {m: median(long, m, metric, **where) for m in ordered(long["method"])}
    finite = {m: v for m, v in values.items() if not math.isnan(v)}
    if not finite:
        return None, math.nan
    best = max(finite, key=finite.get)
    return best, finite[best]


def missing(studies, key: str) -> str:
    """" Not drawn: toorPIA (reason)." for the methods figure ``key`` lacks."""
    skipped = studies.fact(key).get("skipped", {})
    return (" Not drawn: " + "; ".join(f"{m} ({r})" for m, r in skipped.items()) + "."
            if skipped else "")


def new_note(studies, key: str) -> str:
    """The caption's note on the methods figure ``key`` draws dashed (new in this study)."""
    new = studies.fact(key).get("new_methods", [])
    return (f" Dashed: {', '.join(new)}, which the previous release did not run here."
            if new else "")


#: what a study's ``section``, ``paper_tables`` and ``macros`` are handed: each field is what
#: this module defines or imports under its name (a field it lacks fails at import)
KIT = ReportKit(**{field.name: globals()[field.name] for field in fields(ReportKit)})
