"""Named parameter profiles: small runs of the pipeline, for kick-the-tires, exploring and tests.

A profile turns the committed params (``params.yaml`` as git's HEAD has it) into a smaller set,
whatever the working copy holds: after an experiment, ``dvc exp run`` leaves that experiment's
params in ``params.yaml``, and a profile must not inherit them. It is used two ways, with the
same result: it rewrites a params file in place (kick-the-tires, in a throwaway copy), and the
``studies.yaml`` beside it to the study map stages of the profile's methods alone, or it
prints, as the ``-S`` flags of ``dvc exp run``, the changes that turn the working copy into it,
so that an experiment is one short line::

    dvc exp run $(python tools/profiles.py flags quick) $(python tools/profiles.py targets quick)

Profiles:

* ``kick``: every stage on small data (N = 300, D = 64, 2 seeds; PyMDE on 50 iterations),
  by three methods (PCA, PyMDE, UMAP) on two datasets (clusters, outliers), and every
  study on a few small inputs; what ``make kick`` runs.
* ``quick``: one dataset (clusters) by PCA and UMAP, one seed, on the benchmark's own input
  (N = 1000, D = 768), so its rows compare with the committed ones; targets: the ranking table
  and its DVC metrics (``headline``).
* ``study NAME``: one study alone, by every method, on kick's small settings;
  targets: its tables.

Usage: python tools/profiles.py [--params FILE] {apply,flags,targets} PROFILE [STUDY]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

#: the small settings of kick and the study profiles: two seeds, so that run-to-run stability
#: and the bootstrap CIs have something to work on; the two slowest iterative optimisers on
#: fewer iterations, since these runs check the plumbing, not the maps
SMALL = {"data": {"n": 300, "d": 64}, "seeds": 2,
         "method_params": {"PyMDE": {"max_iter": 50}, "PCC": {"num_epochs": 50}}}

#: what kick-the-tires runs every stage on: a method of each kind of library the others use
#: (scikit-learn, torch, numba) on two datasets. Each (dataset or study, method) pair is a
#: stage of a few seconds, and all eight methods on all five datasets took three times the
#: two minutes a kick is meant to take (docs/performance.md)
KICK = {"datasets": ["clusters", "outliers"], "methods": ["PCA", "PyMDE", "UMAP"]}

#: what someone exploring a method wants first: two methods on one of the benchmark's inputs
QUICK = {"datasets": ["clusters"], "methods": ["PCA", "UMAP"], "seeds": 1}
QUICK_TARGETS = ["headline"]

#: strings that Hydra (behind ``dvc exp run -S``) reads as something else when unquoted
HYDRA_WORDS = {"true", "false", "null", "inf", "nan"}


#: the hyper-parameter study of a small run: two values of one knob, of the first of these
#: methods that the run has
SMALL_GRIDS = ({"t-SNE": {"perplexity": [5, 30]}}, {"UMAP": {"n_neighbors": [5, 15]}})


def small_studies(params: dict) -> dict:
    """The ``studies`` section of a small run of ``params`` (its datasets, its methods)."""
    hyper_dataset = next((d for d in ("density", "clusters") if d in params["datasets"]),
                         params["datasets"][0])
    return {
        "addplot": dict(params["studies"]["addplot"]),
        "random_walk": {"n_series": 2, "n_steps": 60, "d": 10, "step": 0.001, "lag": 5},
        "sweep_outlier_factor": {"values": [2.0, 5.0]},
        "sweep_minority_frac": {"values": [0.25, 0.05]},
        "noise_dims": {"dims": [6, 20], "data_seed": 42, "n_principal": 3,
                       "cluster_std": 0.005, "toorpia_dims": [], "toorpia_extra_dims": [40],
                       "toorpia_extra_seeds": [42, 0]},
        "hyperparams": {"datasets": [hyper_dataset],
                        "grid": next((grid for grid in SMALL_GRIDS
                                      if set(grid) <= set(params["methods"])), SMALL_GRIDS[0])},
    }


def small(params: dict) -> dict:
    """``params`` on :data:`SMALL`'s settings, its studies unchanged."""
    method_params = {**params["method_params"]}
    for method, knobs in SMALL["method_params"].items():
        method_params[method] = {**method_params.get(method, {}), **knobs}
    return {**params, "seeds": SMALL["seeds"], "data": {**params["data"], **SMALL["data"]},
            "method_params": method_params}


def kick(params: dict) -> dict:
    params = {**small(params), **KICK}
    return {**params, "studies": small_studies(params)}


def quick(params: dict) -> dict:
    return {**params, **QUICK}


def study(params: dict, name: str) -> dict:
    """Study ``name`` on kick's small settings, with every method and dataset; the other
    studies keep their sections, since the run's targets leave them out."""
    params = small(params)
    return {**params, "studies": {**params["studies"],
                                      name: small_studies(params)[name]}}


def study_names(params: dict) -> list[str]:
    return list(small_studies(params))


def resolve(words: list[str], params: dict):
    """The profile function that ``words`` names (``["kick"]``, ``["study", "noise_dims"]``);
    exits 2 with one line listing the known names when there is none."""
    studies = study_names(params)
    if words in (["kick"], ["quick"]):
        return kick if words == ["kick"] else quick
    if len(words) == 2 and words[0] == "study" and words[1] in studies:
        return lambda p: study(p, words[1])
    print(f"profiles.py: unknown profile {' '.join(words)!r}; profiles: kick, quick, "
          f"study NAME (NAME one of {', '.join(studies)})", file=sys.stderr)
    sys.exit(2)


def targets(words: list[str], tables: dict) -> list[str]:
    """The stages a profile's ``dvc exp run`` needs (DVC runs what they depend on): the whole
    pipeline for kick, the ranking table and its metrics for quick, a study's score stages for
    a study (``tables``: the table pairs of studies.yaml, which dvc.yaml's
    ``study_score`` loops over)."""
    if words == ["quick"]:
        return QUICK_TARGETS
    if words[0] == "study":
        return [f"study_score@{pair}" for pair, item in tables.items()
                if item["study"] == words[1]]
    return []


def hydra_value(value) -> str:
    """``value`` as Hydra's override grammar reads it back, with no whitespace (the flags pass
    through the shell's word splitting unquoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "inf" if value == float("inf") else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        plain = re.fullmatch(r"[A-Za-z_][\w.-]*", value) and value.lower() not in HYDRA_WORDS
        return value if plain else json.dumps(value)
    if isinstance(value, list):
        return "[" + ",".join(hydra_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{key}:{hydra_value(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"no -S form for {value!r}")


def flags(old: dict, new: dict, prefix: str = "") -> list[str]:
    """The ``dvc exp run -S`` overrides that turn ``old`` into ``new``: changed leaves, added
    keys (``+``) and removed ones (``~``); lists are replaced whole, as DVC does."""
    found = []
    for key, value in new.items():
        path = f"{prefix}{key}"
        if key not in old:
            found.append(f"+{path}={hydra_value(value)}")
        elif isinstance(value, dict) and isinstance(old[key], dict):
            found += flags(old[key], value, f"{path}.")
        elif type(value) is not type(old[key]) or value != old[key]:
            found.append(f"{path}={hydra_value(value)}")
    return found + [f"~{prefix}{key}" for key in old if key not in new]


def committed(path: Path) -> str | None:
    """``path`` as git's HEAD has it; None outside a repository or for an untracked file."""
    shown = subprocess.run(["git", "show", f"HEAD:./{path.name}"], cwd=path.parent,
                           capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="Named parameter profiles: rewrite a params file, or print the same "
                    "changes as `dvc exp run` flags and the stages the run needs.")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"),
                        help="the params file to rewrite or to diff against (default "
                             "params.yaml); the profile starts from its committed version "
                             "(git HEAD) where there is one")
    parser.add_argument("action", choices=("apply", "flags", "targets"),
                        help="apply: rewrite --params in place (and the studies.yaml "
                             "beside it: the study map stages of the profile's methods); "
                             "flags: print the -S flags; "
                             "targets: print the stages the profile's run needs")
    parser.add_argument("profile", nargs="+",
                        help="kick, quick or study NAME (NAME: a study)")
    args = parser.parse_args(argv)
    try:
        current = yaml.safe_load(args.params.read_text())
    except OSError as exc:
        print(f"profiles.py: cannot read {args.params}: {exc.strerror}", file=sys.stderr)
        return 2
    base = committed(args.params)
    params = current if base is None else yaml.safe_load(base)
    profile = resolve(args.profile, params)
    if args.action == "apply":
        from drfidelity.studies.run.wiring import render

        applied = profile(params)
        args.params.write_text(yaml.safe_dump(applied, sort_keys=False))
        (args.params.parent / "studies.yaml").write_text(render(applied["methods"]))
    elif args.action == "flags":
        print(" ".join(f"-S {flag}" for flag in flags(current, profile(params))))
    else:
        studies = yaml.safe_load((args.params.parent / "studies.yaml").read_text())
        print(" ".join(targets(args.profile, studies["study_tables"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
