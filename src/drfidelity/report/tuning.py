"""Does tuning change who leads? Each studied method's knob at the benchmark's default and at
its best value on the study's grid, per dataset, against the default leader of near ρ.

Per dataset, because a DR user tunes a knob on the data at hand, and the best value differs
from one dataset to the next. Near ρ, because the studied knobs (perplexity, number of
neighbours, regularisation weight) set the neighbourhood scale a map keeps, which is what near ρ
scores. The study is found among the report's tables by its columns
(:func:`drfidelity.report.claims.tuning_table`); the scores at default are the main run's
medians, the ones the ranking tables show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from drfidelity.registry import METHODS
from drfidelity.report.claims import leaders, medians
from drfidelity.report.latex import escape, macro, number, wrapped_table
from drfidelity.report.tables import TRUTH_PAIRS, Cell, Column, RankingTable, fixed

#: the score compared: near ρ against the ambient data (the ranking's near column)
METRIC = TRUTH_PAIRS[1][1]
COLUMNS = [Column("method", "method", "method", "plain"),
           Column("knob", "knob", "setting", "plain"),
           Column("default", "default", "setting", "plain"),
           Column("at_default", "near ρ at default", "near ρ", "plain"),
           Column("best", "best value", "setting", "plain"),
           Column("at_best", "near ρ at best", "near ρ", "plain"),
           Column("verdict", "against the default leader", "verdict", "plain")]
#: the table's column widths in the paper (cm), after the dataset's
_TEX_WIDTHS = (1.3, 1.6, 1.1, 1.3, 1.1, 1.3, 6.4)


@dataclass(frozen=True)
class Tuned:
    """One method's knob on one dataset: its default and best value and near ρ at each, the
    dataset's leader of near ρ at default and when every studied method is tuned, and the
    verdict against the default leader."""

    dataset: str
    method: str
    knob: str
    default: float
    at_default: float
    best: float
    at_best: float
    leader: str
    tuned_leader: str
    verdict: str


def _default(params, method: str, knob: str) -> float:
    """The benchmark's setting of ``knob`` (the method's default, or params.yaml's)."""
    return float(METHODS[method].settings(params.method_params.get(method, {}))[knob])


def _verdict(method: str, at_best: float, leader: str, lead: float, lead_best: float,
             tuned_leader: str) -> str:
    """Whether ``method`` at its best beats the default leader (at its default ``lead``; at
    its own best ``lead_best``, its default when it is not studied)."""
    if method == leader:
        return ("default leader, and still leads when every studied method is tuned"
                if tuned_leader == leader else f"default leader; tuned {tuned_leader} leads")
    if at_best > lead_best:
        return f"beats {leader} even at {leader}'s best ({fixed(lead_best)})"
    if at_best > lead:
        return f"beats {leader}'s default ({fixed(lead)}), not its best ({fixed(lead_best)})"
    return f"stays below {leader}'s default ({fixed(lead)})"


def tuning(study: pd.DataFrame, aggregated: pd.DataFrame, params) -> list[Tuned]:
    """Per dataset of ``study`` (the aggregated hyper-parameter table, datasets in its order)
    and method (canonical order): its knob at default and at its best near ρ, and the
    verdict."""
    rows = study[study["metric"] == METRIC]
    found = []
    for dataset, of_dataset in rows.groupby("dataset", sort=False):
        main = medians(aggregated, dataset)
        near = {m: v for m, v in main.items() if METRIC in v}
        (leader,) = leaders(near, METRIC, ())
        best = {m: of_dataset.loc[of_dataset.loc[of_dataset["method"] == m, "median"].idxmax()]
                for m in METHODS if m in set(of_dataset["method"])}
        reach = {m: max(v[METRIC], best[m]["median"]) if m in best else v[METRIC]
                 for m, v in near.items()}
        tuned_leader = max(reach, key=reach.get)
        for method, top in best.items():
            found.append(Tuned(
                dataset, method, str(top["knob"]), _default(params, method, str(top["knob"])),
                near[method][METRIC], float(top["value"]), float(top["median"]), leader,
                tuned_leader, _verdict(method, float(top["median"]), leader, near[leader][METRIC],
                         reach[leader], tuned_leader)))
    return found


def tuning_table(found: Sequence[Tuned]) -> RankingTable:
    """The rows as a table (label ``tab:tuning`` in the paper), one per dataset and
    method."""
    table = RankingTable("tuning", COLUMNS, label="dataset")
    for t in found:
        table.rows.append((t.dataset, [
            Cell(t.method), Cell(f"`{t.knob}`"), Cell(f"{t.default:g}"), Cell(fixed(t.at_default)),
            Cell(f"{t.best:g}"), Cell(fixed(t.at_best)), Cell(t.verdict)]))
    return table


def tuning_latex(found: Sequence[Tuned]) -> str:
    """``paper/tables/hyperparams.tex``."""
    caption = ("Each studied method's knob at the benchmark's default and at its best value "
               r"on the grid, per dataset, scored by near $\rho$ against the ambient data "
               r"(Section~\ref{sec:tuning}); the verdict compares it with the dataset's "
               r"default leader of near $\rho$. From \texttt{results/metrics\_aggregated.csv} "
               "and the hyper-parameter study's aggregated table.")
    return wrapped_table(tuning_table(found), caption=caption, widths=_TEX_WIDTHS)


def overtaken(found: Sequence[Tuned]) -> dict[str, Tuned]:
    """Per dataset whose default leader of near ρ loses the lead when every studied method
    takes its best setting: the row of the method that then leads."""
    return {t.dataset: t for t in found if t.method == t.tuned_leader != t.leader}


def tuning_macros(found: Sequence[Tuned]) -> list[str]:
    """``\\TuningDatasets`` (datasets studied), ``\\TuningOvertakenCount`` and
    ``\\TuningOvertaken`` (per such dataset: who leads tuned, at which setting and score)."""
    taken = overtaken(found)
    text = "; ".join(f"{escape(d)}: {escape(t.method)} at \\texttt{{{escape(t.knob)}}} "
                     f"{t.best:g} (${fixed(t.at_best)}$)" for d, t in taken.items())
    return [macro("TuningDatasets", number(len({t.dataset for t in found}))),
            macro("TuningOvertakenCount", number(len(taken))),
            macro("TuningOvertaken", text or "none")]
