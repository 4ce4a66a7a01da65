"""REPORT.md: one ranking table per dataset plus the run's configuration and notes."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from drfidelity.report.tables import RankingTable

MARKDOWN_MARKS = {"best": "**{}**", "worst": "*{}*", "crit": "⚠ **{}**"}


def markdown_table(table: RankingTable) -> str:
    groups = " · ".join(f"{name} [{n}]" for name, n in table.groups)
    header = ["method"] + [c.header for c in table.columns]
    lines = [f"*Column groups: {groups}*", "", _row(header), _row(["---"] * len(header))]
    for method, cells in table.rows:
        texts = [MARKDOWN_MARKS[c.mark].format(c.text) if c.mark and c.text != "—" else c.text
                 for c in cells]
        lines.append(_row([method] + texts))
    return "\n".join(lines)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def render_report(*, title: str, config_lines: Sequence[str], sections: Sequence[tuple[str, str, RankingTable]],
                  skipped: pd.DataFrame, reproduce: Sequence[str]) -> str:
    """Assemble REPORT.md. ``sections`` are (heading, blurb, table) per dataset."""
    out = [f"# {title}", ""]
    out += [f"- {line}" for line in config_lines]
    out += ["", "Scored columns earn 5/4/3/2/1 points for places 1–5 (ties keep canonical method "
            "order); rows are sorted by Σ, then full ρ. **bold** = best, *italic* = worst, "
            "⚠ = outright failure (near or outlier ρ < 0, tightest cluster crushed > 5×). "
            "Values are medians over seeds with 95% bootstrap CIs of the median in brackets "
            "(shown when runs > 1 and the CI is at least 0.0005 wide).", ""]
    if len(skipped):
        out += ["> **Methods not run here:**"]
        for row in skipped.itertuples():
            out.append(f"> - {row.method} on {row.dataset}: {row.reason}")
        out.append("")
    for heading, blurb, table in sections:
        out += [f"## {heading}", "", blurb, "", markdown_table(table), ""]
    out += ["## Reproduce", "", "```sh"] + list(reproduce) + ["```", ""]
    return "\n".join(out)
