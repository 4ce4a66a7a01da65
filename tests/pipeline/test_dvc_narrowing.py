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

from pipeline_helpers import PIPELINE_FILES, REPO, copy_from_checkout, import_pointers, run

EMBEDDING = {"embed", "supplement_embed"}
#: the datasets the committed params.yaml runs (the figures stage's matrix)
DATASETS_RUN = yaml.safe_load((REPO / "params.yaml").read_text())["datasets"]


@pytest.fixture
def pipeline(tmp_path) -> Path:
    """The pipeline definition, its lock and code, in a fresh git + DVC repository."""
    root = tmp_path / "pipeline"
    copy_from_checkout(root, PIPELINE_FILES + import_pointers() + ["dvc.lock"])
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    run(["git", "init", "-q"], root)
    run(["dvc", "init", "-q"], root)
    return root


def record_code_as_it_is(root: Path) -> None:
    """Write into ``root``'s dvc.lock the hashes of every stage's code deps (``src/``,
    ``method_code/``) as they are in the copy, as a rebuild would: the stages' data and params
    entries stay the committed ones. An edit is then measured against this checkout's code
    even while the committed lock lags behind it (what it shows is the shape of the deps;
    that the lock is current is test_the_copy_starts_up_to_date's business)."""
    from dvc.repo import Repo

    path = root / "dvc.lock"
    lock = yaml.safe_load(path.read_text())
    with Repo(str(root)) as repo:
        for stage in repo.index.stages:
            entry = lock["stages"].get(stage.name)
            if entry is None:
                continue
            kept = {dep["path"]: dep for dep in entry.get("deps", [])}
            deps = []
            for dep in stage.deps:
                if not dep.def_path.startswith(("src/", "method_code/")):
                    if dep.def_path in kept:
                        deps.append(kept[dep.def_path])
                    continue
                dep.save()
                record = {"path": dep.def_path, "hash": "md5", "md5": dep.hash_info.value,
                          "size": dep.meta.size}
                if dep.meta.isdir:
                    record["nfiles"] = dep.meta.nfiles
                deps.append(record)
            entry["deps"] = deps
    path.write_text(yaml.safe_dump(lock, sort_keys=False))


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
                elif path.startswith(("src/", "method_code/")):
                    changed.add(path)
        if changed:
            found[stage] = changed
    return found


def kind(stage: str) -> str:
    return stage.split("@")[0]


def test_the_copy_starts_up_to_date(pipeline):
    assert stale(pipeline) == {}


@pytest.mark.parametrize("module, methods", [("umap_.py", {"UMAP"}), ("toorpia.py", {"toorPIA"}),
                                             ("torch_setup.py", {"PyMDE", "PCC"})])
def test_editing_a_method_module_reruns_only_its_methods_maps(pipeline, module, methods):
    """A wrapper (or a module it imports) is a dep of its own method's map stages alone; what
    scores the maps reruns through their bytes, which a comment leaves as they were."""
    with (pipeline / "src/drfidelity/methods" / module).open("a") as source:
        source.write("# a comment\n")
    lock = yaml.safe_load((REPO / "dvc.lock").read_text())["stages"]
    assert set(stale(pipeline)) == {s for s in lock if kind(s) in EMBEDDING
                                    and s.partition("@")[2].split("-", 1)[1] in methods}


@pytest.mark.parametrize("module", ["runner.py", "fresh.py", "cluster.py", "memory.py",
                                    "times.py"])
def test_editing_the_job_executor_reruns_nothing(pipeline, module):
    """Where and when a job runs is not what it computes (test_executor_paths.py)."""
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


def test_editing_a_caption_reruns_only_the_report(pipeline):
    """The captions are the writing wing's (report/captions.py), written from each figure
    stage's facts.json: no figure stage reads them, so a caption edit redraws nothing."""
    record_code_as_it_is(pipeline)
    assert stale(pipeline) == {}
    with (pipeline / "src/drfidelity/report/captions.py").open("a") as source:
        source.write("# a comment\n")
    assert set(stale(pipeline)) == {"report"}


def test_editing_a_painter_leaves_the_report_up_to_date(pipeline):
    """The other direction: the drawing wing's painters are the figure stages' alone; the
    report reads only the settings its captions quote (figures/settings.py)."""
    record_code_as_it_is(pipeline)
    with (pipeline / "src/drfidelity/figures/dataset.py").open("a") as source:
        source.write("# a comment\n")
    assert set(stale(pipeline)) == {f"figures@{name}" for name in DATASETS_RUN}
    record_code_as_it_is(pipeline)
    with (pipeline / "src/drfidelity/figures/studies.py").open("a") as source:
        source.write("# a comment\n")
    assert set(stale(pipeline)) == {"supplement_figures"}


def test_a_new_snr_leaves_the_noise_free_studies_up_to_date(pipeline):
    params = yaml.safe_load((pipeline / "params.yaml").read_text())
    params["data"]["snr"] = 4.0
    (pipeline / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    changed = stale(pipeline)
    studies = {s.partition("@")[2].split("-", 1)[0] for s in changed
               if kind(s) == "supplement_embed"}
    assert studies == {"addplot", "sweep_minority_frac", "hyperparams"}
    for table in ("random_walk", "dimsweep", "dimsweep_embedding", "sweep_outliers"):
        assert f"supplement_score@{table}" not in changed
    assert {"generate@density", "supplement_embed@addplot-UMAP"} <= set(changed)
    assert changed["generate@density"] == {"params.yaml:data"}
