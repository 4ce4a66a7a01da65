"""The pipeline end to end on small data: outputs, determinism, errors that change nothing."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from pipeline_helpers import (SMALL_RUN, build_dataset, build_small_run, copy_run, cut_in_half,
                              run, set_params, stage, stage_cli, stage_here, swap_files,
                              tree_digest, workspace)

OUTPUTS = ("data", "embeddings", "results", "REPORT.md", "paper")
TAG = "n{data__n}_d{data__d}_snr1".format(**SMALL_RUN)   # the shared run's configuration
N, D = SMALL_RUN["data__n"], SMALL_RUN["data__d"]


def run_all_stages(root, datasets):
    for dataset in datasets:
        build_dataset(root, dataset, run_stage=stage_here)
    stage_here(root, "aggregate")
    stage_here(root, "report")


def test_outputs_have_the_documented_shape(small_run):
    per_run = pd.read_csv(small_run / "results" / "metrics_per_run.csv")
    assert list(per_run.columns[:7]) == ["dataset", "snr", "method", "seed", "stochastic", "n", "d"]
    runs = [("PCA", 0), ("Isomap", 0), ("t-SNE", 0), ("t-SNE", 1), ("DREAMS", 0)]
    assert sorted(zip(per_run.dataset, per_run.method, per_run.seed)) == sorted(
        (dataset, method, seed) for dataset in ("density", "outliers") for method, seed in runs)
    assert per_run.loc[per_run.dataset == "density", "outlier_shepard__vs_ambient"].isna().all()
    assert per_run.loc[per_run.dataset == "outliers", "outlier_shepard__vs_ambient"].notna().all()
    aggregated = pd.read_csv(small_run / "results" / "metrics_aggregated.csv")
    assert dict(aggregated.groupby("method").n_runs.unique().map(list)) == {
        "PCA": [1], "Isomap": [1], "t-SNE": [2], "DREAMS": [1]}
    skipped = pd.read_csv(small_run / "results" / "skipped_methods.csv")
    assert sorted(zip(skipped.dataset, skipped.method)) == [("density", "toorPIA"),
                                                            ("outliers", "toorPIA")]
    for dataset, reason in zip(skipped.dataset, skipped.reason):
        assert f"dvc pull external_embeddings/{dataset}/toorpia/embedding.dvc" in reason
    report = (small_run / "REPORT.md").read_text()
    assert "## Non-uniform density" in report and "## Off-subspace outliers" in report
    # one per dataset, the add-plot test's and the hyper-parameter study's, and the appendix's
    # (the studies' random walks and noise dimensions, the main results' stability; no bridge
    # gaps: they are the transition dataset's, which the small run leaves out)
    assert sorted(p.name for p in (small_run / "paper" / "tables").iterdir()) == [
        "addplot.tex", "density.tex", "hyperparams.tex", "noise_dims.tex", "outliers.tex",
        "random_walk.tex", "stability.tex"]
    assert "Not measured: the bridges are the transition dataset's" in report


@pytest.mark.slow  # in the default suite, the shared run's stages run in the test process
def test_the_command_line_in_fresh_processes_gives_the_shared_runs_bytes(small_run, tmp_path):
    """Every stage as DVC runs it, a pool of two workers per embedding stage."""
    again = build_small_run(tmp_path / "again", run_stage=stage_cli, jobs=2)
    assert tree_digest(again, *OUTPUTS) == tree_digest(small_run, *OUTPUTS)


def copy_of(root, tmp_path):
    return copy_run(root, tmp_path / "copy")


def assert_clear_error(result, message):
    assert result.returncode == 2, result.stdout + result.stderr
    assert re.search(message, result.stderr), result.stderr
    assert "Traceback" not in result.stderr


#: the targets of the map stages, and the keys they do not check: the names of other methods
#: and datasets, another method's settings (each is read by the stages that list them)
MAP_TARGETS = ("dataset/method", "study/method")
NOT_READ_BY_A_MAP_STAGE = ("datasets", "methods", "method_params__UMAP__n_neighbors")


@pytest.mark.parametrize("key, value, message", [
    ("datasets", ["density", "spirals"], "unknown name.*spirals"),
    ("methods", ["PCA", "Spectral"], "unknown name.*Spectral"),
    ("data__snr", -2.0, r"data.snr must be > 0 \(inf means no noise\)"),
    ("data__snr", "noisy", "data.snr must be a positive number or .inf."),
    ("seeds", "three", "seeds must be an integer"),
    ("data__snrr", 4, r"unknown key data.snrr \(did you mean 'snr'\?\)"),
    ("method_params__UMAP__n_neighbors", -3, "method_params.UMAP.n_neighbors must be >= 2"),
])
def test_bad_params_stop_every_stage_and_change_nothing(small_run, tmp_path, key, value, message,
                                                       capsys, monkeypatch):
    """The command's own code in this process (its process start is tested with the errors
    below): every stage refuses before it starts; a map stage reads no list of names and checks
    its own method's settings alone, so it refuses those of its own method (UMAP's here)."""
    from drfidelity import cli, pipeline
    from drfidelity.core import runtime

    def started(parent):
        raise AssertionError("the embed stage started")

    monkeypatch.setattr(runtime, "die_with_parent", started)
    root = copy_of(small_run, tmp_path)
    before = tree_digest(root, *OUTPUTS)
    set_params(root, **{key: value})
    targets = {"dataset": ["density"], "study": ["addplot"], "dataset/method": ["density/PCA"],
               "study/method": ["addplot/PCA"], None: []}
    with contextlib.chdir(root):
        for name in pipeline.STAGES:
            capsys.readouterr()
            target = importlib.import_module(f"drfidelity.pipeline.{name}").TARGET
            if target in MAP_TARGETS and key in NOT_READ_BY_A_MAP_STAGE:
                continue
            code = cli.main(["stage", name, *targets[target]])
            assert_clear_error(SimpleNamespace(returncode=code, stdout="",
                                               stderr=capsys.readouterr().err), message)
        if key.startswith("method_params__UMAP"):
            code = cli.main(["stage", "study_embed", "addplot/UMAP"])
            assert_clear_error(SimpleNamespace(returncode=code, stdout="",
                                               stderr=capsys.readouterr().err), message)
    assert tree_digest(root, *OUTPUTS) == before


@pytest.mark.parametrize("key, value, message", [
    ("data__d", 5, "latent"),
    ("data__n", 5, "n"),
    ("dataset_params__density__core_frac", -0.5, "core_frac"),
])
def test_bad_dataset_values_stop_generate_and_change_nothing(small_run, tmp_path, key, value,
                                                              message):
    root = copy_of(small_run, tmp_path)
    before = tree_digest(root, *OUTPUTS)
    set_params(root, **{key: value})
    assert_clear_error(stage(root, "generate", "density", check=False), message)
    assert tree_digest(root, *OUTPUTS) == before


def test_stale_data_is_refused(small_run, tmp_path):
    root = copy_of(small_run, tmp_path)
    set_params(root, data__d=64)
    assert_clear_error(stage(root, "embed", "density/PCA", check=False),
                       "data/density was generated with .*d.*run the generate stage")


def test_stage_argument_errors(small_run):
    assert "needs <dataset>/<method>" in stage(small_run, "embed", check=False).stderr
    for target, complaint in (("density", "expected <dataset>/<method>"),
                              ("density/UMAP", "expected <dataset>/<method>"),
                              ("clusters/PCA", "not in params.yaml `datasets`")):
        result = stage(small_run, "embed", target, check=False)
        assert result.returncode == 2 and complaint in result.stderr, target
    nope = stage(small_run, "study_embed", "addplot/Spectral", check=False)
    assert nope.returncode == 2 and "a registered method" in nope.stderr
    assert "takes no dataset name" in stage(small_run, "report", "density", check=False).stderr
    result = stage(small_run, "generate", "clusters", check=False)
    assert result.returncode == 2 and "not in params.yaml `datasets`" in result.stderr


@pytest.mark.slow  # the clean-clone test also checks that a second repro runs nothing
@pytest.mark.skipif(bool(os.environ.get("CI")),
                    reason="CI's kick-the-tires (in the image) runs the whole pipeline with DVC "
                           "and fails if `dvc repro --dry` would then run anything")
def test_dvc_repro_twice_runs_nothing_the_second_time(tmp_path):
    root = workspace(tmp_path / "dvc", **{**SMALL_RUN, "datasets": ["clusters"]})
    first = run(["dvc", "repro"], root)
    assert "Running stage 'report'" in first.stdout
    second = run(["dvc", "repro"], root)
    assert "Running stage" not in second.stdout
    assert "up to date" in run(["dvc", "status"], root).stdout


def test_probe_datasets_get_their_readouts(tmp_path):
    """random_walk gets the trajectory readouts, noise_dims the label-separation columns."""
    datasets = ["random_walk", "noise_dims"]
    root = workspace(tmp_path / "probes", data__n=600, data__d=20, data__snr="inf",
                     datasets=datasets, methods=["PCA"], bootstrap__n_boot=50,
                     dataset_params={})
    run_all_stages(root, datasets)
    per_run = pd.read_csv(root / "results" / "metrics_per_run.csv").set_index("dataset")
    walk, dims = per_run.loc["random_walk"], per_run.loc["noise_dims"]
    for column in ("within_series_shepard", "within_series_near_shepard", "cross_series_shepard",
                   "step_structure"):
        assert np.isfinite(walk[column]) and np.isnan(dims[column])
    for column in ("knn_acc_k10", "silhouette_2d"):
        assert np.isfinite(dims[column]) and np.isnan(walk[column])
    assert walk["full_shepard"] == pytest.approx(walk["shepard_p100__vs_ambient"])


def test_a_failing_method_fails_the_stage_naming_it_and_writes_nothing(small_run, tmp_path,
                                                                       monkeypatch):
    from drfidelity.core.params import load_params
    from drfidelity.jobs import runner
    from drfidelity.methods import pca
    from drfidelity.pipeline import embed

    def broken(X, seed, context):
        raise FloatingPointError("diverged")

    def in_this_process(function, *args, initializer, initargs):
        """Every job runs in a fresh process; here in this one, where the patch is seen (with
        the job's input, not the fresh process's watch on its stage)."""
        monkeypatch.setattr(runner, "_worker_inputs", initargs[0])
        return function(*args)

    root = copy_of(small_run, tmp_path)
    before = tree_digest(root, "embeddings")
    monkeypatch.setattr(pca, "fit_pca", broken)  # the registry finds the wrapper by name
    monkeypatch.setattr(runner, "in_fresh_process", in_this_process)
    with pytest.raises(runner.JobsFailed, match=r"^embed density/PCA: 1 job\(s\) failed: PCA "
                                               r"seed 0: FloatingPointError: diverged$"):
        embed.run(load_params(root / "params.yaml"), "density/PCA", root, jobs=1)
    assert tree_digest(root, "embeddings") == before


def test_a_rejected_cache_is_one_line_naming_dataset_method_and_seed(small_run, tmp_path):
    from drfidelity.methods import EmbedContext
    from drfidelity.methods.external import store

    root = copy_of(small_run, tmp_path)
    before = tree_digest(root, *OUTPUTS)
    set_params(root, methods=["PCA", "toorPIA"])
    other = np.zeros((N, D))  # the cached map claims to belong to other data
    store(np.zeros((N, 2)), other, EmbedContext(root, "density", TAG),
          "toorpia", "embedding", 0, {"endpoint": "test"})
    result = stage(root, "embed", "density/toorPIA", "--jobs", "1", check=False)
    assert_clear_error(result, r"^drfidelity stage embed: error: embed density/toorPIA: 1 "
                               r"job\(s\) failed: toorPIA seed 0: ValueError: .*computed for "
                               r"other data")
    assert len(result.stderr.strip().splitlines()) == 1
    debug = stage(root, "embed", "density/toorPIA", "--jobs", "1", "--debug", check=False)
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert tree_digest(root, *OUTPUTS) == before


def test_status_records_the_settings_used(small_run):
    import json

    status = json.loads((small_run / "embeddings/density/Isomap/status.json").read_text())
    assert status["methods"]["Isomap"]["settings"] == {"n_neighbors": 15}


def test_clamped_values_are_recorded_as_used():
    from drfidelity.pipeline.embed import used_settings
    from drfidelity.core.params import load_params

    from pipeline_helpers import REPO

    params = load_params(REPO / "params.yaml")
    assert used_settings(params, "t-SNE", 1000) == {"perplexity": 30}
    assert used_settings(params, "t-SNE", 50) == {"perplexity": 16}
    assert used_settings(params, "UMAP", 10) == {"n_neighbors": 9, "min_dist": 0.1}
    assert used_settings(params, "DREAMS", 40)["perplexity"] == 13


def test_any_methods_coordinates_can_be_injected_and_are_marked(small_run, tmp_path, capsys):
    from drfidelity.methods import EmbedContext
    from drfidelity.methods.external import store

    root = copy_of(small_run, tmp_path)
    set_params(root, methods=["PCA", "Isomap"])
    X = np.load(root / "data" / "density" / "X.npy")
    Y = np.random.default_rng(7).normal(size=(N, 2))
    path = store(Y, X, EmbedContext(root, "density", TAG), "pca", "embedding", 0,
                 {"source": "test"})
    assert path == root / f"external_embeddings/density/pca/embedding/{TAG}/seed0.npy"
    capsys.readouterr()
    stage_here(root, "embed", "density/PCA", jobs=1)
    assert "PCA seed 0 injected from external_embeddings/density/pca/" in capsys.readouterr().out
    assert np.array_equal(np.load(root / "embeddings/density/PCA/seed0.npy"), Y)
    stage_here(root, "score", "density")
    rows = pd.read_csv(root / "results/per_run/density.csv").set_index("method")
    assert rows.columns[-1] == "injected"
    assert bool(rows.loc["PCA", "injected"]) and not bool(rows.loc["Isomap", "injected"])
    before = pd.read_csv(small_run / "results/per_run/density.csv").set_index("method")
    assert rows.loc["Isomap", "full_shepard"] == before.loc["Isomap", "full_shepard"]
    assert rows.loc["PCA", "full_shepard"] != before.loc["PCA", "full_shepard"]


PARENT = """
import os, sys, threading, time
from drfidelity.jobs import runner
from drfidelity.jobs.fresh import in_fresh_process, preload

preload(["drfidelity.jobs.runner"])
for _ in range(2):  # two jobs running, as in a stage with jobs: 2
    threading.Thread(target=in_fresh_process, args=(time.sleep, 120), daemon=True,
                     kwargs={"initializer": runner._init_worker, "initargs": ({}, os.getpid())}).start()
time.sleep(3)
print("running", flush=True)
time.sleep(120)
"""


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"  # an unreaped zombie has already exited


def _descendants(pid: int) -> set[int]:
    parents = {int(p.name): int(stat[1]) for p in Path("/proc").iterdir() if p.name.isdigit()
               for stat in [_stat(int(p.name))] if stat is not None}
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        children = {child for child, ppid in parents.items() if ppid == parent}
        found |= children
        todo.extend(children)
    return found


def test_embed_jobs_die_when_the_stage_is_killed():
    """A stage's job processes (forked by its forkserver, not by the stage) and the
    forkserver itself end when the stage is killed, even by SIGKILL."""
    import signal
    import subprocess
    import sys
    import time

    with subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE,
                          text=True) as parent:
        assert parent.stdout.readline().strip() == "running"
        processes = _descendants(parent.pid)
        grandchildren = processes - {p for p in processes if _stat(p)[1] == str(parent.pid)}
        assert len(grandchildren) >= 2 and all(_alive(p) for p in processes)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in processes) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in processes), "job processes outlived their stage"


def test_every_map_is_recorded_with_the_sha256_of_its_file(maps_run):
    import hashlib
    import json

    from drfidelity.core.layout import load_embeddings
    from drfidelity.core.params import load_params

    for method in ("PCA", "Isomap"):
        folder = maps_run / "embeddings/density" / method
        record = json.loads((folder / "status.json").read_text())
        assert record["maps"] == {"seed0.npy": {
            "method": method, "seed": 0,
            "sha256": hashlib.sha256((folder / "seed0.npy").read_bytes()).hexdigest()}}
    status, maps = load_embeddings(load_params(maps_run / "params.yaml"), maps_run, "density")
    assert sorted(status) == sorted(maps) == ["Isomap", "PCA"]  # untouched: read as written
    for method, by_seed in maps.items():
        assert np.array_equal(by_seed[0],
                              np.load(maps_run / "embeddings/density" / method / "seed0.npy"))


def _one_row_short(path: Path) -> None:
    np.save(path, np.load(path)[:-1])


def _edit_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))


PCA_MAP, ISOMAP_MAP = "embeddings/density/PCA/seed0.npy", "embeddings/density/Isomap/seed0.npy"
PCA_STATUS, ISOMAP_STATUS = "embeddings/density/PCA/status.json", \
    "embeddings/density/Isomap/status.json"
DIFFERS = (r"^embeddings/density/PCA/seed0\.npy: sha256 [0-9a-f]{8}… differs from the "
           r"[0-9a-f]{8}… status\.json records for PCA seed 0 \(edited, truncated or swapped; "
           r"rerun `dvc repro embed@density-PCA`\)$")


@pytest.mark.parametrize("damage, message", [
    (lambda root: swap_files(root / PCA_MAP, root / ISOMAP_MAP), DIFFERS),
    (lambda root: _edit_one_byte(root / PCA_MAP), DIFFERS),
    (lambda root: cut_in_half(root / PCA_MAP), DIFFERS),
    (lambda root: _one_row_short(root / PCA_MAP), DIFFERS),
    (lambda root: (root / PCA_MAP).unlink(),
     r"^embeddings/density/PCA/seed0\.npy is missing: status\.json records it for PCA seed 0; "
     r"rerun `dvc repro embed@density-PCA`$"),
    (lambda root: cut_in_half(root / PCA_STATUS),
     r"^embeddings/density/PCA/status\.json of embed density/PCA is not JSON \(.+\): "
     r"truncated or edited; rerun `dvc repro embed@density-PCA`$"),
    (lambda root: swap_files(root / PCA_STATUS, root / ISOMAP_STATUS),
     r"^embeddings/density/PCA/status\.json records \['Isomap'\], not PCA \(swapped or "
     r"edited\); rerun `dvc repro embed@density-PCA`$"),
], ids=["maps-swapped", "one-byte-edited", "truncated", "one-row-short", "missing",
        "status-truncated", "status-swapped"])
def test_a_damaged_map_folder_is_refused_in_one_line_naming_file_and_method(
        maps_run, tmp_path, damage, message):
    from drfidelity.core.layout import load_embeddings
    from drfidelity.core.params import load_params

    root = copy_of(maps_run, tmp_path)
    damage(root)
    with contextlib.chdir(root), pytest.raises((ValueError, OSError), match=message):
        load_embeddings(load_params(Path("params.yaml")), Path("."), "density")


def test_a_status_json_from_before_maps_were_recorded_is_refused(maps_run, tmp_path):
    import json

    root = copy_of(maps_run, tmp_path)
    record = json.loads((root / PCA_STATUS).read_text())
    del record["maps"]
    (root / PCA_STATUS).write_text(json.dumps(record))
    assert_clear_error(stage(root, "score", "density", check=False),
                       r"^drfidelity stage score: error: embeddings/density/PCA/status\.json of "
                       r"embed density/PCA lacks maps \(edited, or written before maps were "
                       r"recorded\); rerun `dvc repro embed@density-PCA`\n$")


def test_swapped_maps_stop_the_score_stage_in_one_line(maps_run, tmp_path):
    root = copy_of(maps_run, tmp_path)
    swap_files(root / PCA_MAP, root / ISOMAP_MAP)
    result = stage(root, "score", "density", check=False)
    assert_clear_error(result, DIFFERS.replace("^", "^drfidelity stage score: error: ")
                       .replace("$", r"\n$"))
    assert not (root / "results/per_run/density.csv").exists()


def test_a_map_stage_run_again_writes_the_same_status_json(maps_run, tmp_path):
    root = copy_of(maps_run, tmp_path)
    stage_here(root, "embed", "density/PCA", jobs=2)
    assert tree_digest(root, "embeddings") == tree_digest(maps_run, "embeddings")
