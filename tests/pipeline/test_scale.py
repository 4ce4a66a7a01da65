"""The scale study (``scale.yaml``, the frozen ``scale`` stage): its config checks, its budget
rules, the fitted exponents, a small run end to end (local and on a Dask cluster), and its
report section and figure."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml

from drfidelity.methods.dreams import FFT_FROM_N
from drfidelity.pipeline import run_stage
from drfidelity import scale
from drfidelity.scale import study as scaling
from drfidelity.core.params import load_params
from drfidelity.figures import style
from drfidelity.figures.scale import scale_figure
from drfidelity.report.scale import exponent_table, scale_section
from pipeline_helpers import REPO, env
from test_cluster import cluster

SMALL = {"dataset": "clusters", "sizes": [250, 500], "d": 20, "data_seed": 0, "snr": 1.0,
         "seed": 0, "methods": ["PCA", "toorPIA"], "budget_s": 600.0, "memory_gib": 8.0}


def write_config(folder: Path, drop: str = "", **changes) -> Path:
    raw = {key: value for key, value in {**SMALL, **changes}.items() if key != drop}
    path = folder / scale.CONFIG_FILE
    path.write_text(yaml.safe_dump(raw))
    return path


def small_config(tmp_path: Path, **changes) -> scaling.ScaleConfig:
    return scaling.load_config(write_config(tmp_path, **changes))


def test_committed_config_is_the_issue_grid():
    config = scaling.load_config(REPO / scale.CONFIG_FILE)
    assert config.sizes == (1000, 2000, 5000, 10000, 20000)
    assert config.d == 50
    assert config.methods == tuple(load_params(REPO / "params.yaml").methods)


@pytest.mark.parametrize("changes, message", [
    ({"drop": "sizes", "size": [1000]}, "did you mean 'sizes'"),
    ({"sizes": [2000, 1000]}, "increasing"),
    ({"sizes": [100]}, f">= {scaling.WARMUP_N}"),
    ({"methods": ["UMAPP"]}, "scale.yaml.methods must be one of"),
    ({"budget_s": 0}, "scale.yaml.budget_s must be > 0"),
    ({"dataset": "blobs"}, "scale.yaml.dataset"),
])
def test_bad_config_is_one_named_error(tmp_path, changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        scaling.load_config(write_config(tmp_path, **changes))


def test_power_law_exponent_recovers_known_slopes():
    sizes = [1000, 2000, 5000, 10000, 20000]
    for slope in (1.0, 1.5, 2.0):
        values = [3.0e-6 * n ** slope for n in sizes]
        assert scaling.power_law_exponent(sizes, values) == pytest.approx(slope, abs=1e-12)


def row(n, status="ok", wall=None, note=None, subject="UMAP"):
    return {"subject": subject, "n": n, "status": status, "wall_s": wall, "note": note}


def test_budget_rules(tmp_path):
    config = small_config(tmp_path, sizes=[1000, 2000, 4000], budget_s=100.0)
    at_4000 = config.tasks(4000)[1]
    # time doubles with N: 40 s predicted at 4000, within the budget
    assert scaling._not_run(at_4000, [row(1000, wall=10.0), row(2000, wall=20.0)]) is None
    # time x8 per doubling: 8 * 60 s predicted, over the 100 s budget
    status, note = scaling._not_run(at_4000, [row(1000, wall=7.5), row(2000, wall=60.0)])
    assert status == "not run" and "predicted 480 s" in note and "(100 s)" in note
    # a size that failed or overran is not retried at a larger one
    status, note = scaling._not_run(at_4000, [row(1000, wall=1.0), row(2000, "over budget")])
    assert (status, note) == ("not run", "over budget at N=2000")
    # a skipped method stays skipped with its reason
    assert scaling._not_run(at_4000, [row(2000, "skipped", note="no key")]) == ("skipped",
                                                                                 "no key")
    # sub-linear growth is extrapolated as linear (never optimistic below N^1)
    assert scaling._predicted_s([row(1000, wall=10.0), row(2000, wall=10.0)], 4000) == 20.0


def test_measure_stops_a_run_past_its_budgets(tmp_path):
    config = small_config(tmp_path, sizes=[2000], methods=["UMAP"])
    umap = config.tasks(2000)[1]
    late = scaling.measure(replace(umap, budget_s=0.5))
    assert late["status"] == "over budget" and "time budget (0.5 s)" in late["note"]
    big = scaling.measure(replace(umap, memory_gib=0.03))
    assert big["status"] == "over budget" and "memory budget (0.03 GiB RSS)" in big["note"]


def check_rows(rows: list[dict]) -> None:
    by = {(r["subject"], r["n"]): r for r in rows}
    assert set(by) == {(s, n) for s in (scaling.ENGINE, "PCA", "toorPIA") for n in (250, 500)}
    for subject in (scaling.ENGINE, "PCA"):
        for n in (250, 500):
            r = by[(subject, n)]
            assert r["status"] == "ok", r
            assert r["wall_s"] > 0 and r["peak_rss_mib"] >= r["base_rss_mib"] > 0
    engine = by[(scaling.ENGINE, 500)]
    assert engine["reference_s"] + engine["score_s"] == pytest.approx(engine["wall_s"], rel=0.05)
    assert by[("toorPIA", 250)]["status"] == "skipped"
    assert "TOORPIA_API_KEY" in by[("toorPIA", 500)]["note"]


def test_stage_end_to_end(tmp_path, monkeypatch):
    monkeypatch.delenv("TOORPIA_API_KEY", raising=False)
    monkeypatch.delenv("DRFIDELITY_SCHEDULER", raising=False)
    write_config(tmp_path)
    (tmp_path / "results").mkdir()
    run_stage(load_params(REPO / "params.yaml"), "scale", None, root=tmp_path)
    runs = pd.read_csv(tmp_path / "results" / scale.RUNS_FILE)
    assert list(runs.columns) == list(scaling.COLUMNS)
    check_rows(runs.to_dict("records"))
    exponents = pd.read_csv(tmp_path / "results" / scale.EXPONENTS_FILE)
    wall = exponents.set_index(["subject", "quantity"]).loc[(scaling.ENGINE, "wall time")]
    done = runs[(runs["subject"] == scaling.ENGINE)]
    assert wall["exponent"] == pytest.approx(
        math.log(done["wall_s"].iloc[1] / done["wall_s"].iloc[0]) / math.log(2), abs=1e-9)
    machine = json.loads((tmp_path / "results" / scale.MACHINE_FILE).read_text())
    assert machine["numerics"] == "exact" and machine["cpu"]

    # the report: the figure is deterministic, the section quotes the rows
    assert style.png_bytes(scale_figure(runs)) == style.png_bytes(scale_figure(runs))
    table = exponent_table(runs, exponents)
    cells = {subject: [c.text for c in row] for subject, row in table.rows}
    assert cells["PCA"][0] == "500"
    assert cells["toorPIA"][0].startswith("skipped: a closed remote service")
    text = json.dumps([str(b) for b in scale_section(runs, exponents, machine, [])])
    assert machine["cpu"] in text and "N = 250, 500" in text
    assert "not built" in str(scale_section(None, None, None, [])).lower()


@pytest.mark.slow
def test_study_on_a_dask_cluster(tmp_path, monkeypatch):
    monkeypatch.delenv("TOORPIA_API_KEY", raising=False)
    config = small_config(tmp_path)
    with cluster(lambda address: ["drfidelity", "worker", address, "--nworkers", "2"],
                 env()) as address:
        monkeypatch.setenv("DRFIDELITY_SCHEDULER", address)
        check_rows(scaling.run_study(config, progress=lambda line: None))


def test_docs_quote_the_committed_knobs_and_rules():
    config = scaling.load_config(REPO / scale.CONFIG_FILE)
    text = " ".join((REPO / "docs" / "scale.md").read_text().split())
    for quoted in ("N = " + ", ".join(map(str, config.sizes)) + " points",
                   f"of the `{config.dataset}` generator", f"D = {config.d}",
                   f"data seed {config.data_seed}", f"SNR {config.snr:g}",
                   f"method seed {config.seed}", f"(committed: {config.budget_s:g})",
                   f"(committed: {config.memory_gib:g}, polled every {scaling.POLL_S:g} s)",
                   f"one call on {scaling.WARMUP_N} points",
                   f"Calls under {scaling.TWICE_BELOW_S:g} s run twice",
                   f"add up to {scaling.MIN_TIMED_S:g} s (at most {scaling.MAX_REPEATS} times)",
                   f"below {scaling.MEMORY_FLOOR_MIB:g} MiB",
                   f"gradients at {FFT_FROM_N:,} points"):
        assert quoted in text, quoted


def test_the_frozen_stage_s_lock_records_its_code_as_it_is():
    """DVC never reruns the frozen stage, so nothing moves its lock entry when its code does;
    a full rebuild (``make verify``) then rewrites those lines and finds the lock differing.
    An edit of its code is recorded with ``dvc commit scale`` (its outputs are this machine's
    timings, not rebuilt)."""
    from dvc.repo import Repo

    with Repo(str(REPO)) as repo:
        (stage,) = repo.stage.collect("scale")
        changed = {str(dep): dep.status() for dep in stage.deps if dep.status()}
    assert stage.frozen and not changed, f"run `dvc commit scale`: {changed}"
