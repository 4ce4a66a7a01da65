"""A release's map stage takes the checkout's maps where they are the same computation, and
only there: what it writes is byte for byte what computing gives, and a difference in data,
settings or seed, coordinates injected into the release, or a method that reads the release's
own files makes it compute (or inject) instead."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline_helpers import copy_run, cut_in_half, set_params, stage, stage_here, tree_digest

from drfidelity.core.layout import map_record
from drfidelity.core.params import load_params
from drfidelity.core.job import Job
from drfidelity.jobs.reuse import reused_map

DONE = "embeddings/density/t-SNE"  # two seeds, a stochastic method: the shared run's


@pytest.fixture
def release(small_run, tmp_path) -> Path:
    """A copy of the shared run standing for a later release of the same configuration,
    its maps of ``DONE`` removed."""
    assert len(tree_digest(small_run, DONE)) == 3  # status.json and two seeds' maps
    root = copy_run(small_run, tmp_path / "release")
    shutil.rmtree(root / DONE)
    return root


def test_the_same_computation_is_copied_byte_for_byte(small_run, release, capsys):
    capsys.readouterr()
    stage_here(release, "embed", "density/t-SNE", jobs=1, reuse=small_run / DONE)
    log = capsys.readouterr().out
    assert f"2 of 2 maps taken from {small_run / DONE}" in log and "0 to compute" in log
    assert "t-SNE seed" not in log  # no job ran
    assert tree_digest(release, DONE) == tree_digest(small_run, DONE)


def test_only_the_seeds_the_checkout_made_are_taken_and_the_rest_computes_the_same(
        small_run, release, tmp_path, capsys):
    donor = shutil.copytree(small_run / DONE, tmp_path / "donor")
    record = json.loads((donor / "status.json").read_text())
    record["methods"]["t-SNE"]["seeds"] = [0]
    (donor / "status.json").write_text(json.dumps(record))
    capsys.readouterr()
    stage_here(release, "embed", "density/t-SNE", jobs=1, reuse=donor)
    log = capsys.readouterr().out
    assert "1 of 2 maps taken" in log and "t-SNE seed 1" in log
    assert tree_digest(release, DONE) == tree_digest(small_run, DONE)


def test_a_configuration_with_more_seeds_takes_the_checkout_s_and_computes_the_rest(
        small_run, release, tmp_path, capsys):
    """The living configuration's case: the checkout made seeds 0-1, the configuration runs
    0-2. Seeds 0-1 are copied, seed 2 is computed, and the folder is byte for byte the one a
    run of all three seeds without the checkout's maps writes."""
    set_params(release, seeds=3)
    computed = copy_run(release, tmp_path / "computed")
    stage_here(computed, "embed", "density/t-SNE", jobs=1)
    capsys.readouterr()
    stage_here(release, "embed", "density/t-SNE", jobs=1, reuse=small_run / DONE)
    log = capsys.readouterr().out
    assert "2 of 3 maps taken" in log and "1 to compute" in log and "t-SNE seed 2" in log
    assert "t-SNE seed 0" not in log and "t-SNE seed 1" not in log
    assert len(tree_digest(release, DONE)) == 4  # status.json and three seeds' maps
    assert tree_digest(release, DONE) == tree_digest(computed, DONE)


@pytest.mark.parametrize("change", ["data", "settings", "injected"])
def test_a_different_computation_is_not_taken(small_run, release, tmp_path, capsys, change):
    donor = shutil.copytree(small_run / DONE, tmp_path / "donor")
    record = json.loads((donor / "status.json").read_text())
    entry = record["methods"]["t-SNE"]
    if change == "data":
        record["data_fingerprint"] = "0" * 64
    elif change == "settings":
        entry["settings"]["perplexity"] = entry["settings"]["perplexity"] + 1
    else:
        entry["injected"] = {"0": "external_embeddings/density/t-sne/embedding/x/seed0.npy",
                             "1": "external_embeddings/density/t-sne/embedding/x/seed1.npy"}
    (donor / "status.json").write_text(json.dumps(record))
    for seed in (0, 1):  # maps a copy would betray
        np.save(donor / f"seed{seed}.npy", np.zeros_like(np.load(donor / f"seed{seed}.npy")))
    capsys.readouterr()
    stage_here(release, "embed", "density/t-SNE", jobs=1, reuse=donor)
    assert "0 of 2 maps taken" in capsys.readouterr().out
    assert tree_digest(release, DONE) == tree_digest(small_run, DONE)


def test_other_settings_in_the_release_compute_their_own_maps(small_run, release, capsys):
    set_params(release, method_params={"t-SNE": {"perplexity": 12}})
    capsys.readouterr()
    stage_here(release, "embed", "density/t-SNE", jobs=1, reuse=small_run / DONE)
    assert "0 of 2 maps taken" in capsys.readouterr().out
    record = json.loads((release / DONE / "status.json").read_text())
    assert record["methods"]["t-SNE"]["settings"]["perplexity"] == 12
    assert (release / DONE / "seed0.npy").read_bytes() != (small_run / DONE /
                                                           "seed0.npy").read_bytes()


def test_coordinates_injected_into_the_release_win_over_the_checkout_s(small_run, tmp_path,
                                                                        capsys):
    from drfidelity.methods import EmbedContext
    from drfidelity.methods.external import store

    release = copy_run(small_run, tmp_path / "release")
    X = np.load(release / "data/density/X.npy")
    Y = np.random.default_rng(3).normal(size=(len(X), 2))
    tag = load_params(release / "params.yaml").tag
    store(Y, X, EmbedContext(release, "density", tag), "pca", "embedding", 0, {"source": "test"})
    capsys.readouterr()
    stage_here(release, "embed", "density/PCA", jobs=1,
               reuse=small_run / "embeddings/density/PCA")
    log = capsys.readouterr().out
    assert "0 of 1 maps taken" in log and "PCA seed 0 injected from" in log
    assert np.array_equal(np.load(release / "embeddings/density/PCA/seed0.npy"), Y)


def test_a_method_that_reads_the_release_s_own_files_is_never_taken(tmp_path):
    Y = np.ones((5, 2))
    np.save(tmp_path / "seed0.npy", Y)
    for method, settings in (("PCA", {}), ("toorPIA", {})):
        entry = {"status": "ok", "seeds": [0], "settings": settings, "injected": {}}
        (tmp_path / "status.json").write_text(json.dumps(
            {"data_fingerprint": "f", "methods": {method: entry},
             "maps": {"seed0.npy": map_record(method, 0, Y)}}))
        found = reused_map(tmp_path, f"embed density/{method}", Job.of(method, 0), "f",
                           settings, {"seed0": -1}, 5, None)
        assert (found is None) == (method == "toorPIA"), method


@pytest.mark.parametrize("damage", ["swapped", "status-truncated"])
def test_a_damaged_checkout_folder_is_refused_not_taken(maps_run, tmp_path, damage):
    """The checkout's folder is read like any map folder: PCA's map in Isomap's place, or a
    status.json cut short, stops the release's stage, naming the file and the method."""
    donor = shutil.copytree(maps_run / "embeddings/density/Isomap", tmp_path / "donor")
    record = json.loads((donor / "status.json").read_text())
    if damage == "swapped":
        shutil.copyfile(maps_run / "embeddings/density/PCA/seed0.npy", donor / "seed0.npy")
        message = (rf"^{donor}/seed0\.npy: sha256 [0-9a-f]{{8}}… differs from the "
                   r"[0-9a-f]{8}… status\.json records for Isomap seed 0 \(edited, truncated "
                   r"or swapped; rerun `dvc repro embed@density-Isomap`\)$")
    else:
        cut_in_half(donor / "status.json")
        message = (rf"^{donor}/status\.json of embed density/Isomap is not JSON \(.+\): "
                   r"truncated or edited; rerun `dvc repro embed@density-Isomap`$")
    with pytest.raises(ValueError, match=message):
        reused_map(donor, "embed density/Isomap", Job.of("Isomap", 0, {}),
                   record["data_fingerprint"], record["methods"]["Isomap"]["settings"],
                   {"seed0": -1}, 100, None)


def test_a_study_s_maps_are_taken_input_by_input(small_run, tmp_path, capsys):
    done = "embeddings/studies/sweep_outlier_factor/PCA"
    release = copy_run(small_run, tmp_path / "release")
    assert tree_digest(small_run, done)
    shutil.rmtree(release / done)
    capsys.readouterr()
    stage_here(release, "study_embed", "sweep_outlier_factor/PCA", jobs=1,
               reuse=small_run / done)
    log = capsys.readouterr().out
    taken, planned = (int(n) for n in log.split(" maps taken")[0].rsplit("] ", 1)[1]
                      .split(" of "))
    assert taken == planned > 1 and "0 to compute" in log
    assert tree_digest(release, done) == tree_digest(small_run, done)


def test_reuse_is_refused_by_a_stage_that_makes_no_maps(small_run):
    result = stage(small_run, "aggregate", "--reuse", "embeddings", check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--reuse is for the map stages (embed, study_embed), not aggregate" in \
        result.stderr
