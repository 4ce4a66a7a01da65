"""The hyper-parameter study's tuned rows: a value chosen on some seeds is scored on the
others, a deterministic method's single run is flagged, and a split that leaves no seed to
score on is refused in one line."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from drfidelity.core.params import ParamsError, parse_params
from drfidelity.studies.hyperparams import SPEC, TUNED_ALSO, TUNED_BY, held_out

from pipeline_helpers import REPO


def per_run(method: str, near: dict, seeds: int) -> pd.DataFrame:
    """Rows of one knob on clusters: ``near[value]`` is the near ρ per seed; full ρ is near ρ
    plus 1 (so it is told apart)."""
    return pd.DataFrame([{"dataset": "clusters", "method": method, "knob": "perplexity",
                          "value": value, "seed": seed, TUNED_BY: runs[seed],
                          TUNED_ALSO: runs[seed] + 1, "recall_k15": 0.0}
                         for value, runs in near.items() for seed in range(seeds)])


def test_the_value_is_chosen_on_the_first_seeds_and_scored_on_the_others():
    """Perplexity 50 wins seeds 0-1 by luck and loses seeds 2-3: the row reports it at its
    held-out medians, below the default's, not at the medians it was chosen by."""
    rows = per_run("t-SNE", {30: [0.5, 0.5, 0.5, 0.6], 50: [0.9, 0.9, 0.2, 0.3]}, seeds=4)
    (row,) = held_out(rows, 2, {("t-SNE", "perplexity"): 30.0})
    assert (row["best"], row["default"], row["one_run"], row["seeds"]) == (50.0, 30.0, False,
                                                                         [2, 3])
    assert row["at_best"][TUNED_BY] == (0.25, 0.2, 0.3)
    assert row["at_best"][TUNED_ALSO] == (1.25, 1.2, 1.3)
    assert row["at_default"][TUNED_BY] == (0.55, 0.5, 0.6)


def test_a_deterministic_method_is_chosen_and_scored_on_its_one_run():
    rows = per_run("Isomap", {5: [0.3], 15: [0.4], 30: [0.4]}, seeds=1)
    (row,) = held_out(rows, 2, {("Isomap", "perplexity"): 99.0})
    assert row["one_run"] and row["best"] == 15.0  # the first of a tie, in grid order
    assert row["at_best"][TUNED_BY] == (0.4, 0.4, 0.4)
    assert row["at_default"] is None  # the default is not on the grid


def test_a_split_that_leaves_no_seed_to_score_on_is_refused():
    params = yaml.safe_load((REPO / "releases" / "living" / "params.yaml").read_text())
    params["studies"]["hyperparams"]["select_seeds"] = params["seeds"]
    with pytest.raises(ParamsError, match=r"studies.hyperparams.select_seeds: 10 leaves no "
                                          r"seed to score the tuned value on \(seeds: 10\)"):
        SPEC.settings(parse_params(params))
    del params["studies"]["hyperparams"]["select_seeds"]
    assert SPEC.settings(parse_params(params))["select_seeds"] == 0  # the frozen meaning
