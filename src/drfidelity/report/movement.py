"""What moved between the frozen ranking and this configuration's, and which change moved it.

The frozen ranking is the checkout's: its methods, seeds and rule, from its own runs. From
there this configuration's ranking is reached one change at a time, each ranking recomputed
from runs by the report's rule (:func:`drfidelity.report.ranking.row_orders`): the frozen
configuration's runs as scored here (a difference there means the inputs or settings differ),
then the methods added or left out, the seeds added or left out, and each column the rule adds
or drops, one column at a time. A method whose place differs between the two ends is
attributed to the changes that moved it, each with its places before and after, and who passed
it or whom it passed. So an attribution is read off the rankings, never written by hand, and
the changes together always account for the whole move.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from drfidelity.registry import METHODS
from drfidelity.report.document import Block, Heading, Para, Table
from drfidelity.report.ranking import row_orders, scored_keys
from drfidelity.report.tables import Cell, Column, RankingTable, and_list

HEADING = "What moved from the frozen ranking"
#: the step of the frozen configuration's runs scored by this configuration's score stage
RESCORED = "the frozen configuration's runs as scored here (inputs or settings differ)"

COLUMNS = [Column("method", "method", "method", "plain"),
           Column("frozen", "frozen place", "place", "plain"),
           Column("here", "place here", "place", "plain"),
           Column("why", "what moved it (place before → after)", "attribution", "plain")]


@dataclass(frozen=True)
class Rule:
    """What decides a ranking: the methods ranked, the seeds 0..seeds-1 of the stochastic
    ones, and the columns each dataset adds (params ``ranking``)."""

    methods: tuple[str, ...]
    seeds: int
    ranking: Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class Step:
    """One change on the way from the frozen ranking, and each dataset's row order after it."""

    change: str
    orders: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Move:
    """One change that moved ``method`` on ``dataset``: its places (1-based) before and after,
    the methods that passed it and those it passed."""

    change: str
    before: int
    after: int
    passed_by: tuple[str, ...]
    passed: tuple[str, ...]


@dataclass(frozen=True)
class Moved:
    """A method whose place on ``dataset`` differs between the frozen ranking and this one."""

    dataset: str
    method: str
    frozen: int
    here: int
    moves: tuple[Move, ...]


def _seeds(seeds: int) -> str:
    return f"seeds 0–{seeds - 1}" if seeds > 1 else "seed 0"


def _ranked(runs: pd.DataFrame, datasets: Sequence[str], rule: Rule) -> dict:
    kept = runs[runs["method"].isin(rule.methods) & (runs["seed"] < rule.seeds)]
    return row_orders(kept, datasets, rule.ranking, [m for m in METHODS if m in rule.methods])


def steps(frozen_runs: pd.DataFrame, frozen: Rule, runs: pd.DataFrame, here: Rule,
          datasets: Sequence[str]) -> list[Step]:
    """The rankings from ``frozen`` (its own runs) to ``here`` (this configuration's runs),
    one change at a time. The frozen configuration's runs as scored here come second only
    where they rank otherwise than its own (the inputs or settings differ); a part of the
    configuration that does not differ makes no step."""
    found = [Step("the frozen ranking", _ranked(frozen_runs, datasets, frozen))]
    rescored = _ranked(runs, datasets, frozen)
    if rescored != found[0].orders:
        found.append(Step(RESCORED, rescored))
    rule = frozen
    added = [m for m in here.methods if m not in frozen.methods]
    dropped = [m for m in frozen.methods if m not in here.methods]
    if added or dropped:
        rule = Rule(here.methods, rule.seeds, rule.ranking)
        change = " and ".join(part for part in (
            f"{and_list(added)} added" if added else "",
            f"{and_list(dropped)} left out" if dropped else "") if part)
        found.append(Step(change, _ranked(runs, datasets, rule)))
    if here.seeds != frozen.seeds:
        rule = Rule(rule.methods, here.seeds, rule.ranking)
        found.append(Step(f"{_seeds(here.seeds)} for the stochastic methods "
                          f"({_seeds(frozen.seeds)} frozen)", _ranked(runs, datasets, rule)))
    for change, ranking in _rule_changes(frozen.ranking, here.ranking, datasets):
        rule = Rule(rule.methods, rule.seeds, ranking)
        found.append(Step(change, _ranked(runs, datasets, rule)))
    return found


def _rule_changes(frozen: Mapping[str, Sequence[str]], here: Mapping[str, Sequence[str]],
                  datasets: Sequence[str]) -> list[tuple[str, dict[str, tuple[str, ...]]]]:
    """(change, rule after it) per column the rule adds, then per column it drops, each on
    every dataset whose rule differs in it; a column is named by its points header."""
    def columns(rule, dataset):
        return scored_keys(dataset, rule)

    added = {c: name for d in datasets for c, name in columns(here, d).items()
             if c not in columns(frozen, d)}
    dropped = {c: name for d in datasets for c, name in columns(frozen, d).items()
               if c not in columns(here, d)}
    rule = {d: tuple(frozen.get(d, ())) for d in datasets}
    found = []
    for column, name in added.items():
        on = [d for d in datasets if column in columns(here, d)
              and column not in columns(rule, d)]
        for dataset in on:
            rule[dataset] = (*rule[dataset], column)
        found.append((f"{_column(name)} ranked{_where(on, datasets)}", dict(rule)))
    for column, name in dropped.items():
        on = [d for d in datasets if column in columns(rule, d)
              and column not in columns(here, d)]
        for dataset in on:
            rule[dataset] = tuple(c for c in rule[dataset] if c != column)
        found.append((f"{_column(name)} no longer ranked{_where(on, datasets)}", dict(rule)))
    return found


def _column(points: str) -> str:
    """A scored column in prose, from its points header ("near/truth pts" -> "near/truth ρ")."""
    return points.removesuffix(" pts") + " ρ"


def _where(on: Sequence[str], datasets: Sequence[str]) -> str:
    return "" if list(on) == list(datasets) else f" on {and_list(on)}"


def moved(found: Sequence[Step], datasets: Sequence[str]) -> list[Moved]:
    """Per dataset, each method ranked at both ends whose place differs, with the changes that
    moved it."""
    result = []
    for dataset in datasets:
        first, last = found[0].orders[dataset], found[-1].orders[dataset]
        for method in last:
            if method not in first or first.index(method) == last.index(method):
                continue
            moves = []
            for before, after in zip(found, found[1:]):
                old, new = before.orders[dataset], after.orders[dataset]
                if method in old and method in new and old.index(method) != new.index(method):
                    above_old = set(old[:old.index(method)])
                    above_new = set(new[:new.index(method)])
                    moves.append(Move(after.change, old.index(method) + 1,
                                      new.index(method) + 1,
                                      tuple(m for m in new if m in above_new - above_old),
                                      tuple(m for m in old if m in above_old - above_new)))
            result.append(Moved(dataset, method, first.index(method) + 1,
                                last.index(method) + 1, tuple(moves)))
    return result


def _words(move: Move) -> str:
    others = []
    if move.passed_by:
        others.append(f"passed by {and_list(move.passed_by)}")
    if move.passed:
        others.append(f"passes {and_list(move.passed)}")
    return f"{move.change}: {move.before} → {move.after} ({'; '.join(others)})"


def movement_table(found: Sequence[Moved]) -> RankingTable:
    """One row per moved place: dataset, method, its two places and the changes that moved
    it."""
    table = RankingTable("movement", COLUMNS, label="dataset")
    for m in found:
        table.rows.append((m.dataset, [Cell(m.method), Cell(str(m.frozen)), Cell(str(m.here)),
                                       Cell("; ".join(_words(move) for move in m.moves))]))
    return table


def movement_section(found: Sequence[Step], places: Sequence[Moved], frozen: Rule,
                     checkout: str) -> list[Block]:
    """The section: the frozen ranking it starts from, the changes in order, and a row per
    moved place."""
    total = sum(len([m for m in order if m in found[-1].orders[d]])
                for d, order in found[0].orders.items())
    text = (f"The frozen ranking is the checkout's ([REPORT.md]({checkout}/REPORT.md): "
            f"{and_list(frozen.methods)}; {_seeds(frozen.seeds)} of the stochastic methods; "
            "its rule). This ranking is reached from it one change at a time, each ranking "
            "recomputed from the runs: " + ("; then ".join(s.change for s in found[1:]) or "none")
            + ". Every method runs at its defaults on the same unrotated inputs in both, so "
            "no place here moves by tuning or rotation; the studies ask those questions. "
            f"Of the {total} places of methods ranked in both, {len(places)} moved. Each row "
            "names the changes that moved it, its place before → after each, and who passed "
            "it or whom it passed.")
    return [Heading(2, HEADING), Para(text), Table(movement_table(places))]
