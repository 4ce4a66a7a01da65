"""Each stage depends on exactly what it reads: an edit reruns only the stages that read it.

Measured with DVC itself: a copy of the pipeline with the committed ``dvc.lock`` (no data
needed), one edit, and ``dvc status --json``; a stage counts as stale when one of its code or
params dependencies changed (its data are not in the copy, which DVC reports separately).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from pipeline_helpers import PIPELINE_FILES, REPO, import_pointers, run

EMBEDDING = {"embed", "supplement_embed"}


@pytest.fixture
def pipeline(tmp_path) -> Path:
    """The pipeline definition, its lock and code, in a fresh git + DVC repository."""
    root = tmp_path / "pipeline"
    for name in PIPELINE_FILES + import_pointers() + ["dvc.lock"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name, follow_symlinks=False)
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    run(["git", "init", "-q"], root)
    run(["dvc", "init", "-q"], root)
    return root


def stale(root: Path) -> dict[str, set[str]]:
    """Stage -> the code paths and params keys of it that changed since the lock."""
    report = json.loads(run(["dvc", "status", "--no-updates", "--json"], root).stdout or "{}")
    found = {}
    for stage, entries in report.items():
        changed = set()
        for entry in entries:
            for path, what in entry.get("changed deps", {}).items() if isinstance(entry, dict) \
                    else ():
                if isinstance(what, dict):
                    changed |= {f"{path}:{key}" for key in what}
                elif path.startswith("src/"):
                    changed.add(path)
        if changed:
            found[stage] = changed
    return found


def kind(stage: str) -> str:
    return stage.split("@")[0]


def test_the_copy_starts_up_to_date(pipeline):
    assert stale(pipeline) == {}


def test_editing_one_method_wrapper_reruns_only_the_stages_that_run_methods(pipeline):
    with (pipeline / "src/drfidelity/methods/toorpia.py").open("a") as source:
        source.write("# a comment\n")
    changed = stale(pipeline)
    assert {kind(s) for s in changed} == EMBEDDING
    lock = yaml.safe_load((REPO / "dvc.lock").read_text())["stages"]
    assert set(changed) == {s for s in lock if kind(s) in EMBEDDING}


@pytest.mark.parametrize("module", ["runner.py", "fresh.py", "cluster.py", "memory.py",
                                    "times.py"])
def test_editing_the_job_executor_reruns_nothing(pipeline, module):
    """Where and when a job runs is not what it computes (tests/test_executor_paths.py)."""
    with (pipeline / "src/drfidelity/jobs" / module).open("a") as source:
        source.write("# a comment\n")
    assert stale(pipeline) == {}


def test_editing_a_dataset_generator_leaves_the_study_maps_to_their_inputs(pipeline):
    """A study's inputs are a stage of their own: a generator edit reruns them, and their maps
    only through the inputs' bytes (unchanged by a comment), never through the code."""
    with (pipeline / "src/drfidelity/datasets/clusters.py").open("a") as source:
        source.write("# a comment\n")
    changed = stale(pipeline)
    assert not {s for s in changed if kind(s) in EMBEDDING}
    assert {"generate@clusters", "supplement_inputs@hyperparams"} <= set(changed)


def test_editing_the_report_text_reruns_only_the_report(pipeline):
    with (pipeline / "src/drfidelity/report/content.py").open("a") as source:
        source.write("# a comment\n")
    assert set(stale(pipeline)) == {"report"}


def test_a_new_snr_leaves_the_noise_free_studies_up_to_date(pipeline):
    params = yaml.safe_load((pipeline / "params.yaml").read_text())
    params["data"]["snr"] = 4.0
    (pipeline / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    changed = stale(pipeline)
    for study in ("random_walk", "noise_dims", "sweep_outlier_factor"):
        assert f"supplement_embed@{study}" not in changed
    for table in ("random_walk", "dimsweep", "dimsweep_embedding", "sweep_outliers"):
        assert f"supplement_score@{table}" not in changed
    assert {"generate@density", "supplement_embed@addplot", "supplement_embed@sweep_minority_frac",
            "supplement_embed@hyperparams"} <= set(changed)
    assert changed["generate@density"] == {"params.yaml:data"}
