"""`make verify` recomputes: every stage runs in the clone, so a committed result that the code
does not produce is caught even when its ``dvc.lock`` entry was made to match it."""

from __future__ import annotations

import sys

import pandas as pd

from pipeline_helpers import REPO, run, workspace

TARGETS = ("aggregate", "figures")


def commit(repo, message: str) -> None:
    run(["git", "add", "-A"], repo)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", message],
        repo)


def test_verify_reruns_every_stage_and_catches_a_forged_result(tmp_path):
    repo = workspace(tmp_path / "repo", datasets=["clusters"], methods=["PCA"], seeds=1,
                     data__n=120, data__d=12)
    run(["dvc", "repro", *TARGETS], repo)
    table = repo / "results" / "metrics_aggregated.csv"
    forged = pd.read_csv(table, float_precision="round_trip")
    forged.loc[0, "median"] += 0.125
    forged.to_csv(table, index=False, lineterminator="\n")
    run(["dvc", "commit", "-q", "--force", "aggregate", "figures@clusters"], repo)  # vouched for
    commit(repo, "a result the code does not produce")
    assert run(["dvc", "status", "--no-updates", "--quiet", *TARGETS], repo,
               check=False).returncode == 0

    result = run([sys.executable, str(REPO / "tools" / "verify.py"), "--repo", str(repo),
                  "--cache", str(repo / ".dvc" / "cache"), "--offline",
                  "--workdir", str(tmp_path / "verify"), "--targets", *TARGETS], REPO,
                 check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "VERDICT: NOT REPRODUCED" in result.stdout
    rows = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()
            if line.startswith("  ") and len(line.split()) > 1}
    assert rows["results/metrics_aggregated.csv"] == "differs"
    assert rows["results/metrics_per_run.csv"] == "identical"
    log = (tmp_path / "verify" / "repro.log").read_text()
    for stage in ("generate@clusters", "embed@clusters-PCA", "score@clusters", "aggregate",
                  "figures@clusters"):
        assert f"Running stage '{stage}'" in log, stage
    assert "verify: dvc repro done" in result.stdout and "5 of 5 stages ran" in result.stdout


def test_a_release_without_a_committed_pipeline_is_refused_in_one_line(tmp_path):
    """`make verify RELEASE=<tag>` before the release's pipeline and outputs are committed:
    nothing to verify, said in one line, before any clone."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run(["git", "init", "-q"], repo)
    (repo / "README.md").write_text("x\n")
    commit(repo, "no release folder")
    result = run([sys.executable, str(REPO / "tools" / "verify.py"), "--repo", str(repo),
                  "--release", "v1.4.0", "--workdir", str(tmp_path / "verify")], REPO,
                 check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "verify: releases/v1.4.0/dvc.yaml is not committed, so v1.4.0 has no committed outputs "
        "to verify: `make repro RELEASE=v1.4.0`, then commit its pipeline, lock and outputs"]
    assert not (tmp_path / "verify").exists()
