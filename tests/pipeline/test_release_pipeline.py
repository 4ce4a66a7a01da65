"""A later release is a folder that DVC rebuilds with the root's pipeline and its own params.

``releases/<tag>/dvc.yaml`` is generated from the root's (tools/release_pipeline.py): the
same stages but those that belong to the checkout, code paths moved, outputs in the folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from drfidelity.core.layout import RELEASES, published_release, release_root
from drfidelity.core.params import load_params
from pipeline_helpers import REPO, run

LATER = RELEASES[1:]


def tool():
    spec = importlib.util.spec_from_file_location("release_pipeline",
                                                  REPO / "tools" / "release_pipeline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("tag", LATER)
def test_a_release_runs_every_stage_of_the_root_but_the_checkouts(tag):
    """Same stages and commands, each dep either the root's code moved below the folder or a
    path inside it; the comparison named after the release."""
    root = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    release = yaml.safe_load(tool().release_pipeline(tag))["stages"]
    assert set(release) == set(root) - set(tool().CHECKOUT_STAGES)
    for name, stage in release.items():
        body, theirs = stage.get("do", stage), root[name].get("do", root[name])
        assert body["cmd"].split(" --reuse ")[0].replace("${item.reuse}", "") == theirs["cmd"]
        donors = {f"../../{_out}" for _out in (next(iter(o)) if isinstance(o, dict) else o
                                               for o in theirs.get("outs", []))}
        for dep in body["deps"]:
            assert (dep.startswith(("../../src/", "../../method_code/")) or dep in donors
                    or dep == "${item.donor}"
                    or not dep.startswith(("src/", "method_code/", "..", "/"))), dep
        assert "results/release_diff" not in body["deps"]
        assert not any("scale" in p for p in body.get("params", []) if isinstance(p, dict))
    compared = [next(iter(o)) for o in release["compare"]["outs"]]
    assert compared == [f"results/comparison_{tag.replace('.', '_')}.{ext}"
                        for ext in ("csv", "md")]


def test_v1_4_0_takes_the_checkout_s_maps_where_the_settings_agree():
    """The main benchmark (the same data, methods and settings in both) and the studies
    whose params agree read the checkout's maps of the same stage; the random walk (8 series,
    not 6) and the noise-dims grid (other dimensions) compute their own, and so does toorPIA
    (its maps are the release's imports)."""
    text = tool().release_pipeline("v1.4.0")
    document = yaml.safe_load(text)
    embed = document["stages"]["embed"]
    donor = "../../embeddings/${item.dataset}/${item.method}"
    assert embed["cmd"].endswith(f" --reuse {donor}") and donor in embed["deps"]
    items = document["vars"][0]["study_maps"]
    reusing = {key for key, item in items.items() if item["reuse"]}
    expected = {key for key, item in items.items()
                if item["study"] in ("addplot", "hyperparams", "sweep_outlier_factor",
                                     "sweep_minority_frac") and item["method"] != "toorPIA"}
    assert reusing == expected
    for key, item in items.items():
        if key in reusing:
            assert item["donor"] == f"../../embeddings/studies/{item['study']}/{item['method']}"
            assert item["reuse"] == f" --reuse {item['donor']}"
        else:
            assert item["donor"] == item["maps"][1]  # a dep it has anyway


@pytest.mark.parametrize("tag", LATER)
def test_dvc_reads_the_release_pipeline_with_the_release_params(tag, tmp_path):
    """DVC resolves the generated file in the release's folder: its stages, their matrix
    items from that folder's params.yaml (v1.4.0: the same five datasets), each study."""
    folder = tmp_path / release_root(Path(), tag)
    folder.mkdir(parents=True)
    shutil.copy(release_root(REPO, tag) / "params.yaml", folder / "params.yaml")
    (folder / "dvc.yaml").write_text(tool().release_pipeline(tag))
    run(["git", "init", "-q"], tmp_path)
    run(["dvc", "init", "-q"], tmp_path)
    listed = run(["dvc", "stage", "list", "--name-only", str(folder / "dvc.yaml")], tmp_path)
    names = {name.rsplit(":", 1)[-1] for name in listed.stdout.split()}
    assert {f"generate@{d}" for d in load_params(folder / "params.yaml").datasets} <= names
    study_maps = yaml.safe_load((REPO / "studies.yaml").read_text())["study_maps"]
    assert {f"study_embed@{key}" for key in study_maps} <= names
    assert {"compare", "report"} <= names and "release_diff" not in names


@pytest.mark.parametrize("tag", LATER)
def test_a_release_folder_holds_what_its_stages_read(tag):
    """Its configuration, its manifest, and the two links its maps and tables are read by."""
    folder = release_root(REPO, tag)
    load_params(folder / "params.yaml")
    assert json.loads((folder / "external_embeddings.manifest.json").read_text())["entries"]
    assert os.readlink(folder / "external_maps") == "external_embeddings"
    assert published_release(folder) == tag
    assert published_release(REPO) == RELEASES[0]


@pytest.mark.parametrize("tag", LATER)
def test_the_committed_release_pipeline_is_the_generated_one(tag):
    """A release's committed dvc.yaml is what the root's pipeline generates today, and its
    dvc.lock is committed beside it (--check alone passes while the file is absent)."""
    folder = release_root(REPO, tag)
    assert (folder / "dvc.yaml").read_text() == tool().release_pipeline(tag), \
        "stale: run python tools/release_pipeline.py, then rebuild the release"
    assert "stages" in yaml.safe_load((folder / "dvc.lock").read_text())


def test_a_stale_release_pipeline_is_named(monkeypatch, capsys, tmp_path):
    """--check names a written pipeline that differs from what the root's would generate."""
    module = tool()
    written = tmp_path / "dvc.yaml"
    written.write_text("stages: {}\n")
    shutil.copy(release_root(REPO, LATER[0]) / "params.yaml", tmp_path / "params.yaml")
    monkeypatch.setattr(module, "release_root", lambda repo, tag: tmp_path)
    assert module.main(["--check"]) == 1
    assert f"{tmp_path.name}/dvc.yaml" in capsys.readouterr().err
