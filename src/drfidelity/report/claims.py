"""The published release's claims, each checked against this build and against three robustness
probes.

A claim is one of the leaders of the published ranking tables: per dataset, the method(s) with
the highest composite Σ, the best full ρ and the best near ρ, found by this code's ranking rule
from the published medians. Each is then

* **reproduced** or not: the same leader here; exactly when the leader's and the runner-up's
  values are the published ones within the comparison's tolerance, within spread when each value
  that moved lies inside its published interval (a stochastic method's), moved otherwise;
* checked against **the ground truth**: the same leader when the maps are scored against the
  noise-free points rather than the noisy ambient data (Σ with both ρ columns so scored);
* checked against **one seed left out**: the same leader in every ranking with one seed of the
  stochastic methods left out (medians recomputed from the runs);
* checked against **the hyper-parameter study** (a ρ claim on a dataset it covers): the same
  leader when every studied method takes its best setting.

A reproduced claim that fails a probe is *fragile*; the table says which probe and who leads
there. Nothing here is typed: the claims come from the published tables and every verdict from
this build's results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from drfidelity.crosscheck.comparison import tolerance
from drfidelity.report.latex import escape, macro, macro_name, wrapped_table
from drfidelity.report.ranking import dataset_leaders, scored_keys
from drfidelity.report.tables import TRUTH_PAIRS, Cell, Column, RankingTable, fixed

#: (claim, the metric whose leader it names; None: the composite Σ)
KINDS = (("highest Σ", None), ("best full ρ", TRUTH_PAIRS[0][1]),
         ("best near ρ", TRUTH_PAIRS[1][1]))
#: ambient metric -> the same metric against the ground truth
TRUTH_OF = {ambient: truth for _, ambient, truth in TRUTH_PAIRS}
FRAGILE, NOT_REPRODUCED = "fragile", "not reproduced"
#: how close a reproduced claim came -> its verdict when every probe holds
VERDICTS = {"exactly": "reproduced exactly", "within spread": "reproduced within spread",
            "leader only": "leader reproduced"}
COLUMNS = [Column("claim", "claim", "the published release", "plain"),
           Column("reproduced", "reproduced here", "reproduction", "plain"),
           Column("truth", "vs the ground truth", "robustness", "plain"),
           Column("seeds", "kept, one seed left out", "robustness", "plain"),
           Column("tuned", "best hyper-parameters", "robustness", "plain"),
           Column("verdict", "verdict", "verdict", "plain")]


@dataclass(frozen=True)
class Claim:
    """One published leader and what this build says of it (texts as the table shows them)."""

    dataset: str
    claim: str
    reproduced: str
    truth: str
    seeds: str
    tuned: str
    verdict: str


def medians(aggregated: pd.DataFrame, dataset: str) -> dict[str, dict[str, float]]:
    """method -> metric -> median of ``dataset`` in an aggregated table, methods in its order."""
    rows = aggregated[aggregated["dataset"] == dataset]
    out: dict[str, dict[str, float]] = {}
    for row in rows.itertuples():
        out.setdefault(row.method, {})[row.metric] = float(row.median)
    return out


def _ordered(values: Mapping[str, Mapping[str, float]], metric: str) -> list[str]:
    """Methods with a finite value of ``metric``, best first (stable: the given order on ties)."""
    finite = [m for m in values if not math.isnan(values[m].get(metric, math.nan))]
    return sorted(finite, key=lambda m: values[m][metric], reverse=True)


def leaders(values: Mapping[str, Mapping[str, float]], metric: str | None,
            keys: Sequence[str]) -> tuple[str, ...]:
    """The leader(s) of ``metric`` (None: the composite Σ over ``keys``) in ``values``."""
    methods = list(values)
    if metric is None:
        return dataset_leaders(values, methods, keys)[0]
    ordered = _ordered(values, metric)
    return tuple(ordered[:1])


def _truth_values(values: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """``values`` with each ρ the ranking scores replaced by the same ρ against the truth."""
    return {m: {**v, **{a: v.get(t, math.nan) for a, t in TRUTH_OF.items()}}
            for m, v in values.items()}


def _lead(methods: tuple[str, ...]) -> str:
    return f"{' and '.join(methods) or 'none'} lead{'s' if len(methods) == 1 else ''}"


def _reproduction(ours: Mapping, published: Mapping, published_table: pd.DataFrame,
                  dataset: str, metric: str | None, keys: Sequence[str]) -> str:
    """How close the values deciding a claim whose leader is the same here came."""
    if metric is None:
        sigma = {name: dataset_leaders(values, list(values), keys)[2]
                 for name, values in (("ours", ours), ("published", published))}
        if sigma["ours"] == sigma["published"]:
            return "exactly (every Σ)"
        return "leader only (other Σ differ)"
    deciding = _ordered(published, metric)[:2]
    moved = [m for m in deciding
             if not abs(ours[m][metric] - published[m][metric]) <= tolerance(metric)]
    if not moved:
        return "exactly"
    outside = [m for m in moved if not _inside(published_table, dataset, m, metric,
                                               ours[m][metric])]
    if not outside:
        return "within spread"
    return "leader only (" + ", ".join(
        f"{m} {fixed(published[m][metric])} → {fixed(ours[m][metric])}" for m in outside) + ")"


def _inside(table: pd.DataFrame, dataset: str, method: str, metric: str, value: float) -> bool:
    """Whether ``value`` lies in the published interval of a method run more than once."""
    row = table[(table["dataset"] == dataset) & (table["method"] == method)
                & (table["metric"] == metric)]
    return (len(row) == 1 and int(row["n_runs"].iloc[0]) > 1
            and float(row["ci_lo"].iloc[0]) <= value <= float(row["ci_hi"].iloc[0]))


def _seed_kept(per_run: pd.DataFrame | None, dataset: str, metric: str | None,
               keys: Sequence[str], leader: tuple[str, ...]) -> tuple[int, int]:
    """(rankings that keep ``leader``, rankings) with one stochastic seed left out."""
    if per_run is None:
        return 0, 0
    runs = per_run[per_run["dataset"] == dataset]
    stochastic = runs["stochastic"].astype(bool)
    seeds = sorted(set(runs.loc[stochastic, "seed"]))
    if len(seeds) < 2:
        return 0, 0
    columns = [c for c in dict.fromkeys([*keys, "full_shepard", metric or "full_shepard"])
               if c in runs.columns]
    kept = 0
    for seed in seeds:
        left = runs[~(stochastic & (runs["seed"] == seed))]
        values = {m: left.loc[left["method"] == m, columns].median().to_dict()
                  for m in dict.fromkeys(left["method"])}
        kept += leaders(values, metric, keys) == leader
    return kept, len(seeds)


def tuning_table(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame | None:
    """The aggregated table of a study that tries each method's settings, among a report's
    study tables: the one whose rows carry a knob and its value (None: none was built)."""
    return next((table for table in tables.values()
                 if {"dataset", "method", "knob", "value", "metric", "median"} <= set(table)),
                None)


def _tuned(study: pd.DataFrame | None, ours: Mapping, dataset: str, metric: str | None,
           leader: tuple[str, ...]) -> tuple[str, bool]:
    """(text, holds) of the hyper-parameter probe: each studied method at its best setting of
    ``metric`` on ``dataset``, the others at the main run's value."""
    if study is None or metric is None:
        return "—", True
    rows = study[(study["dataset"] == dataset) & (study["metric"] == metric)]
    if rows.empty:
        return "—", True
    best = {m: (v[metric], None) for m, v in ours.items()
            if not math.isnan(v.get(metric, math.nan))}
    for method, group in rows.groupby("method", sort=False):
        top = group.loc[group["median"].idxmax()]
        if method not in best or top["median"] > best[method][0]:
            best[method] = (float(top["median"]), f"`{top['knob']}` {top['value']:g}")
    winner = max(best, key=lambda m: best[m][0])
    if (winner,) == leader:
        return "holds", True
    value, setting = best[winner]
    text = f"{winner}{' at ' + setting if setting else ''} leads ({fixed(value)}"
    if leader and leader[0] in best:
        own, own_setting = best[leader[0]]
        text += f"; {leader[0]} at best {fixed(own)}{' at ' + own_setting if own_setting else ''}"
    return text + ")", False


def claims(params, aggregated: pd.DataFrame, published: pd.DataFrame,
           per_run: pd.DataFrame | None, study: pd.DataFrame | None) -> list[Claim]:
    """The published release's claims on ``params.datasets`` (see the module).

    Parameters
    ----------
    params : Params
        The run's ``datasets`` and ranking rule ``ranking``.
    aggregated, published : DataFrame
        This build's and the published ``metrics_aggregated.csv``.
    per_run : DataFrame or None
        This build's ``metrics_per_run.csv`` (None: no seed probe).
    study : DataFrame or None
        The aggregated table of a study trying each method's settings
        (:func:`tuning_table`; None: no hyper-parameter probe).

    Returns
    -------
    list of Claim
        Per dataset, the Σ, full-ρ and near-ρ claims, in that order.
    """
    found = []
    for dataset in params.datasets:
        keys = list(scored_keys(dataset, params.ranking))
        ours, theirs = medians(aggregated, dataset), medians(published, dataset)
        if not theirs:
            continue
        for kind, metric in KINDS:
            claimed = leaders(theirs, metric, keys)
            here = leaders(ours, metric, keys)
            text = f"{' and '.join(claimed)} {'have' if len(claimed) > 1 else 'has'} the {kind}"
            truth = leaders(_truth_values(ours), metric, keys)
            kept, n = _seed_kept(per_run, dataset, metric, keys, here)
            tuned, tuned_holds = _tuned(study, ours, dataset, metric, here)
            if here != claimed:
                reproduced = f"no: {_lead(here)} here"
            else:
                reproduced = _reproduction(ours, theirs, published, dataset, metric, keys)
            probes = [truth == here, kept == n, tuned_holds]
            verdict = (NOT_REPRODUCED if here != claimed else FRAGILE if not all(probes)
                       else VERDICTS[reproduced.split(" (")[0]])
            found.append(Claim(
                dataset, text, reproduced,
                "holds" if truth == here else _lead(truth),
                f"{kept} of {n}" if n else "—", tuned, verdict))
    return found


def verdict_counts(found: Sequence[Claim]) -> dict[str, int]:
    """Verdict -> number of claims, in the order: reproduced exactly, within spread, leader
    reproduced, fragile, not reproduced (zeros left out)."""
    order = [*VERDICTS.values(), FRAGILE, NOT_REPRODUCED]
    return {v: n for v in order if (n := sum(c.verdict == v for c in found))}


def claims_table(found: Sequence[Claim]) -> RankingTable:
    """The claims as a table for REPORT and the paper; a claim not reproduced is marked as a
    failure, a fragile one as worst."""
    table = RankingTable("claims", COLUMNS, label="dataset")
    marks = {NOT_REPRODUCED: "crit", FRAGILE: "worst"}
    for claim in found:
        table.rows.append((claim.dataset, [
            Cell(claim.claim), Cell(claim.reproduced), Cell(claim.truth), Cell(claim.seeds),
            Cell(claim.tuned), Cell(claim.verdict, marks.get(claim.verdict))]))
    return table


#: the claims table's column widths in the paper (cm), after the dataset's
_TEX_WIDTHS = (3.0, 2.6, 1.9, 1.5, 3.4, 1.7)


def claims_latex(found: Sequence[Claim], release: str) -> str:
    """``paper/tables/claims.tex``: the claims table (label ``tab:claims``), in ragged
    columns."""
    caption = (f"The {escape(release)} ranking tables' leaders, checked "
               r"(Section~\ref{sec:claims}). From \texttt{results/metrics\_aggregated.csv}, "
               r"the published medians, \texttt{results/metrics\_per\_run.csv} and the "
               "hyper-parameter study.")
    return wrapped_table(claims_table(found), caption=caption, widths=_TEX_WIDTHS)


def claims_macros(found: Sequence[Claim]) -> list[str]:
    """``\\ClaimsTotal`` and one count per verdict (``\\ClaimsFragile``, ...; 0 when none)."""
    counts = verdict_counts(found)
    return [macro("ClaimsTotal", len(found))] + [
        macro(macro_name("claims", verdict), counts.get(verdict, 0))
        for verdict in [*VERDICTS.values(), FRAGILE, NOT_REPRODUCED]]
