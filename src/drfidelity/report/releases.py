"""The report's section on what moved between the previous project's releases, from the
``release_diff`` stage's tables (:mod:`drfidelity.release_diff`)."""

from __future__ import annotations

import pandas as pd

from drfidelity.report.document import Block, Bullets, Heading, Para, Table
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


def cause_table(summary: pd.DataFrame) -> RankingTable:
    """Per results table: its moved cells by cause, its rows published by one release only,
    and the cells of columns only the newer release has."""
    group = "Cells that moved, by cause"
    columns = ([Column(c, c, group, "plain") for c in CAUSES]
               + [Column(ONE_RELEASE, "rows", "Published by one release only", "plain"),
                  Column(NEW_COLUMNS, "cells", "Columns new in the later release", "plain")])
    kind = summary["cause"].where(summary["cause"].isin(CAUSES), NEW_COLUMNS)
    counts = summary.assign(kind=kind).groupby(["table", "kind"], sort=False)["cells"].sum()
    one_side = summary.groupby("table", sort=False)["rows"].sum()
    table = RankingTable("release_diff", columns, label="results table")
    for name in dict.fromkeys(summary["table"]):
        cells = [int(counts.get((name, c), 0)) for c in (*CAUSES, NEW_COLUMNS)]
        values = [*cells[:3], int(one_side[name]), cells[3]]
        table.rows.append((f"`{name}`", [Cell(str(v) if v else "·") for v in values]))
    return table


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
        Table(cause_table(summary))]
    ranking = tables["ranking"]
    moved_sigma = ranking[ranking["cause"] != "unchanged"]
    if len(moved_sigma):
        blocks += [Para(
            f"The composite Σ moved on {', '.join(sorted(set(moved_sigma['dataset'])))} only, "
            f"recomputed from each release's medians under each release's rule (`{new}`'s "
            f"rule: `ranking` in `releases/{new}/params.yaml`):"),
            Table(ranking_table(ranking, old, new))]
    flags = tables["inconsistencies"]
    if len(flags):
        blocks += [Para("What the two releases publish that cannot all hold at once:"),
                   Bullets(tuple(f"**{r.kind}** (`{r.table}`): {r.detail}"
                                 for r in flags.itertuples(index=False)))]
    return blocks
