"""benchmarks/bench_pipeline.py's accounting on a made-up log (no pipeline run, no timing): each
stage's window is DVC plus its process's lifetime, shared out by the CPU seconds of the stage
process and its job processes."""

from __future__ import annotations

import json
import sys

import pytest

from pipeline_helpers import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_pipeline  # noqa: E402  (benchmarks/ is not a package)


def record(pid, ppid, command, start, end, cpu, boot, imports, compile_=0.0):
    return {"pid": pid, "ppid": ppid, "command": command, "start": start, "end": end,
            "cpu": cpu, "boot": boot, "imports": imports, "compile": compile_,
            "compile_in_imports": 0.0}


def test_a_run_is_split_into_dvc_start_up_compile_and_compute(tmp_path):
    lines = [(100.0, "Reproducing experiment 'x'"),
             (102.0, "Running stage 'embed@clusters':"), (103.0, "> drfidelity stage embed"),
             (112.0, "Updating lock file 'dvc.lock'"),
             (113.0, "Running stage 'aggregate':"), (116.0, "Updating lock file 'dvc.lock'")]
    embed = ["/venv/bin/drfidelity", "stage", "embed"]
    records = [record(10, 1, embed, 102.5, 111.5, cpu=1.0, boot=0.1, imports=0.9),
               record(11, 10, ["-B", "-c", "spawn"], 103.0, 110.0, cpu=3.0, boot=0.1,
                      imports=0.9, compile_=1.0),
               record(12, 1, ["/venv/bin/drfidelity", "stage", "aggregate"], 113.5, 115.5,
                      cpu=1.0, boot=0.1, imports=0.4),
               record(13, 1, ["/venv/bin/python", "unrelated.py"], 50.0, 60.0, cpu=9.0,
                      boot=0.1, imports=0.1)]
    log = tmp_path / "probe.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))

    run = bench_pipeline.account(20.0, lines, log)

    embed_parts = run["stages"]["embed@clusters"]
    assert embed_parts["dvc"] == pytest.approx(10.0 - 9.0)
    # 4 CPU-s: start-up 2.0, compile 1.0, compute 1.0, over a 9 s lifetime
    assert embed_parts["start-up"] == pytest.approx(4.5)
    assert embed_parts["compile"] == pytest.approx(2.25)
    assert embed_parts["compute"] == pytest.approx(2.25)
    assert run["cpu"] == pytest.approx({"start-up": 2.5, "compile": 1.0, "compute": 1.5})
    assert sum(run["parts"].values()) == pytest.approx(20.0)
    assert run["parts"]["dvc"] == pytest.approx(20.0 - 9.0 - 2.0)


def test_stages_side_by_side_are_told_apart_by_their_prefix_and_command(tmp_path):
    """tools/repro.py --stages 2 interleaves two stages' logs, DVC's own lines prefixed with
    their stage; each window ends at its own stage's lock update and owns its own process."""
    lines = [(100.0, "Running stage 'embed@density':"),
             (100.5, "[embed@density] > drfidelity stage embed density"),
             (101.0, "Running stage 'figures@clusters':"),
             (101.5, "[figures@clusters] > drfidelity stage figures clusters"),
             (104.5, "[figures@clusters] Updating lock file 'dvc.lock'"),
             (105.0, "[figures@clusters] done in 4.0 s"),
             (109.5, "[embed@density] Updating lock file 'dvc.lock'"),
             (110.0, "[embed@density] done in 10.0 s")]
    records = [record(10, 1, ["/venv/bin/drfidelity", "stage", "embed", "density"], 100.8,
                      109.8, cpu=3.0, boot=0.1, imports=0.9),
               record(11, 1, ["/venv/bin/drfidelity", "stage", "figures", "clusters"], 101.8,
                      104.8, cpu=2.0, boot=0.1, imports=0.9)]
    log = tmp_path / "probe.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))

    run = bench_pipeline.account(10.0, lines, log)

    assert run["stages"]["embed@density"]["dvc"] == pytest.approx(10.0 - 9.0)
    assert run["stages"]["figures@clusters"]["dvc"] == pytest.approx(4.0 - 3.0)
    assert run["cpu"]["compute"] == pytest.approx(2.0 + 1.0)
    assert run["parts"]["dvc"] == pytest.approx(2.0)  # the windows overlap: nothing outside


def test_a_stage_whose_lock_entry_did_not_change_ends_where_the_next_one_starts(tmp_path):
    """A forced run that brings every output back writes no "Updating lock file" line."""
    lines = [(100.0, "Running stage 'generate@density':"),
             (100.5, "> drfidelity stage generate density"),
             (103.0, "Running stage 'aggregate':"), (104.0, "> drfidelity stage aggregate"),
             (106.0, "Data and pipelines are up to date.")]
    windows = bench_pipeline.stage_windows(lines)
    assert windows == {"generate@density": (100.0, 103.0, ["stage", "generate", "density"]),
                       "aggregate": (103.0, 106.0, ["stage", "aggregate"])}
