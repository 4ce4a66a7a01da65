"""The scale study in the report: its section (the figure's caption, the fitted exponents) and
its paper macros; the figure is drawn by :mod:`drfidelity.figures.scale`.

Both come from ``results/scale_runs.csv`` and ``results/scale_exponents.csv`` (the frozen
``scale`` stage, :mod:`drfidelity.scale.study`); where the machine facts are known
(``figures/studies/facts.json``) the section names the CPU they were measured on.
"""

from __future__ import annotations

import pandas as pd

from drfidelity.scale import TWICE_BELOW_S, WARMUP_N
from drfidelity.report.document import Block, Heading, Para, Quote, Table
from drfidelity.report.latex import escape, macro
from drfidelity.report.tables import Cell, Column, RankingTable

#: the study's tables the report reads (``results/<name>.csv``; absent until it has run)
TABLES = ("scale_runs", "scale_exponents")
TITLE = "Scale: cost against N"
CAPTION = ("**Scale** (log-log): wall time of one call and peak RSS of its process against N; "
           "dashed = the metric engine. Read: a line's slope is its exponent; a line that stops "
           "early is a method that did not finish the next size within the budget (table).")


def _exponent(exponents: pd.DataFrame, subject: str, quantity: str) -> str:
    rows = exponents[(exponents["subject"] == subject) & (exponents["quantity"] == quantity)]
    if rows.empty or pd.isna(rows["exponent"].iloc[0]):
        return "—"
    row = rows.iloc[0]
    return f"{row['exponent']:.2f} (N {int(row['n_min'])}–{int(row['n_max'])})"


def _stopped(rows: pd.DataFrame) -> str:
    """What happened at the sizes a subject did not finish (its first such row)."""
    rest = rows[rows["status"] != "ok"]
    if rest.empty:
        return ""
    first = rest.iloc[0]
    return f"N={int(first['n'])}: {first['status']} ({first['note']})"


def exponent_table(runs: pd.DataFrame, exponents: pd.DataFrame) -> RankingTable:
    """Per subject: the largest N it finished, its time and peak RSS there, and the fitted
    exponents of wall time and working memory."""
    largest, fitted = "at the largest N finished", "fitted exponent (cost ∝ N^exponent)"
    columns = [Column("n", "N", largest, "plain"),
               Column("wall", "wall s", largest, "plain"),
               Column("rss", "peak RSS MiB", largest, "plain"),
               Column("time_exp", "wall time", fitted, "plain"),
               Column("memory_exp", "working memory", fitted, "plain"),
               Column("stopped", "larger N", "what stopped it", "plain")]
    table = RankingTable("scale", columns)
    for subject in dict.fromkeys(runs["subject"]):
        rows = runs[runs["subject"] == subject]
        done = rows[rows["status"] == "ok"]
        if done.empty:
            first = rows.iloc[0]
            cells = [Cell(f"{first['status']}: {first['note']}", span=len(columns))]
        else:
            last = done.iloc[-1]
            cells = [Cell(str(int(last["n"]))), Cell(f"{last['wall_s']:.2f}"),
                     Cell(f"{last['peak_rss_mib']:.0f}"),
                     Cell(_exponent(exponents, subject, "wall time")),
                     Cell(_exponent(exponents, subject, "working memory")),
                     Cell(_stopped(rows) or "—")]
        table.rows.append((subject, cells))
    return table


def _fastest_growth(exponents: pd.DataFrame) -> tuple[str, float] | None:
    times = exponents[(exponents["quantity"] == "wall time") & exponents["exponent"].notna()]
    if times.empty:
        return None
    row = times.loc[times["exponent"].idxmax()]
    return str(row["subject"]), float(row["exponent"])


def scale_section(runs: pd.DataFrame | None, exponents: pd.DataFrame | None,
                  machine: dict | None, figure: list[Block]) -> list[Block]:
    """The report's scale section (a "not built" note when the study has not run)."""
    if runs is None or exponents is None:
        return [Heading(2, TITLE), Quote(
            "Not built in this run: `results/scale_runs.csv` absent (the frozen `scale` stage: "
            "`make scale`).")]
    d = int(runs["d"].iloc[0])
    sizes = sorted(int(n) for n in runs["n"].unique())
    where = (f" on {machine['cpu']} ({machine['numerics']} numerics, one thread per call)"
             if machine else "")
    blocks: list[Block] = [Heading(2, TITLE), Quote(
        f"How each method's and the metric engine's cost grows with N (D = {d}, one seed, "
        f"N = {', '.join(map(str, sizes))}), measured{where}. Each measurement is a fresh "
        f"process: a warm-up call on {WARMUP_N} points first (imports, numba compilation), "
        f"then the timed call, run twice when it takes under {TWICE_BELOW_S:g} s (the faster "
        "counts: a one-off cost the warm-up missed is not growth with N). The metric "
        "engine's call is `Reference(X)` plus one `score(Y)` of the whole canonical column "
        "set. Exponents are least-squares slopes of log cost on log N "
        "(cost ∝ N^exponent); working memory is the peak RSS minus the peak before the call.")]
    blocks += figure
    blocks.append(Table(exponent_table(runs, exponents)))
    growth = _fastest_growth(exponents)
    done = runs[runs["status"] == "ok"]
    largest = done[done["n"] == done["n"].max()]
    if growth is not None and not largest.empty:
        slowest = largest.loc[largest["wall_s"].idxmax()]
        blocks.append(Para(
            f"Fastest-growing time: {growth[0]} (N^{growth[1]:.2f}). At N = "
            f"{int(slowest['n'])} the slowest call is {slowest['subject']} "
            f"({slowest['wall_s']:.0f} s); the largest peak RSS there is "
            f"{largest['peak_rss_mib'].max() / 1024:.2f} GiB. Beyond one machine, the same "
            "study runs on a Dask cluster (`DRFIDELITY_SCHEDULER`, README)."))
    return blocks


def scale_macros(runs: pd.DataFrame | None, exponents: pd.DataFrame | None) -> list[str]:
    """The paper's scale macros: the sizes and D measured (text-mode numbers) and every
    subject's fitted time exponent ("---" before the study has run, so the paper typesets
    either way)."""
    if runs is None or exponents is None:
        return [macro("ScaleSizes", "---"), macro("ScaleDim", "---"),
                macro("ScaleExponents", "---")]
    times = exponents[(exponents["quantity"] == "wall time") & exponents["exponent"].notna()]
    text = ", ".join(f"{escape(r.subject)} ${r.exponent:.2f}$" for r in times.itertuples())
    sizes = sorted(int(n) for n in runs["n"].unique())
    return [macro("ScaleSizes", f"{sizes[0]}--{sizes[-1]}"),
            macro("ScaleDim", str(int(runs["d"].iloc[0]))),
            macro("ScaleExponents", text or "none")]
