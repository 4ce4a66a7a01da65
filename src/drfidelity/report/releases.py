"""The report's section on what moved between the previous project's releases, from the
``release_diff`` stage's tables (:mod:`drfidelity.crosscheck.release_diff`), and the pointer to it that a
release's own report carries (the stage runs at the checkout's root only, where every release
is imported)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from drfidelity.core.layout import release_params_path, report_paths
from drfidelity.datasets.registry import DATASETS
from drfidelity.crosscheck.release_diff import RULE_SEPARATOR, abs_moves
from drfidelity.report.document import Block, Bullets, Heading, Para, Table, slug
from drfidelity.report.ranking import SCORED
from drfidelity.report.tables import Cell, Column, RankingTable

#: the causes of a moved cell, in the order the section's table shows them
CAUSES = ("new toorPIA maps", "new input", "no provable cause")
#: how the section's prose says each cause
BECAUSE = {"new toorPIA maps": "where toorPIA's maps behind them changed",
           "new input": "whose runs had a new input",
           "no provable cause": "with no cause the releases show"}
ONE_RELEASE = "rows in one release"
NEW_COLUMNS = "new columns"


def title(old: str, new: str) -> str:
    return f"What changed from {old} to {new}"


MOVE = "Absolute move of a moved cell"


def move_sizes(cells: pd.DataFrame) -> pd.DataFrame:
    """Per results table (index): the ``largest`` and the ``median`` absolute move of its moved
    numeric cells (NaN for a table whose moved cells are all text)."""
    moves = abs_moves(cells).groupby(cells["table"], sort=False)
    return pd.DataFrame({"largest": moves.max(), "median": moves.median()})


def _size(value: float) -> str:
    """Three significant digits, never in exponent form ("1000", "0.000939")."""
    if pd.isna(value):
        return "·"
    return np.format_float_positional(value, precision=3, unique=False, fractional=False,
                                      trim="-")


def cause_table(summary: pd.DataFrame, cells: pd.DataFrame) -> RankingTable:
    """Per results table: its moved cells by cause, how far they moved, its rows published by
    one release only, and the cells of columns only the newer release has."""
    group = "Cells that moved, by cause"
    columns = ([Column(c, c, group, "plain") for c in CAUSES]
               + [Column("largest", "largest", MOVE, "plain"),
                  Column("median", "median", MOVE, "plain"),
                  Column(ONE_RELEASE, "rows", "Published by one release only", "plain"),
                  Column(NEW_COLUMNS, "cells", "Columns new in the later release", "plain")])
    kind = summary["cause"].where(summary["cause"].isin(CAUSES), NEW_COLUMNS)
    counts = summary.assign(kind=kind).groupby(["table", "kind"], sort=False)["cells"].sum()
    one_side = summary.groupby("table", sort=False)["rows"].sum()
    sizes = move_sizes(cells)
    table = RankingTable("release_diff", columns, label="results table")
    for name in dict.fromkeys(summary["table"]):
        moved = [int(counts.get((name, c), 0)) for c in CAUSES]
        largest, median = (sizes.loc[name] if name in sizes.index else (float("nan"),) * 2)
        texts = ([str(v) if v else "·" for v in moved] + [_size(largest), _size(median)]
                 + [str(v) if v else "·" for v in (int(one_side[name]),
                                                   int(counts.get((name, NEW_COLUMNS), 0)))])
        table.rows.append((f"`{name}`", [Cell(t) for t in texts]))
    return table


def _column_words() -> dict[str, str]:
    """Scored metric -> its name in prose ("full ρ", "outlier ρ"), from its points column."""
    points = {**SCORED, **{c.metric: c.points for spec in DATASETS.values()
                           for c in (*spec.scored, *spec.rankable)}}
    return {metric: name.removesuffix(" pts") + " ρ" for metric, name in points.items()}


def _said(metrics: Sequence[str], words: dict[str, str]) -> str:
    names = [words.get(m, f"`{m}`") for m in metrics]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _per_dataset(parts: dict[str, list[str]], words: dict[str, str]) -> str:
    return "; ".join(f"{_said(m, words)} on {d}" for d, m in parts.items() if m)


def rule_sentence(ranking: pd.DataFrame, old: str, new: str) -> str:
    """Both releases' composite rules in words: the scored columns whose points a dataset's Σ
    sums under each, as the ``release_diff`` stage recorded them from each release's params
    ``ranking`` (``old_rule``, ``new_rule``)."""
    first = ranking.drop_duplicates("dataset").set_index("dataset")
    rules = {side: {d: r.split(RULE_SEPARATOR) for d, r in first[f"{side}_rule"].items()}
             for side in ("old", "new")}
    words = _column_words()
    every = [m for m in next(iter(rules["old"].values()))
             if all(m in keys for keys in rules["old"].values())]
    own = _per_dataset({d: [m for m in keys if m not in every]
                        for d, keys in rules["old"].items()}, words)
    added = _per_dataset({d: [m for m in keys if m not in rules["old"][d]]
                          for d, keys in rules["new"].items()}, words)
    dropped = _per_dataset({d: [m for m in keys if m not in rules["new"][d]]
                            for d, keys in rules["old"].items()}, words)
    change = "; ".join(part for part in (f"adds {added}" if added else "",
                                         f"drops {dropped}" if dropped else "") if part)
    where = {tag: release_params_path(Path(), tag).as_posix() for tag in (old, new)}
    return (f"Σ is the sum of a method's points over a dataset's scored columns. {old}'s rule "
            f"(`ranking` in `{where[old]}`) scores {_said(every, words)} on every dataset"
            + (f", and {own}" if own else "") + f". {new}'s rule (`ranking` in "
            f"`{where[new]}`) {change or 'is the same'}.")


def ranking_table(ranking: pd.DataFrame, old: str, new: str) -> RankingTable:
    """Σ of the datasets whose Σ moved, from either release's medians under either rule."""
    group = "Composite Σ"
    columns = [Column("dataset", "dataset", "Input", "plain"),
               Column("old_medians_old_rule", f"{old}", group, "plain"),
               Column("old_medians_new_rule", f"{old} medians, {new} rule", group, "plain"),
               Column("new_medians_new_rule", f"{new}", group, "plain"),
               Column("cause", "moved by", "Cause", "plain")]
    table = RankingTable("release_ranking", columns)
    for row in ranking[ranking["cause"] != "unchanged"].itertuples(index=False):
        table.rows.append((row.method, [Cell(str(getattr(row, c.key))) for c in columns]))
    return table


def release_section(tables: dict[str, pd.DataFrame] | None, old: str, new: str
                    ) -> list[Block]:
    """The section, or a one-line note when the stage's tables are absent or empty (a
    release's imports not checked out)."""
    heading = Heading(2, title(old, new))
    if tables is None or tables["summary"].empty:
        return [heading, Para(f"Not built: the `release_diff` stage needs both releases' "
                              "imports (`python tools/imports.py`).")]
    summary, cells = tables["summary"], tables["cells"]
    by_cause = cells["cause"].value_counts()
    moved = ", ".join(f"{int(by_cause.get(c, 0))} {BECAUSE[c]}" for c in CAUSES)
    deterministic_main = cells[cells["table"].str.startswith("metrics_")]
    blocks: list[Block] = [heading, Para(
        f"The previous project regenerated its tables in place when it released {new}, so "
        f"neither release's repository says what moved. Both are imported here (`{old}` at "
        f"the upstream paths, `{new}` below `releases/{new}/`) and the `release_diff` stage "
        f"compares their tables cell by cell, with the tolerances of our comparison with "
        f"{old}'s tables. "
        f"{len(cells)} cells moved: {moved}. In the main tables only "
        f"{', '.join(sorted(set(deterministic_main['method']))) or 'no method'} moved. "
        "Every cell, with both values and its cause, is in `results/release_diff/`."),
        Para("Per results table, the cells that moved by cause, with the largest and the median "
             "absolute move of its moved numeric cells (in the units of their columns: a run's "
             "`n` moves by points), then what one release publishes alone:"),
        Table(cause_table(summary, cells))]
    ranking = tables["ranking"]
    moved_sigma = ranking[ranking["cause"] != "unchanged"]
    if len(moved_sigma):
        blocks += [Para(
            f"{rule_sentence(ranking, old, new)} The composite Σ moved on "
            f"{', '.join(sorted(set(moved_sigma['dataset'])))} only, recomputed from each "
            "release's medians under each release's rule. These are the *published* medians "
            f"of {old} and {new}, so the table below matches neither rebuilt report's Σ: ours "
            f"are computed from our own runs (this report's for {old}, the release report's "
            f"for {new}):"),
            Table(ranking_table(ranking, old, new))]
    flags = tables["inconsistencies"]
    if len(flags):
        blocks += [Para("What the two releases publish that cannot all hold at once:"),
                   Bullets(tuple(f"**{r.kind}** (`{r.table}`): {r.detail}"
                                 for r in flags.itertuples(index=False)))]
    return blocks


def release_pointer(old: str, new: str, checkout: str) -> list[Block]:
    """A release's report: the section's title and a link to it in the report of the
    checkout's root (``checkout``: that root, relative to the release's), where the
    ``release_diff`` stage runs."""
    heading = title(old, new)
    markdown, _ = report_paths(Path(checkout))
    report = f"{markdown.as_posix()}#{slug(heading)}"
    return [Heading(2, heading), Para(
        "What moved between the two releases' published tables, cell by cell and why, is told "
        "where both releases are imported: the `release_diff` stage runs at the checkout's "
        f"root, and the section is [{heading} in the root report]({report}).")]
