"""A later release, and the living configuration, is a folder that DVC rebuilds with the
root's pipeline and its own params.

``releases/<name>/dvc.yaml`` is generated from the root's (tools/release_pipeline.py): the
same stages but those that belong to the checkout (and, for the living configuration, the
comparison and the studies it does not run), code paths moved, outputs in the folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from drfidelity.core.layout import (CONFIGURATIONS, LIVING, RELEASES, configuration_root,
                                    published_release, release_root)
from drfidelity.core.params import load_params
from pipeline_helpers import REPO, run

LATER = RELEASES[1:]


def tool():
    spec = importlib.util.spec_from_file_location("release_pipeline",
                                                  REPO / "tools" / "release_pipeline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_stages(tag: str) -> set[str]:
    """The root's stages a configuration runs: all but the checkout's, and for one without
    published tables or studies, without the comparison or the study stages."""
    module, folder = tool(), configuration_root(REPO, tag)
    root = set(yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"])
    left_out = set(module.CHECKOUT_STAGES)
    if published_release(folder) is None:
        left_out.add(module.COMPARE)
    if not load_params(folder / "params.yaml").studies:
        left_out |= set(module.STUDY_STAGES)
    return root - left_out


@pytest.mark.parametrize("tag", CONFIGURATIONS)
def test_a_configuration_runs_every_stage_of_the_root_but_the_checkouts(tag):
    """Same stages and commands, each dep either the root's code moved below the folder or a
    path inside it; the comparison named after the release."""
    root = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    release = yaml.safe_load(tool().release_pipeline(tag))["stages"]
    assert set(release) == expected_stages(tag)
    for name, stage in release.items():
        body, theirs = stage.get("do", stage), root[name].get("do", root[name])
        assert body["cmd"].split(" --reuse ")[0].replace("${item.reuse}", "") == theirs["cmd"]
        donors = {f"../../{_out}" for _out in (next(iter(o)) if isinstance(o, dict) else o
                                               for o in theirs.get("outs", []))}
        for dep in body["deps"]:
            assert (dep.startswith(("../../src/", "../../method_code/")) or dep in donors
                    or dep in ("${item.donor}", f"../../{tool().FROZEN_RANKING[0]}")
                    or not dep.startswith(("src/", "method_code/", "..", "/"))), dep
        assert "results/release_diff" not in body["deps"]
        assert not any("scale" in p for p in body.get("params", []) if isinstance(p, dict))
    if tag in RELEASES:
        compared = [next(iter(o)) for o in release["compare"]["outs"]]
        assert compared == [f"results/comparison_{tag.replace('.', '_')}.{ext}"
                            for ext in ("csv", "md")]


@pytest.mark.parametrize("tag", CONFIGURATIONS)
def test_every_data_dep_is_written_by_a_stage_of_the_configuration_or_is_its_link(tag):
    """What a configuration leaves out takes its deps along: no stage reads a file that only
    a stage it does not run would write (the living one: no studies, no comparison, no
    release diff, no scale study, nothing read through reference/published)."""
    document = yaml.safe_load(tool().release_pipeline(tag))
    written = [tool()._fixed(path) for stage in document["stages"].values()
               for path in tool()._paths(stage.get("do", stage)["outs"])]
    links = ("external_maps", "external_embeddings.manifest.json", "reference/published")
    for name, stage in document["stages"].items():
        for dep in tool()._paths(stage.get("do", stage)["deps"]):
            if (dep.startswith(("../../src/", "../../method_code/", "${item."))
                    or dep == f"../../{tool().FROZEN_RANKING[0]}"):
                continue  # code, a path its item names (code, imports, a donor), the frozen runs
            assert (dep.startswith(links) or any(tool()._inside(out, dep)
                                                 or tool()._inside(dep, out)
                                                 for out in written)), (name, dep)


def test_v1_4_0_takes_the_checkout_s_maps_where_the_settings_agree():
    """The main benchmark (the same data, methods and settings in both) and the studies
    whose maps' settings agree read the checkout's maps of the same stage, the noise-dims
    probe among them (other dimensions, drawn alike: the dims both run are taken); the random
    walk (8 series, not 6) computes its own, and so does toorPIA (its maps are the release's
    imports)."""
    document = yaml.safe_load(tool().release_pipeline("v1.4.0"))
    embed = document["stages"]["embed"]
    assert embed["foreach"] == "${main_maps}"
    assert embed["do"]["cmd"].endswith("${item.reuse}") and "${item.donor}" in embed["do"]["deps"]
    for key, item in document["vars"][0]["main_maps"].items():
        assert key == f"{item['dataset']}-{item['method']}"  # the matrix's stage names
        if item["method"] == "toorPIA":
            assert (item["donor"], item["reuse"]) == (f"data/{item['dataset']}", "")
        else:
            assert item["donor"] == f"../../embeddings/{item['dataset']}/{item['method']}"
            assert item["reuse"] == f" --reuse {item['donor']}"
    items = document["vars"][0]["study_maps"]
    reusing = {key for key, item in items.items() if item["reuse"]}
    expected = {key for key, item in items.items()
                if item["study"] != "random_walk" and item["method"] != "toorPIA"}
    assert reusing == expected
    for key, item in items.items():
        if key in reusing:
            assert item["donor"] == f"../../embeddings/studies/{item['study']}/{item['method']}"
            assert item["reuse"] == f" --reuse {item['donor']}"
        else:
            assert item["donor"] == item["maps"][1]  # a dep it has anyway


def test_the_living_configuration_takes_the_checkout_s_seeds_of_the_frozen_methods():
    """More seeds than the checkout: every frozen method's stage but toorPIA's reads the
    checkout's maps (seeds compare job by job, so seeds 0-2 are taken and the rest computed);
    a method the checkout does not run computes all of its own."""
    document = yaml.safe_load(tool().release_pipeline(LIVING))
    living = load_params(configuration_root(REPO, LIVING) / "params.yaml")
    frozen = load_params(REPO / "params.yaml")
    assert living.seeds > frozen.seeds
    items = document["vars"][0]["main_maps"]
    assert len(items) == len(living.datasets) * len(living.methods)
    for item in items.values():
        taken = item["method"] in frozen.methods and item["method"] != "toorPIA"
        assert bool(item["reuse"]) == taken, item
        assert item["donor"] == (f"../../embeddings/{item['dataset']}/{item['method']}" if taken
                                 else f"data/{item['dataset']}")


def test_the_living_studies_take_the_checkout_s_maps_of_the_frozen_methods():
    """Its grid and dims differ from the checkout's, which only chooses the maps made: every
    frozen method's study stage but toorPIA's reads the checkout's maps of the same stage."""
    document = yaml.safe_load(tool().release_pipeline(LIVING))
    frozen = load_params(REPO / "params.yaml")
    for item in document["vars"][0]["study_maps"].values():
        taken = item["method"] in frozen.methods and item["method"] != "toorPIA"
        assert bool(item["reuse"]) == taken, item


@pytest.mark.parametrize("change, same", [
    ({"dims": [6, 80]}, True), ({"rotated": True}, True), ({"toorpia_dims": [768]}, True),
    ({"data_seed": 7}, False), ({"cluster_std": 0.01}, False), ({"n_principal": 2}, False),
], ids=["dims", "rotated", "toorpia-dims", "data-seed", "cluster-std", "n-principal"])
def test_a_study_s_maps_are_shared_when_the_keys_that_draw_them_agree(change, same):
    """noise_dims' dims choose which inputs are made; its data seed, signal columns and
    cluster spread decide every input's bytes. ``methods`` only chooses the jobs."""
    from drfidelity.studies import study

    checkout = yaml.safe_load((REPO / "params.yaml").read_text())
    configuration = {**checkout, "studies": {
        "noise_dims": {**checkout["studies"]["noise_dims"], **change}}}
    compared = {"studies.noise_dims": study("noise_dims").map_keys, "methods": ()}
    keys = ["methods", "method_params.${item.method}", "studies.${item.study}", "data.n"]
    item = {"study": "noise_dims", "method": "PCA"}
    # the whole section compared, as before map_keys: every change refuses
    assert tool()._reads_same(keys, item, configuration, checkout) is False
    # with map_keys, and with another methods list (which only chooses the jobs)
    configuration["methods"] = ["PCA"]
    assert tool()._reads_same(keys, item, configuration, checkout, compared) is same


@pytest.mark.parametrize("tag", CONFIGURATIONS)
def test_only_a_configuration_without_published_tables_reads_the_frozen_ranking(tag):
    """The living report tells what moved from the checkout's ranking, so its report stage
    depends on the checkout's runs and the params keys that rank them; a release's does not."""
    report = yaml.safe_load(tool().release_pipeline(tag))["stages"]["report"]
    runs, keys = tool().FROZEN_RANKING
    reads = (f"../../{runs}" in report["deps"]
             and {"../../params.yaml": list(keys)} in report["params"])
    assert reads == (published_release(configuration_root(REPO, tag)) is None)


@pytest.mark.parametrize("tag", CONFIGURATIONS)
def test_dvc_reads_the_release_pipeline_with_the_release_params(tag, tmp_path):
    """DVC resolves the generated file in the configuration's folder: its stages, their
    matrix items from that folder's params.yaml (v1.4.0: the same five datasets), its
    studies, and its map stages under the matrix's names."""
    folder = tmp_path / configuration_root(Path(), tag)
    folder.mkdir(parents=True)
    shutil.copy(configuration_root(REPO, tag) / "params.yaml", folder / "params.yaml")
    (folder / "dvc.yaml").write_text(tool().release_pipeline(tag))
    run(["git", "init", "-q"], tmp_path)
    run(["dvc", "init", "-q"], tmp_path)
    listed = run(["dvc", "stage", "list", "--name-only", str(folder / "dvc.yaml")], tmp_path)
    names = {name.rsplit(":", 1)[-1] for name in listed.stdout.split()}
    params = load_params(folder / "params.yaml")
    assert {f"generate@{d}" for d in params.datasets} <= names
    assert {f"embed@{d}-{m}" for d in params.datasets for m in params.methods} <= names
    study_maps = yaml.safe_load((REPO / "studies.yaml").read_text())["study_maps"]
    assert {f"study_embed@{key}" for key, item in study_maps.items()
            if item["study"] in params.studies} <= names
    assert {name.split("@")[0] for name in names} == expected_stages(tag)


@pytest.mark.parametrize("tag", LATER)
def test_a_release_folder_holds_what_its_stages_read(tag):
    """Its configuration, its manifest, and the two links its maps and tables are read by."""
    folder = release_root(REPO, tag)
    load_params(folder / "params.yaml")
    assert json.loads((folder / "external_embeddings.manifest.json").read_text())["entries"]
    assert os.readlink(folder / "external_maps") == "external_embeddings"
    assert published_release(folder) == tag
    assert published_release(REPO) == RELEASES[0]


def test_the_living_folder_reads_the_checkout_s_toorpia_maps_and_publishes_nothing():
    """Its toorPIA maps are the checkout's imports (the one stored draw of each), through the
    same two links a release has; it has no published tables, so no comparison."""
    folder = configuration_root(REPO, LIVING)
    load_params(folder / "params.yaml")
    assert os.readlink(folder / "external_maps") == "external_embeddings"
    assert os.readlink(folder / "external_embeddings") == "../../external_embeddings"
    assert (os.readlink(folder / "external_embeddings.manifest.json")
            == "../../external_embeddings.manifest.json")
    assert "toorPIA" not in {row.method for row in pd.read_csv(
        folder / "results" / "skipped_methods.csv").itertuples()}
    assert published_release(folder) is None


@pytest.mark.parametrize("tag", CONFIGURATIONS)
def test_the_committed_release_pipeline_is_the_generated_one(tag):
    """A configuration's committed dvc.yaml is what the root's pipeline generates today, and
    its dvc.lock is committed beside it (--check alone passes while the file is absent)."""
    folder = configuration_root(REPO, tag)
    assert (folder / "dvc.yaml").read_text() == tool().release_pipeline(tag), \
        "stale: run python tools/release_pipeline.py, then rebuild the release"
    assert "stages" in yaml.safe_load((folder / "dvc.lock").read_text())


def test_a_stale_release_pipeline_is_named(monkeypatch, capsys, tmp_path):
    """--check names a written pipeline that differs from what the root's would generate."""
    module = tool()
    written = tmp_path / "dvc.yaml"
    written.write_text("stages: {}\n")
    shutil.copy(release_root(REPO, LATER[0]) / "params.yaml", tmp_path / "params.yaml")
    monkeypatch.setattr(module, "configuration_root", lambda repo, tag: tmp_path)
    assert module.main(["--check"]) == 1
    assert f"{tmp_path.name}/dvc.yaml" in capsys.readouterr().err


def test_compare_refuses_a_folder_without_published_tables(small_run, tmp_path):
    """The living configuration's pipeline has no compare stage; run by hand in a folder
    without the link, the stage says why in one line instead of comparing with nothing."""
    from pipeline_helpers import copy_run, stage

    root = copy_run(small_run, tmp_path / "unpublished")
    (root / "reference" / "published").unlink()
    result = stage(root, "compare", check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "reference/published does not exist: this configuration published no tables to "
        "compare with"), result.stderr
