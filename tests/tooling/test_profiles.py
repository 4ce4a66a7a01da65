"""tools/profiles.py: each profile's `dvc exp run` flags give the params its rewrite gives,
every profile is valid params, its targets are stages of dvc.yaml, and a wrong name is refused."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
import yaml
from dvc.repo import Repo
from dvc.utils.hydra import apply_overrides

from drfidelity.core.params import parse_params
from drfidelity.studies import study
from pipeline_helpers import REPO
from profiles import kick  # tools/ is on sys.path (pipeline_helpers)

PROFILES = [["kick"], ["quick"]] + [["study", name] for name in
                                    yaml.safe_load((REPO / "params.yaml").read_text())
                                    ["studies"]]


def profiles_cli(*args: str, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "tools" / "profiles.py"), *args],
                          cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("profile", PROFILES, ids=" ".join)
def test_flags_give_the_rewritten_params(profile, tmp_path):
    """DVC's own -S machinery on the printed flags writes what `apply` writes."""
    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    printed = profiles_cli("flags", *profile).stdout.split()
    assert printed[::2] == ["-S"] * (len(printed) // 2) and len(printed) % 2 == 0, printed
    assert printed, "a profile that changes nothing"
    apply_overrides(tmp_path / "params.yaml", printed[1::2])
    by_flags = yaml.safe_load((tmp_path / "params.yaml").read_text())

    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    done = profiles_cli("--params", str(tmp_path / "params.yaml"), "apply", *profile)
    assert done.returncode == 0, done.stderr
    rewritten = yaml.safe_load((tmp_path / "params.yaml").read_text())
    assert by_flags == rewritten
    # raises ParamsError on anything the stages would refuse (a study's section where the
    # study loads)
    params = parse_params(rewritten)
    for name in params.studies:
        study(name).settings(params)


@pytest.fixture(scope="module")
def stage_names() -> set[str]:
    return {stage.addressing for stage in Repo(str(REPO)).index.stages}


@pytest.mark.parametrize("profile", PROFILES, ids=" ".join)
def test_targets_are_stages(profile, stage_names):
    targets = profiles_cli("targets", *profile).stdout.split()
    assert set(targets) <= stage_names
    assert bool(targets) == (profile != ["kick"])  # kick runs the whole pipeline


@pytest.mark.parametrize("words", [["slow"], ["study"], ["study", "nope"], ["kick", "x"]])
def test_an_unknown_profile_is_one_line_with_the_known_ones(words):
    done = profiles_cli("flags", *words)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "profiles: kick, quick, study NAME (NAME one of addplot," in done.stderr


def test_a_missing_params_file_is_one_line(tmp_path):
    done = profiles_cli("--params", str(tmp_path / "none.yaml"), "flags", "quick")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "cannot read" in done.stderr


def test_a_profile_starts_from_the_committed_params_not_a_previous_experiment(tmp_path):
    """After an experiment, `dvc exp run` leaves its params in the working params.yaml; the
    next profile's flags still give the profile of the committed file, not one on top."""
    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "params.yaml"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q",
                    "-m", "params"], cwd=tmp_path, check=True)
    fresh = tmp_path / "fresh.yaml"
    shutil.copy(tmp_path / "params.yaml", fresh)
    assert profiles_cli("--params", str(fresh), "apply", "quick").returncode == 0
    wanted = yaml.safe_load(fresh.read_text())

    # a previous experiment: a study profile with a UMAP knob on top
    previous = profiles_cli("--params", str(tmp_path / "params.yaml"), "flags",
                            "study", "noise_dims").stdout.split()[1::2]
    apply_overrides(tmp_path / "params.yaml", previous + ["method_params.UMAP.min_dist=0.5"])
    printed = profiles_cli("--params", str(tmp_path / "params.yaml"), "flags",
                           "quick").stdout.split()
    apply_overrides(tmp_path / "params.yaml", printed[1::2])
    assert yaml.safe_load((tmp_path / "params.yaml").read_text()) == wanted


def test_apply_writes_the_study_maps_of_the_profiles_methods_alone(tmp_path):
    """The kick's copy gets a map stage per (study, method) of its own methods only, the rest of
    studies.yaml as committed: the other methods' stages would make nothing, at a few
    seconds each."""
    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    done = profiles_cli("--params", str(tmp_path / "params.yaml"), "apply", "kick")
    assert done.returncode == 0, done.stderr
    methods = yaml.safe_load((tmp_path / "params.yaml").read_text())["methods"]
    written = yaml.safe_load((tmp_path / "studies.yaml").read_text())
    committed = yaml.safe_load((REPO / "studies.yaml").read_text())
    assert written.pop("study_maps") == {key: item for key, item
                                         in committed.pop("study_maps").items()
                                         if item["method"] in methods}
    assert written == committed


def test_every_study_of_the_kick_runs_jobs():
    """Each study of the kick has maps to make: a study whose grid names only methods
    the kick leaves out would run no job."""
    params = parse_params(kick(yaml.safe_load((REPO / "params.yaml").read_text())))
    for name in params.studies:
        jobs = [job for config in study(name).configs(params) for job in config.jobs]
        assert jobs, f"study {name} runs no job in the kick"
