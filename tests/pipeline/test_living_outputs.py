"""The living configuration's committed outputs hold what it promises a researcher: every
method of its params in every ranking table, ten seeds behind each stochastic method's
interval, a tuned row per method and dataset of the hyper-parameter grid, and a rotated row
per method of the noise-dims probe but toorPIA's, whose CSV-form row stands on its stored
draws."""

from __future__ import annotations

import pandas as pd
import pytest

from drfidelity.core.layout import LIVING, configuration_root
from drfidelity.core.params import load_params
from drfidelity.registry import METHODS
from pipeline_helpers import REPO

FOLDER = configuration_root(REPO, LIVING)


@pytest.fixture(scope="module")
def params():
    return load_params(FOLDER / "params.yaml")


def section(heading: str) -> str:
    report = (FOLDER / "REPORT.md").read_text()
    return report.split(f"{heading}\n", 1)[1].split("\n## ", 1)[0]


def test_every_method_has_its_seeds_in_every_dataset(params):
    runs = pd.read_csv(FOLDER / "results" / "metrics_per_run.csv")
    assert params.seeds >= 10
    for dataset in params.datasets:
        of = runs[runs.dataset == dataset]
        for method in params.methods:
            seeds = sorted(of.loc[of.method == method, "seed"])
            # toorPIA: the one stored draw per dataset of the checkout's imports
            want = list(range(params.seeds)) if METHODS[method].stochastic else [0]
            assert seeds == want, (dataset, method)


def test_the_tuned_rows_cover_the_grid(params):
    grid = params.studies["hyperparams"]["grid"]
    rows = [line.split(" | ")[:2] for line in section("### Tuned rows").splitlines()
            if line.startswith("| ") and not line.startswith(("| dataset", "| ---"))]
    assert rows == [[f"| {d}", m] for d in params.studies["hyperparams"]["datasets"]
                    for m in METHODS if m in grid]


def test_every_method_but_toorpia_maps_the_rotated_probe(params):
    table = pd.read_csv(FOLDER / "results" / "studies" / "dimsweep_aggregated.csv")
    rotated = {m.removesuffix("-rotated") for m in table["method"] if m.endswith("-rotated")}
    assert rotated == set(params.methods) - {"toorPIA"}
    dims = set(params.studies["noise_dims"]["dims"])
    for method in rotated:
        assert set(table.loc[table.method == f"{method}-rotated", "dim"]) == dims, method


def test_toorpia_s_csv_form_row_stands_on_every_stored_draw(params):
    """Its three stored draws per input are scored though the run asks for ten seeds, and the
    report says what the row stands on."""
    table = pd.read_csv(FOLDER / "results/studies/dimsweep_per_run.csv")
    toorpia = table[table.method == "toorPIA"]
    assert set(toorpia["dim"]) >= set(params.studies["noise_dims"]["dims"])
    assert {dim: sorted(set(runs["seed"])) for dim, runs in toorpia.groupby("dim")} == {
        dim: [0, 1, 2] for dim in set(toorpia["dim"])}
    assert "row stands on its 3 stored draws per input" in section(
        "## Supplement — noise dimensions")
