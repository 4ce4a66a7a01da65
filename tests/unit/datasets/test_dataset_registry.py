"""One registry entry per dataset: every spec is complete, the stages and the report test no
dataset name, and a dataset registered in that one place gets its input, title, blurb,
ranking table, paper table and REPORT section."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from drfidelity.datasets import (DATASETS, Dataset, DatasetSpec, ScoredColumn, generate,
                                 knob_values)
from drfidelity.datasets.registry import knobs
from drfidelity.metrics import readouts
from drfidelity.figures import panels, settings

from pipeline_helpers import REPO

SRC = REPO / "src" / "drfidelity"
#: modules that may say how a dataset is handled only through its spec
SPEC_READERS = sorted(SRC.glob("report/*.py")) + sorted(SRC.glob("figures/*.py")) + [
    SRC / "pipeline" / f"{name}.py" for name in ("score", "figures", "report")] + [
    SRC / "metrics" / "readouts.py"]


@pytest.mark.parametrize("name", list(DATASETS))
def test_every_spec_is_complete_and_its_kinds_are_known(name):
    spec = DATASETS[name]
    assert spec.name == name and spec.title
    values = knob_values(name)
    assert set(values) == set(knobs(name))
    assert spec.blurb is None or spec.blurb(values).strip()
    assert spec.gallery in panels.GALLERIES
    assert spec.readouts is None or spec.readouts in readouts.READOUTS
    stems = set(settings.FIGURE_STEMS)
    assert set(spec.figure_stems) | set(spec.guide) | set(spec.paper_figures) <= stems
    assert spec.shares is None or sum(spec.shares(values)) == pytest.approx(100)
    n = 60 if name == "random_walk" else 200
    arrays = generate(name, n=n, d=20, data_seed=0, snr=1.0 if spec.noised else "inf")
    assert set(arrays) == {"X", "X_truth", "labels", *spec.extras}


def dataset_literals(path: Path) -> set[str]:
    return {node.value for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and node.value in DATASETS}


def test_stages_and_report_name_no_dataset():
    """What differs between datasets is read from their specs, never from an if on a name."""
    found = {(path.name, literal) for path in SPEC_READERS for literal in dataset_literals(path)}
    assert found == set()


def make_toy(n: int = 60, d: int = 6, seed: int = 0, *, spread: float = 1.0) -> Dataset:
    rng = np.random.default_rng(seed)
    clean = rng.normal(scale=spread, size=(n, d))
    side = np.arange(n, dtype=np.int64) % 2
    return Dataset("toy", clean, clean, side, extras={"side": side, "unused": side},
                   params=dict(n=n, d=d, seed=seed, spread=spread))


TOY = DatasetSpec(
    name="toy", generator=make_toy, title="Toy sides",
    blurb=lambda knobs: f"Two sides at spread {knobs['spread']:g}.", extras=("side",),
    scored=(ScoredColumn("side_shepard", "side pts", "side ρ", "Side pairs", "side",
                         r"side $\rho$"),),
    scatter=("side_shepard", "side-pair ρ"), figure_stems={"gallery": "toy_gallery"})


@pytest.fixture
def toy(monkeypatch):
    """The toy dataset, registered where a dataset is: its name in the registry
    (``drfidelity/registry.py``) and its module ``drfidelity.datasets.toy`` (here one in memory)."""
    import sys
    import types

    from dataclasses import replace

    from drfidelity import registry
    from drfidelity.datasets import registry as specs

    module = types.ModuleType("drfidelity.datasets.toy")
    module.SPEC = TOY
    monkeypatch.setitem(sys.modules, "drfidelity.datasets.toy", module)
    names = (*registry.DATASET_NAMES, "toy")
    monkeypatch.setattr(registry, "DATASET_NAMES", names)
    monkeypatch.setattr(specs, "NAMES", names)
    monkeypatch.setattr(registry, "NAMES", replace(registry.NAMES, datasets=names))


def toy_aggregated() -> pd.DataFrame:
    medians = {"PCA": {"full_shepard": 0.9, "shepard_near__vs_ambient": 0.2, "side_shepard": 0.7,
                       "near_band_pct__vs_ambient": 10.0, "tight_over_compression": 1.5},
               "Isomap": {"full_shepard": 0.8, "shepard_near__vs_ambient": 0.4,
                          "side_shepard": -0.1, "near_band_pct__vs_ambient": 10.0,
                          "tight_over_compression": 2.0}}
    return pd.DataFrame([{"dataset": "toy", "method": m, "metric": k, "median": v, "ci_lo": v,
                          "ci_hi": v, "n_runs": 1}
                         for m, values in medians.items() for k, v in values.items()])


def test_a_dataset_registered_in_one_place_reaches_every_stage_and_the_report(toy):
    from drfidelity.core.params import parse_params
    from drfidelity.pipeline.report import caption_note
    from drfidelity.report.content import Inputs, findings, report_blocks
    from drfidelity.report.document import to_markdown
    from drfidelity.report.latex import latex_table
    from drfidelity.report.paper import paper_title
    from drfidelity.report.tables import ranking_table

    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw.update(datasets=["toy"], dataset_params={"toy": {"spread": 2.5}}, studies={})
    from drfidelity import registry

    params = parse_params(raw, registry.NAMES)
    arrays = generate("toy", n=60, d=6, data_seed=0, snr=1.0)
    assert set(arrays) == {"X", "X_truth", "labels", "side"}
    assert settings.figure_names("toy")["gallery"] == "toy_gallery"
    assert settings.scatter_axis("toy") == ("side_shepard", "side-pair ρ")

    table = ranking_table(toy_aggregated(), "toy", {})
    headers = [c.header for c in table.columns]
    assert headers[:3] == ["full pts", "near pts", "side pts"] and headers[-1] == "side ρ"
    assert dict(table.rows)["PCA"][headers.index("Σ")].text == "14"

    inputs = Inputs(params, toy_aggregated(), pd.DataFrame(columns=["dataset", "method",
                                                                    "reason"]), {})
    found = findings(inputs)
    report = to_markdown(report_blocks(inputs, found))
    assert "## Toy sides\n" in report and "> Two sides at spread 2.5." in report
    assert "(and **side pts** on toy)" in report and "| side ρ |" in report
    tex = latex_table(found["datasets"]["toy"]["table"], title=paper_title("toy", params),
                      caption_note=caption_note(params, []))
    assert r"\caption{Toy sides: distance-fidelity ranking." in tex and r"side $\rho$" in tex
