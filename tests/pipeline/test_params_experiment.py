"""A refused ``dvc exp run -S`` leaves params.yaml as it was: DVC writes the ``-S`` values into
the file before any stage runs, and the stage that refuses them writes the baseline back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline_helpers import REPO, run

STAGE = """stages:
  generate:
    cmd: drfidelity stage generate density
    params: [data.n]
    outs: [data/density]
"""


@pytest.fixture
def experiment_repo(tmp_path: Path) -> Path:
    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    (tmp_path / "dvc.yaml").write_text(STAGE)
    for cmd in (["git", "init", "-q"], ["dvc", "init", "-q"],
                ["git", "add", "-A"], ["git", "-c", "user.name=t", "-c", "user.email=t@t",
                                       "commit", "-qm", "baseline"]):
        run(cmd, tmp_path)
    return tmp_path


def test_a_refused_experiment_leaves_params_yaml_byte_identical(experiment_repo):
    before = (experiment_repo / "params.yaml").read_bytes()
    done = run(["dvc", "exp", "run", "-S", "data.n=abc"], experiment_repo, check=False)
    assert done.returncode != 0
    assert (experiment_repo / "params.yaml").read_bytes() == before
    refusal = [line for line in done.stderr.splitlines() if line.startswith("drfidelity stage")]
    assert len(refusal) == 1 and "data.n must be an integer" in refusal[0]
    assert "is back as in" in refusal[0] and "data.n undone" in refusal[0]


def test_a_hand_edit_beside_the_refused_value_is_kept_and_named(experiment_repo):
    path = experiment_repo / "params.yaml"
    edited = path.read_text().replace("seeds: 3", "seeds: 4", 1)
    assert edited != path.read_text()
    path.write_text(edited)
    done = run(["dvc", "exp", "run", "-S", "data.n=abc"], experiment_repo, check=False)
    assert done.returncode != 0
    text = path.read_text()
    assert "seeds: 4" in text and "abc" in text  # nothing of the user's lost
    assert "still holds the experiment's values of data.n, seeds" in done.stderr
