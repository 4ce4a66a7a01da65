"""LaTeX paper tables (booktabs) rendered from the ranking-table model (benchmark.md §5.6).

Unlike the previous release, every method row is kept (it silently dropped the 8th, §9.1).
"""

from __future__ import annotations

import re

from drfidelity.report.tables import RankingTable

HEADERS = {
    "full pts": "full", "near pts": "near", "outlier pts": "outl.", "Σ": r"$\Sigma$",
    "full · global": r"full $\rho$ (global)", "near · first-mode band": r"near $\rho$ (first-mode)",
    "tight-cluster scale ×": r"scale $\times$", "recall@15": "recall@15", "trust@15": "trust@15",
    "continuity@15": "cont.@15", "outlier ρ": r"outlier $\rho$",
}
_CI = re.compile(r" \[(.+), (.+)\]$")


def latex_cell(text: str, mark: str | None) -> str:
    """Bold best, italic worst, a dagger for failures (bold dropped); CIs in script size."""
    if text == "—":
        return "---"
    body = _CI.sub(r" {\\scriptsize[\1, \2]}", text)
    if mark == "best":
        return rf"\textbf{{{body}}}"
    if mark == "worst":
        return rf"\textit{{{body}}}"
    if mark == "crit":
        return rf"{body}\,\textsuperscript{{\dag}}"
    return body


def latex_table(table: RankingTable, *, title: str, caption_note: str) -> str:
    spec = "l" + "c" * len(table.columns)
    header = " & ".join(["method"] + [HEADERS[c.header] for c in table.columns]) + r" \\"
    body = [" & ".join([method] + [latex_cell(c.text, c.mark) for c in cells]) + r" \\"
            for method, cells in table.rows]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{title}: distance-fidelity ranking. {caption_note}}}",
        rf"\label{{tab:{table.dataset}}}",
        r"\resizebox{\textwidth}{!}{%",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        header,
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}}",
        r"\end{table}",
        "",
    ]
    return "\n".join(lines)
