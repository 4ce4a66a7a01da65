"""Run times recorded by rebuilds (drfidelity.jobs.times): a stage replaces only its own rows,
writers side by side lose nothing, a record never fails a run and never lands in the repository
from a temporary root; the committed times name only known methods and stages."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numpy as np
import pytest
import yaml

from drfidelity.registry import METHODS
from drfidelity.core.layout import CONFIGURATIONS
from drfidelity.jobs import times
from drfidelity.core.job import Job
from drfidelity.jobs.runner import Input, run_all
from pipeline_helpers import REPO

#: every committed pipeline: the root's and each configuration's below releases/
PIPELINES = ("dvc.yaml", *(f"releases/{name}/dvc.yaml" for name in CONFIGURATIONS))


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A git checkout (as far as recording can tell) with the root's pipeline and a release's."""
    (tmp_path / ".git").mkdir()
    for folder in (tmp_path, tmp_path / "releases" / "v1.4.0"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "dvc.yaml").write_text("stages: {}\n")
    return tmp_path


def jobs_of(checkout: Path) -> list[tuple[str, ...]]:
    return [(row["pipeline"], row["stage"], row["method"], row["seconds"])
            for row in times.read(checkout / times.JOBS)]


def test_a_stage_replaces_its_own_rows_and_keeps_the_others(checkout):
    times.record_jobs(checkout, "embed@a", [("PCA", 0, "", 10, 1.0), ("UMAP", 0, "", 10, 2.0)])
    times.record_jobs(checkout / "releases" / "v1.4.0", "embed@a", [("PCA", 0, "", 10, 4.0)])
    times.record_jobs(checkout, "embed@b", [("PCA", 0, "", 10, 5.0)])
    times.record_jobs(checkout, "embed@a", [("t-SNE", 1, "", 10, 3.0)])
    assert jobs_of(checkout) == [("dvc.yaml", "embed@a", "t-SNE", "3.00"),
                                 ("dvc.yaml", "embed@b", "PCA", "5.00"),
                                 ("releases/v1.4.0/dvc.yaml", "embed@a", "PCA", "4.00")]


def test_stage_times_are_keyed_as_dvc_names_stages(checkout):
    times.record_stages(checkout, {"score@a": 1.0, "releases/v1.4.0/dvc.yaml:score@a": 2.0})
    times.record_stages(checkout, {"score@a": 3.0})
    assert [(row["pipeline"], row["stage"], row["seconds"])
            for row in times.read(checkout / times.STAGES)] == [
        ("dvc.yaml", "score@a", "3.0"), ("releases/v1.4.0/dvc.yaml", "score@a", "2.0")]


def _record_many(checkout: Path, stage: str) -> None:
    for seconds in range(20):
        times.record_jobs(checkout, stage, [("PCA", 0, "", 10, float(seconds))])


def test_writers_side_by_side_lose_nothing(checkout):
    """Each process rewrites the whole file; the folder lock keeps every stage's last rows."""
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_record_many, args=(checkout, f"embed@{i}"))
               for i in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert sorted(jobs_of(checkout)) == [("dvc.yaml", f"embed@{i}", "PCA", "19.00")
                                         for i in range(4)]


def test_a_record_that_cannot_be_written_is_one_warning(checkout, capsys):
    (checkout / "benchmarks").mkdir()
    (checkout / times.FOLDER).write_text("a file where the folder should be")
    times.record_jobs(checkout, "embed@a", [("PCA", 0, "", 10, 1.0)])
    assert capsys.readouterr().out.count("warning: run times not recorded") == 1


def _one_pca_job(root: Path) -> dict:
    np.save(root / "X.npy", np.random.default_rng(0).normal(size=(30, 5)))
    maps, _, _ = run_all("embed toy", [Job.of("PCA", 0)], {"": Input({"X": str(root / "X.npy")})},
                         1, root)
    return maps


def test_a_run_in_a_checkout_records_its_jobs_and_never_fails_on_it(checkout, capsys):
    assert _one_pca_job(checkout)
    assert [(row["stage"], row["method"], row["n"]) for row in times.read(checkout / times.JOBS)
            ] == [("embed@toy", "PCA", "30")]
    (checkout / times.JOBS).unlink()
    (checkout / times.JOBS).mkdir()  # unwritable: the run still delivers its maps
    assert _one_pca_job(checkout)
    assert "warning: run times not recorded" in capsys.readouterr().out


def test_a_run_in_a_temporary_root_writes_nothing(tmp_path):
    committed = (REPO / times.JOBS).read_bytes()
    assert _one_pca_job(tmp_path)
    assert not (tmp_path / "benchmarks").exists()
    assert (REPO / times.JOBS).read_bytes() == committed


def test_the_committed_times_name_known_methods_and_stages():
    locked = {pipeline: set(yaml.safe_load((REPO / pipeline).with_name("dvc.lock").read_text())
                            ["stages"]) for pipeline in PIPELINES}
    jobs = times.read(REPO / times.JOBS)
    assert jobs and all(tuple(row) == times.JOB_COLUMNS for row in jobs)
    for row in jobs:
        assert row["method"] in METHODS and row["stage"] in locked[row["pipeline"]], row
        assert int(row["seed"]) >= 0 and int(row["n"]) > 0 and float(row["seconds"]) >= 0, row
    stages = times.read(REPO / times.STAGES)
    assert stages and all(tuple(row) == times.STAGE_COLUMNS for row in stages)
    for row in stages:
        assert row["stage"] in locked[row["pipeline"]] and float(row["seconds"]) >= 0, row


def test_no_stage_reads_or_writes_the_times():
    """Recording touches no byte a stage hashes."""
    for pipeline in PIPELINES:
        lock = yaml.safe_load((REPO / pipeline).with_name("dvc.lock").read_text())["stages"]
        folder = (REPO / pipeline).parent
        for entry in lock.values():
            for item in entry.get("deps", []) + entry.get("outs", []):
                path = (folder / item["path"]).resolve()
                assert not (path == REPO / times.FOLDER or REPO / times.FOLDER in path.parents
                            or path in (REPO / times.FOLDER).parents), item["path"]
