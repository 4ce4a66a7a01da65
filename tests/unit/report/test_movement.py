"""What moved from the frozen ranking: a hand-worked chain of rankings on one dataset, and
the living configuration's committed report against its own results and the checkout's."""

from __future__ import annotations

import pandas as pd
import pytest

from drfidelity.core.layout import LIVING, configuration_root
from drfidelity.core.params import load_params
from drfidelity.report.movement import (HEADING, RESCORED, Move, Rule, movement_table, moved,
                                        steps)
from drfidelity.report.tables import ranking_table
from pipeline_helpers import REPO

TRUTH_NEAR = "shepard_near__vs_truth"
#: per method: per seed (full ρ, near ρ, near ρ against the truth). Worked by hand, 5/4/3
#: points for places 1-3 per column:
#: - frozen (t-SNE, UMAP; seeds 0-1): t-SNE leads both columns -> t-SNE, UMAP
#: - PaCMAP added: full t-SNE .6 > PaCMAP .55 > UMAP .5, near PaCMAP .6 > t-SNE > UMAP;
#:   t-SNE and PaCMAP tie at 9, full ρ breaks it -> t-SNE, PaCMAP, UMAP (UMAP 2 -> 3)
#: - seeds 0-3: UMAP's medians become full .7, near .425: 8 points each, full ρ orders
#:   -> UMAP, t-SNE, PaCMAP (UMAP 3 -> 1, t-SNE 1 -> 2)
#: - near ρ against the truth ranked: t-SNE .9, PaCMAP .8, UMAP .1 -> 13, 12, 11
#:   -> t-SNE, PaCMAP, UMAP (UMAP 1 -> 3, t-SNE back to 1: not moved at the ends)
RUNS = {
    "t-SNE": [(0.6, 0.5, 0.9)] * 4,
    "UMAP": [(0.5, 0.4, 0.1)] * 2 + [(0.9, 0.45, 0.1)] * 2,
    "PaCMAP": [(0.55, 0.6, 0.8)] * 4,
}
FROZEN = Rule(("t-SNE", "UMAP"), 2, {})
HERE = Rule(("t-SNE", "UMAP", "PaCMAP"), 4, {"clusters": (TRUTH_NEAR,)})


def runs(table=RUNS) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": "clusters", "method": method, "seed": seed,
                          "stochastic": True, "full_shepard": full,
                          "shepard_near__vs_ambient": near, TRUTH_NEAR: truth}
                         for method, values in table.items()
                         for seed, (full, near, truth) in enumerate(values)])


def test_each_change_is_one_step_and_each_moved_place_names_the_changes_that_moved_it():
    here = runs()
    frozen = here[here.method.isin(FROZEN.methods) & (here.seed < 2)]
    found = steps(frozen, FROZEN, here, HERE, ["clusters"])
    assert [(s.change, s.orders["clusters"]) for s in found] == [
        ("the frozen ranking", ("t-SNE", "UMAP")),
        ("PaCMAP added", ("t-SNE", "PaCMAP", "UMAP")),
        ("seeds 0–3 for the stochastic methods (seeds 0–1 frozen)",
         ("UMAP", "t-SNE", "PaCMAP")),
        ("near/truth ρ ranked", ("t-SNE", "PaCMAP", "UMAP")),
    ]
    (umap,) = moved(found, ["clusters"])  # t-SNE ends where it began; PaCMAP is new
    assert (umap.method, umap.frozen, umap.here) == ("UMAP", 2, 3)
    assert umap.moves == (
        Move("PaCMAP added", 2, 3, ("PaCMAP",), ()),
        Move("seeds 0–3 for the stochastic methods (seeds 0–1 frozen)", 3, 1, (),
             ("t-SNE", "PaCMAP")),
        Move("near/truth ρ ranked", 1, 3, ("t-SNE", "PaCMAP"), ()))
    (row,) = movement_table([umap]).rows
    assert row[0] == "clusters"
    assert row[1][3].text == (
        "PaCMAP added: 2 → 3 (passed by PaCMAP); seeds 0–3 for the stochastic methods "
        "(seeds 0–1 frozen): 3 → 1 (passes t-SNE and PaCMAP); near/truth ρ ranked: 1 → 3 "
        "(passed by t-SNE and PaCMAP)")


def test_frozen_runs_that_score_otherwise_here_are_a_step_of_their_own():
    """The same methods and seeds ranked otherwise here than in the frozen runs: the inputs
    or settings differ, and that is said rather than blamed on a later change."""
    frozen = runs({"t-SNE": [(0.6, 0.5, 0.9)] * 2, "UMAP": [(0.9, 0.9, 0.1)] * 2})
    found = steps(frozen, FROZEN, runs(), FROZEN, ["clusters"])
    assert [s.change for s in found] == ["the frozen ranking", RESCORED]
    (umap,) = [m for m in moved(found, ["clusters"]) if m.method == "UMAP"]
    assert [m.change for m in umap.moves] == [RESCORED]


@pytest.fixture(scope="module")
def living():
    folder = configuration_root(REPO, LIVING)
    params = load_params(folder / "params.yaml")
    frozen = load_params(REPO / "params.yaml")
    read = {name: pd.read_csv(path / "results" / f"metrics_{name}.csv",
                              float_precision="round_trip")
            for name, path in (("per_run", folder), ("aggregated", folder))}
    frozen_runs = pd.read_csv(REPO / "results" / "metrics_per_run.csv",
                              float_precision="round_trip")
    found = steps(frozen_runs, Rule(frozen.methods, frozen.seeds, frozen.ranking),
                  read["per_run"], Rule(params.methods, params.seeds, params.ranking),
                  params.datasets)
    return params, frozen, read["aggregated"], found, folder


def test_the_living_chain_runs_from_the_frozen_tables_to_its_own(living):
    """Its first ranking is the frozen REPORT's row order, its last the living one's; the
    frozen runs score the same here (no rescoring step); each moved place's changes chain
    from its frozen place to its place here."""
    params, frozen, aggregated, found, _ = living
    frozen_aggregated = pd.read_csv(REPO / "results" / "metrics_aggregated.csv",
                                    float_precision="round_trip")
    assert RESCORED not in [s.change for s in found]
    for dataset in params.datasets:
        assert found[0].orders[dataset] == tuple(
            m for m, _ in ranking_table(frozen_aggregated, dataset, frozen.ranking).rows)
        assert found[-1].orders[dataset] == tuple(
            m for m, _ in ranking_table(aggregated, dataset, params.ranking).rows)
    places = moved(found, params.datasets)
    assert places
    for place in places:
        chain = [place.frozen] + [p for m in place.moves for p in (m.before, m.after)]
        chain += [place.here]
        assert chain[0::2] == chain[1::2], place


def test_the_living_report_shows_every_moved_place(living):
    params, _, _, found, folder = living
    report = (folder / "REPORT.md").read_text()
    section = report.split(f"## {HEADING}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][2:]
    assert len(rows) == len(moved(found, params.datasets))
    for step in found[1:]:
        assert step.change in section
