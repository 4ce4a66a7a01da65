"""Ranking tables as GitHub-flavoured Markdown (REPORT.md)."""

from __future__ import annotations

from typing import Sequence

from drfidelity.report.tables import RankingTable

#: bold means best and nothing else: an outright failure is marked by ⚠ alone (it was bold
#: too, so a bold cell could be either)
MARKDOWN_MARKS = {"best": "**{}**", "worst": "*{}*", "crit": "⚠ {}"}


def markdown_table(table: RankingTable) -> str:
    """The two-row header of the HTML table becomes an italic "Column groups" line; a cell
    spanning several columns is followed by empty cells (GFM has no colspan)."""
    groups = " · ".join(f"{name} [{n}]" for name, n in table.groups)
    header = [table.label] + [c.header for c in table.columns]
    lines = [f"*Column groups: {groups}*", "", _row(header), _row(["---"] * len(header))]
    for method, cells in table.rows:
        texts = []
        for c in cells:
            texts.append(MARKDOWN_MARKS[c.mark].format(c.text) if c.mark and c.text != "—"
                         else c.text)
            texts += [""] * (c.span - 1)
        lines.append(_row([method] + texts))
    return "\n".join(lines)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
