"""tools/repro.py: DVC's log with [stage i/n] lines and a summary, exit status passed through.

DVC is replaced by a script that prints what ``dvc repro`` prints, so the test runs in a second;
the real tool is run on the whole pipeline by ``make repro`` and ``make kick``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pipeline_helpers import REPO

FAKE_DVC = r"""#!/bin/sh
if [ "$2" = "--dry" ]; then
  printf "Running stage 'generate@density':\n> drfidelity stage generate density\n\n"
  if [ -n "$FAKE_DRY_FAILS" ]; then
    echo "ERROR: failed to reproduce 'embed@density': No such file or directory: data/density"
    exit 255
  fi
  printf "Running stage 'embed@density':\n> drfidelity stage embed density\n"
  exit 0
fi
if [ "$1" = "status" ]; then
  echo '{"generate@density": [], "embed@density": [], "dvc.yaml:scale": [], "x.dvc": []}'
  exit 0
fi
echo "Stage 'generate@clusters' didn't change, skipping"
printf "Running stage 'generate@density':\n> drfidelity stage generate density\n"
printf "Running stage 'embed@density':\n"
echo "[embed density] 1/2 toorPIA seed 0 skipped: no map at /x/seed0.npy and TOORPIA_API_KEY unset | elapsed 0s | ETA 0s"
echo "[embed density] 2/2 toorPIA seed 1 skipped: no map at /x/seed1.npy and TOORPIA_API_KEY unset | elapsed 0s | ETA 0s"
exit ${FAKE_STATUS:-0}
"""


def run_tool(tmp_path: Path, status: int, **env) -> subprocess.CompletedProcess:
    fake = tmp_path / "dvc"
    fake.write_text(FAKE_DVC)
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "FAKE_STATUS": str(status),
           **env}
    return subprocess.run([sys.executable, str(REPO / "tools" / "repro.py"), "--force"],
                          env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)


def test_stages_are_numbered_and_summed_up(tmp_path):
    result = run_tool(tmp_path, 0)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines.index("[stage 1/2] generate@density") \
        < lines.index("Running stage 'generate@density':") \
        < lines.index("[stage 2/2] embed@density")
    summary = lines[lines.index(next(l for l in lines if l.startswith("repro: done"))):]
    assert "2 stage(s) ran, 1 up to date" in summary[0]
    assert any(line.endswith("embed@density") for line in summary)
    assert ("  skipped in embed density: no map at <path> and TOORPIA_API_KEY unset (2x)"
            in summary)


def test_a_workspace_without_outputs_counts_every_stage_but_the_frozen(tmp_path):
    """DVC's dry run stops at the first stage whose inputs are not made yet; the count then
    comes from ``dvc status`` (every changed stage; a frozen one never runs)."""
    (tmp_path / "dvc.yaml").write_text("stages:\n  scale: {cmd: x, frozen: true}\n")
    result = run_tool(tmp_path, 0, FAKE_DRY_FAILS="1")
    assert result.returncode == 0
    assert "[stage 2/2] embed@density" in result.stdout.splitlines()


def test_dvc_failure_is_the_exit_status(tmp_path):
    result = run_tool(tmp_path, 3)
    assert result.returncode == 3
    assert "repro: FAILED (exit 3)" in result.stdout


STAMP = """import sys, time
name, seconds = sys.argv[1], float(sys.argv[2])
start = time.time()
time.sleep(seconds)
open(name + ".txt", "w").write(f"{start} {time.time()}")
if sys.argv[3:] == ["fail"]:
    print("stamp: failing on purpose")
    sys.exit(3)
"""


def real_pipeline(tmp_path: Path, failing: bool = False) -> Path:
    """A DVC project of three stages: ``a`` and ``b`` independent, ``c`` reading both."""
    dvc = [sys.executable, "-m", "dvc"]
    subprocess.run([*dvc, "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "stamp.py").write_text(STAMP)
    # a and b sleep long enough to overlap even when the second dvc waits for the lock and
    # reads the pipeline slowly on a loaded machine
    fail = " fail" if failing else ""
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  a: {cmd: python stamp.py a 4, deps: [stamp.py], outs: [a.txt]}\n"
        f"  b: {{cmd: python stamp.py b 4{fail}, deps: [stamp.py], outs: [b.txt]}}\n"
        "  c: {cmd: python stamp.py c 0, deps: [a.txt, b.txt], outs: [c.txt]}\n")
    return tmp_path


def run_side_by_side(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "DVC_NO_ANALYTICS": "1"}
    return subprocess.run([sys.executable, str(REPO / "tools" / "repro.py"), "--stages", "2",
                           *args], env=env, capture_output=True, text=True, timeout=120,
                          cwd=folder)


def stamps(folder: Path, name: str) -> tuple[float, float]:
    start, end = map(float, (folder / f"{name}.txt").read_text().split())
    return start, end


def test_independent_stages_run_side_by_side_and_the_lock_is_dvc_repro_s(tmp_path):
    """--stages 2 overlaps ``a`` and ``b``, starts ``c`` after both, and leaves the project as
    ``dvc repro`` does: every stage in dvc.lock, nothing left to run."""
    folder = real_pipeline(tmp_path)
    result = run_side_by_side(folder)
    assert result.returncode == 0, result.stdout + result.stderr
    (a_start, a_end), (b_start, b_end) = stamps(folder, "a"), stamps(folder, "b")
    assert a_start < b_end and b_start < a_end
    assert stamps(folder, "c")[0] > max(a_end, b_end)
    lines = result.stdout.splitlines()
    numbered = [line for line in lines if line.startswith("[stage ")]
    assert sorted(line.split()[-1] for line in numbered) == ["a", "b", "c"]
    assert numbered[-1] == "[stage 3/3] c"
    assert "3 stage(s) ran, 0 up to date" in result.stdout
    dry = subprocess.run([sys.executable, "-m", "dvc", "repro", "--dry"], cwd=folder,
                         capture_output=True, text=True, check=True)
    assert "Running stage" not in dry.stdout
    again = run_side_by_side(folder)
    assert again.returncode == 0 and "0 stage(s) ran, 3 up to date" in again.stdout


def test_a_failed_stage_stops_what_reads_it_and_is_the_exit_status(tmp_path):
    folder = real_pipeline(tmp_path, failing=True)
    result = run_side_by_side(folder, "--force")
    assert result.returncode != 0
    assert "[b] FAILED (exit" in result.stdout and "repro: FAILED" in result.stdout
    assert (folder / "a.txt").exists() and not (folder / "c.txt").exists()


def test_log_keeps_dvc_s_lines_in_the_file_and_a_line_per_stage_on_the_terminal(tmp_path):
    """--log (kick-the-tires): the terminal gets one line per stage that ran and the summary;
    DVC's own lines and its advice go to the file; a failed stage shows its last lines."""
    folder = real_pipeline(tmp_path)
    result = run_side_by_side(folder, "--log", "run.log")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert sorted(line.split()[1] for line in lines[:3]) == ["a", "b", "c"]
    assert [line.split()[0] for line in lines[:3]] == ["[1/3]", "[2/3]", "[3/3]"]
    assert "Running stage" not in result.stdout and "dvc push" not in result.stdout
    log = (folder / "run.log").read_text()
    assert "Running stage 'c':" in log and "[c] done in" in log
    (tmp_path / "f").mkdir()
    failed = run_side_by_side(real_pipeline(tmp_path / "f", failing=True), "--force",
                              "--log", "run.log")
    assert failed.returncode != 0
    assert "stamp: failing on purpose" in failed.stdout and "[b] FAILED (exit" in failed.stdout


def test_stages_refuses_a_single_stage_target(tmp_path):
    result = run_side_by_side(tmp_path, "embed@density")
    assert result.returncode == 2
    assert "run whole pipelines" in result.stderr


def test_stages_in_a_folder_without_a_dvc_project_is_one_line(tmp_path):
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    result = run_side_by_side(tmp_path)
    assert result.returncode != 0
    assert result.stderr.startswith("repro: `dvc dag --dot` failed: ")
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_keep_maps_reruns_every_stage_but_the_up_to_date_map_stages(tmp_path):
    """``make rescore``: the maps restored from the store are kept, the rest is recomputed; a
    map stage that is not up to date is refused in one line before anything runs."""
    dvc = [sys.executable, "-m", "dvc"]
    subprocess.run([*dvc, "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "stamp.py").write_text(STAMP)
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  generate: {cmd: python stamp.py generate 0, deps: [stamp.py], outs: [generate.txt]}\n"
        "  embed: {cmd: python stamp.py embed 0, deps: [generate.txt], outs: [embed.txt]}\n"
        "  score: {cmd: python stamp.py score 0, deps: [embed.txt], outs: [score.txt]}\n")
    assert run_side_by_side(tmp_path).returncode == 0
    made = {name: stamps(tmp_path, name) for name in ("generate", "embed", "score")}

    kept = run_side_by_side(tmp_path, "--keep-maps", "--force")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert stamps(tmp_path, "embed") == made["embed"]
    assert stamps(tmp_path, "generate") != made["generate"]
    assert stamps(tmp_path, "score") != made["score"]

    (tmp_path / "embed.txt").unlink()
    refused = run_side_by_side(tmp_path, "--keep-maps", "--force")
    assert refused.returncode == 2 and not (tmp_path / "embed.txt").exists()
    assert refused.stderr.count("\n") == 1
    assert "1 map stage(s) are not up to date (embed)" in refused.stderr
