"""Stage ``study_figures``: what it draws from the study maps and tables, what it says
about missing methods, the numbers it measures, and byte-stable PNGs."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from drfidelity.datasets.random_walk import make_random_walk
from drfidelity.pipeline import study_figures as stage
from drfidelity.core.layout import map_record, study_table_path
from drfidelity.core.params import load_params
from drfidelity.figures import style
from drfidelity.figures import studies as draw
from drfidelity.studies.sweep_outlier_factor import SWEEP

from pipeline_helpers import REPO, cut_in_half, swap_files

#: the previous release's study tables, copied as the stages' outputs.
PUBLISHED = ("addplot_per_run", "addplot_aggregated", "random_walk_aggregated",
             "sweep_outliers_aggregated", "sweep_outliers_per_run",
             "sweep_populations_aggregated", "dimsweep_aggregated",
             "dimsweep_embedding_aggregated", "hyperparam_sensitivity_aggregated")
#: the main benchmark's published tables the stage also draws from
PUBLISHED_MAIN = ("stability", "bridge_gaps")
SKIP_REASON = "maps not pulled (toorPIA cache absent)"
EXPECTED = {"basemap_addplot_gallery", "geometry_explainer", "trajectory_gallery",
            "sweep_outliers_curve", "populations_sweep_curve", "population_gallery_mf0.5",
            "population_gallery_mf0.05", "dimension_curve", "dims_grid",
            "hyperparam_sensitivity", "stability", "bridge_gaps"}


#: the input fingerprint the synthetic map folders record
FINGERPRINT = "f" * 64


def _save(folder: Path, **arrays) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, array in arrays.items():
        np.save(folder / f"{name}.npy", array)


def _method(label: str) -> str:
    return "toorPIA" if label.startswith("toorPIA") else label


def _maps(base: Path, key: str, labels: dict[str, list[int]], shapes: dict[str, int],
          skipped: dict[str, str], seed: int = 0) -> None:
    """Random maps (suffix -> rows) for each label and seed of input ``key``, in its method's
    folder below a study's maps ``base``, and each such folder's status.json."""
    rng = np.random.default_rng(seed)
    status: dict[str, dict] = {}
    records: dict[str, dict] = {}
    for label, seeds in labels.items():
        status.setdefault(_method(label), {})[label] = {"status": "ok", "seeds": seeds}
        for s in seeds:
            maps = {f"seed{s}{suffix}": rng.normal(size=(n, 2)) for suffix, n in shapes.items()}
            _save(base / _method(label) / key / label, **maps)
            records.setdefault(_method(label), {}).update(
                {f"{label}/{stem}.npy": map_record(label, s, Y) for stem, Y in maps.items()})
    for label, reason in skipped.items():
        status.setdefault(_method(label), {})[label] = {"status": "skipped", "seeds": [],
                                                        "reason": reason}
    for method, entries in status.items():
        (base / method / key).mkdir(parents=True, exist_ok=True)
        (base / method / key / "status.json").write_text(json.dumps(
            {"data_fingerprint": FINGERPRINT, "methods": entries,
             "maps": records.get(method, {})}))


def build_study_workspace(root: Path, published: Path) -> Path:
    """Published tables in results/ (the studies' in results/studies/), small synthetic data
    and maps for every study; toorPIA skipped everywhere with :data:`SKIP_REASON`."""
    study_table_path(root, "").parent.mkdir(parents=True, exist_ok=True)
    for name in PUBLISHED:
        shutil.copyfile(published / f"{name}.csv", study_table_path(root, name))
    for name in PUBLISHED_MAIN:
        shutil.copyfile(published / f"{name}.csv", root / "results" / f"{name}.csv")
    skip = {"toorPIA": SKIP_REASON}
    _save(root / "data" / "studies" / "addplot", labels_fit=np.repeat(np.arange(5), 20),
          add_anchor=np.repeat(np.arange(5), 2))
    _maps(root / "embeddings" / "studies" / "addplot", "", {"PCA": [0], "UMAP": [0, 1, 2]},
          {"_fit": 100, "_add": 60}, skip)
    walk = make_random_walk(n=400, d=200, seed=0, n_series=4)
    _save(root / "data" / "studies" / "random_walk", X=walk.clean, series=walk.extras["series"],
          t=walk.extras["t"])
    _maps(root / "embeddings" / "studies" / "random_walk", "", {"PCA": [0], "t-SNE": [0, 1, 2]},
          {"": 400}, skip)
    for frac in ("0.5", "0.05"):
        _save(root / "data" / "studies" / "sweep_minority_frac" / frac,
              labels=np.arange(80) % 10, population=(np.arange(80) < 8).astype(int))
        _maps(root / "embeddings" / "studies" / "sweep_minority_frac", frac,
              {"PCA": [0], "DREAMS": [0]}, {"": 80}, skip)
    rng = np.random.default_rng(3)
    for dim in (6, 40):
        labels = np.repeat(np.arange(3), 30)
        X = rng.normal(scale=0.01, size=(90, dim))
        X[:, 0] += labels  # well separated: the ambient kNN accuracy is 1
        _save(root / "data" / "studies" / "noise_dims" / f"dim{dim}", X=X, labels=labels)
        _maps(root / "embeddings" / "studies" / "noise_dims", f"dim{dim}",
              {"PCA": [0], "toorPIA-embedding": [0]}, {"": 90}, {"toorPIA": SKIP_REASON})
    return root


@pytest.fixture(scope="module")
def drawn_root(published_results, tmp_path_factory) -> Path:
    root = build_study_workspace(tmp_path_factory.mktemp("studies"), published_results)
    stage.run(load_params(REPO / "params.yaml"), root)
    return root


def facts_of(root: Path) -> dict:
    return json.loads((root / "figures" / "studies" / "facts.json").read_text())


def test_every_study_figure_is_drawn_and_named_in_the_facts(drawn_root):
    facts = facts_of(drawn_root)
    assert set(facts["files"]) == EXPECTED
    for key, path in facts["files"].items():
        assert (drawn_root / path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", key
    assert sorted(p.stem for p in (drawn_root / "figures" / "studies").glob("*.png")) == \
        sorted(EXPECTED)


def test_a_skipped_method_is_named_with_its_reason(drawn_root):
    facts = facts_of(drawn_root)
    for key in ("basemap_addplot_gallery", "trajectory_gallery", "population_gallery_mf0.5",
                "dims_grid"):
        assert facts[key]["skipped"] == {"toorPIA": SKIP_REASON}, key


def test_new_rows_are_flagged_from_the_tables(drawn_root, tmp_path):
    # the previous release's sweep tables have no `new` column: nothing is flagged new
    assert facts_of(drawn_root)["sweep_outliers_curve"]["new_methods"] == []
    per_run = pd.DataFrame({"method": ["PCA", "DREAMS", "DREAMS"], "new": [False, True, True]})
    assert stage.new_methods(None, per_run) == ["DREAMS"]
    assert stage.new_methods(per_run.assign(new=["False", "True", "False"])) == []


def test_new_methods_are_drawn_dashed_in_their_own_colour(published_results):
    aggregated = pd.read_csv(published_results / "sweep_outliers_aggregated.csv")
    fig = draw.sweep_curves(aggregated, "outlier_factor", SWEEP.plotted, "factor",
                            new_methods=("PCC",))
    lines = {line.get_label(): line for line in fig.axes[0].get_lines() if line.get_label()[0] != "_"}
    assert lines["PCC (new)"].get_linestyle() == "--" and lines["PCA"].get_linestyle() == "-"
    assert lines["PCA"].get_color() == style.method_color("PCA")
    np.testing.assert_allclose(lines["PCA"].get_ydata()[:1], [0.5910556148279723])
    style.png_bytes(fig)


def test_the_ambient_baseline_is_measured_on_the_data(drawn_root):
    # separated labels: the raw data's kNN vote is perfect at every D
    assert facts_of(drawn_root)["dimension_curve"]["ambient"] == {"6": 1.0, "40": 1.0}


def test_geometry_explainer_measures_orthogonal_rays():
    walk = make_random_walk(n=800, d=400, seed=1, n_series=4)
    _, facts = draw.geometry_explainer(walk.clean, walk.extras["series"], walk.extras["t"])
    assert facts["radius_exponent"] == pytest.approx(0.5, abs=0.05)
    assert facts["step_angle_median"] == pytest.approx(90, abs=3)
    assert facts["cross_angle_median"] == pytest.approx(90, abs=5)
    assert facts["pythagoras_median"] == pytest.approx(1.0, abs=0.05)
    assert (facts["n_series"], facts["length"], facts["d"]) == (4, 200, 400)


def test_untouched_maps_are_read_and_an_absent_study_is_none(tmp_path):
    _maps(tmp_path, "", {"PCA": [0, 1], "UMAP": [2]}, {"": 5}, {"toorPIA": SKIP_REASON})
    maps, seeds, skipped = stage.lowest_seed_maps(tmp_path)
    assert sorted(maps) == ["PCA", "UMAP"] and seeds == {"PCA": 0, "UMAP": 2}
    assert np.array_equal(maps["UMAP"], np.load(tmp_path / "UMAP/UMAP/seed2.npy"))
    assert skipped == {"toorPIA": SKIP_REASON}
    assert stage.lowest_seed_maps(tmp_path / "nothing") is None


def _differs(label: str, seed: int) -> str:
    return (rf"{label}/{label}/seed{seed}\.npy: sha256 [0-9a-f]{{8}}… differs from the "
            rf"[0-9a-f]{{8}}… status\.json records for {label} seed {seed} \(edited, truncated "
            rf"or swapped; rerun `dvc repro study_embed@{{study}}-{label}`\)$")


UMAP_DIFFERS = _differs("UMAP", 2)


@pytest.mark.parametrize("damage, message", [
    (lambda base: swap_files(base / "PCA/PCA/seed0.npy", base / "UMAP/UMAP/seed2.npy"),
     _differs("PCA", 0)),
    (lambda base: cut_in_half(base / "UMAP/UMAP/seed2.npy"), UMAP_DIFFERS),
    (lambda base: np.save(base / "UMAP/UMAP/seed2.npy", np.zeros((4, 2))), UMAP_DIFFERS),
    (lambda base: (base / "UMAP/UMAP/seed2.npy").unlink(),
     r"UMAP/UMAP/seed2\.npy is missing: status\.json records it for UMAP seed 2; rerun "
     r"`dvc repro study_embed@{study}-UMAP`$"),
    (lambda base: cut_in_half(base / "UMAP/status.json"),
     r"UMAP/status\.json of study_embed {study}/UMAP is not JSON \(.+\): truncated or "
     r"edited; rerun `dvc repro study_embed@{study}-UMAP`$"),
], ids=["maps-swapped", "truncated", "one-row-short", "missing", "status-truncated"])
def test_a_damaged_study_map_is_refused_by_figures_and_scores(tmp_path, damage, message):
    """In one line naming the file and the map label, whichever stage reads it."""
    from drfidelity.core.job import Job
    from drfidelity.studies.run.scoring import load_maps

    base = tmp_path / "study"
    _maps(base, "", {"PCA": [0], "UMAP": [2]}, {"": 5}, {})
    damage(base)
    message = message.replace("{study}", "study")
    with pytest.raises((ValueError, OSError), match=message):
        stage.lowest_seed_maps(base)
    with pytest.raises((ValueError, OSError), match=message):
        load_maps((Job.of("PCA", 0), Job.of("UMAP", 2)), base, "", FINGERPRINT)


def test_without_any_input_the_stage_writes_empty_facts(tmp_path):
    stage.run(load_params(REPO / "params.yaml"), tmp_path)
    assert facts_of(tmp_path) == {"files": {}}


DIGEST = r"""
import hashlib, json, sys
from pathlib import Path
from drfidelity.pipeline import study_figures
from drfidelity.core.layout import map_record
from drfidelity.core.params import load_params
root = Path(sys.argv[1])
study_figures.run(load_params(sys.argv[2]), root)
print(json.dumps({p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                  for p in sorted((root / "figures" / "studies").iterdir())}))
"""


def test_png_bytes_are_identical_in_a_fresh_process_and_after_other_work(drawn_root,
                                                                        tmp_path):
    """The fixture drew the figures in this process, after other tests; a fresh interpreter
    draws them again from the same inputs."""
    root = tmp_path / "fresh"
    shutil.copytree(drawn_root, root)
    shutil.rmtree(root / "figures")
    fresh = json.loads(subprocess.run(
        [sys.executable, "-c", DIGEST, str(root), str(REPO / "params.yaml")],
        capture_output=True, text=True, check=True).stdout.splitlines()[-1])
    here = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((drawn_root / "figures" / "studies").iterdir())}
    assert fresh == here and len(here) == len(EXPECTED) + 1
