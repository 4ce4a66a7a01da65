"""tools/exps.py (`make exps`): one screen of experiments, in the shape `dvc exp show --json`
gives (DVC 3): only the params that differ, a method an experiment did not run shown as '-',
never wider than asked, and what was left out said."""

from __future__ import annotations

import json
import subprocess
import sys

from pipeline_helpers import REPO

BASE_PARAMS = {"datasets": ["density", "clusters"], "methods": ["PCA", "UMAP", "DREAMS"],
               "seeds": 3, "method_params": {"UMAP": {"min_dist": 0.1, "n_neighbors": 15}}}
BASE_METRICS = {"PCA": {"full_rho": 0.58247, "sigma": 22}, "UMAP": {"full_rho": 0.38333,
                "sigma": 2}, "DREAMS": {"full_rho": 0.53642, "sigma": 31},
                "winner": {"density": "DREAMS", "clusters": "PCA"}}


def rev(name, params, metrics, error=None):
    return {"rev": name * 4, "name": name, "error": error, "experiments": None,
            "data": {"params": {"params.yaml": {"data": params}},
                     "metrics": {"results/headline.json": {"data": metrics}},
                     "deps": {"src/drfidelity/core": {"hash": "0" * 32}}}}


def show(experiments):
    commit = rev("main", BASE_PARAMS, BASE_METRICS)
    commit["experiments"] = [{"name": name, "executor": executor,
                              "revs": [rev(name, params, metrics)]}
                             for name, params, metrics, executor in experiments]
    return [{"rev": "workspace", "name": None, "data": {}, "error": None,
             "experiments": None}, commit]


def quick_sweep(values):
    found = []
    for i, value in enumerate(values):
        params = {**BASE_PARAMS, "datasets": ["clusters"], "methods": ["PCA", "UMAP"],
                  "seeds": 1, "method_params": {"UMAP": {"min_dist": value,
                                                         "n_neighbors": 15}}}
        metrics = {"PCA": {"full_rho": 0.464, "sigma": 10},
                   "UMAP": {"full_rho": 0.30 + i / 100, "sigma": 8}, "winner": {"clusters": "PCA"}}
        found.append((f"exp-{i}", params, metrics, None))
    return found


def exps(tmp_path, data, *args):
    path = tmp_path / "show.json"
    path.write_text(json.dumps(data))
    return subprocess.run([sys.executable, str(REPO / "tools" / "exps.py"), "--json", str(path),
                           *args], capture_output=True, text=True, check=True).stdout


def test_a_sweep_is_three_columns_of_changed_params_and_their_own_metrics(tmp_path):
    out = exps(tmp_path, show(quick_sweep([0.1, 0.5, 0.9])))
    lines = out.splitlines()
    assert lines[0].split() == ["main", "exp-0", "exp-1", "exp-2"]
    params = lines[lines.index("params (changed)") + 1:
                   next(i for i, line in enumerate(lines) if line.startswith("full ρ"))]
    # the changed params only: not n_neighbors, no dependency hash
    assert [line.split()[0] for line in params] == ["datasets", "method_params.UMAP.min_dist",
                                                    "methods", "seeds"]
    assert "n_neighbors" not in out and "0" * 32 not in out
    min_dist = next(line for line in lines if "min_dist" in line).split()[1:]
    assert min_dist == ["0.100", "0.100", "0.500", "0.900"]
    umap_rho = [line for line in lines if line.split()[:1] == ["UMAP"]][0].split()[1:]
    assert umap_rho == ["0.383", "0.300", "0.310", "0.320"]
    dreams = [line for line in lines if line.split()[:1] == ["DREAMS"]][0].split()[1:]
    assert dreams == ["0.536", "-", "-", "-"]  # not run: never the baseline's value
    assert max(map(len, lines)) <= 120


def test_too_many_experiments_are_cut_to_the_width_and_counted(tmp_path):
    out = exps(tmp_path, show(quick_sweep([0.01 * i for i in range(12)])), "--width", "80")
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    shown = len(lines[0].split()) - 1
    assert shown >= 1 and lines[-1].startswith(f"{12 - shown} older experiments not shown")


def test_queued_and_failed_experiments_are_named(tmp_path):
    sweep = quick_sweep([0.1, 0.5])
    sweep[0] = (*sweep[0][:3], {"state": "queued"})
    data = show(sweep)
    data[1]["experiments"][1]["revs"][0]["error"] = {"msg": "failed to reproduce"}
    states = exps(tmp_path, data).splitlines()[1].split()
    assert states == ["baseline", "queued", "failed"]


def test_no_experiment_says_how_to_make_one(tmp_path):
    out = exps(tmp_path, show([]))
    assert "params (none changed)" in out and out.splitlines()[-1].startswith("no experiments")


def test_one_run_is_its_ranking_by_sigma(tmp_path):
    path = tmp_path / "headline.json"
    path.write_text(json.dumps(BASE_METRICS))
    out = subprocess.run([sys.executable, str(REPO / "tools" / "exps.py"), "--run", str(path)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert [line.split()[0] for line in out[1:4]] == ["DREAMS", "PCA", "UMAP"]
    assert out[2].split()[1:] == ["22", "0.582"]
    assert out[-1] == "Σ leader: density DREAMS · clusters PCA"
