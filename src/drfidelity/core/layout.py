"""Where every stage's outputs live, and the loaders that refuse stale ones.

Stages never import each other: a stage reads what an earlier stage wrote through the paths
and loaders here, each of which checks that the files belong to the current parameters (the
same data, methods and seeds) and are the bytes their stage wrote (by the sha256 it recorded)
before anything is computed from them.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np

from drfidelity.core.params import Params, snr_label
from drfidelity.core.storage import digest


def data_dir(root: Path, dataset: str) -> Path:
    return root / "data" / dataset


def embeddings_dir(root: Path, dataset: str) -> Path:
    return root / "embeddings" / dataset


def method_maps_dir(root: Path, dataset: str, method: str) -> Path:
    """One method's maps of a dataset with their ``status.json``: one embed stage's output."""
    return embeddings_dir(root, dataset) / method


def results_dir(root: Path) -> Path:
    return root / "results"


def per_run_path(root: Path, dataset: str) -> Path:
    return results_dir(root) / "per_run" / f"{dataset}.csv"


def skipped_path(root: Path, dataset: str) -> Path:
    return results_dir(root) / "per_run" / f"{dataset}.skipped.csv"


def stability_path(root: Path, dataset: str) -> Path:
    return results_dir(root) / "per_run" / f"{dataset}.stability.csv"


def ceiling_path(root: Path, dataset: str) -> Path:
    """The noise ceiling of ``dataset``: its noise-free geometry scored as if it were a map."""
    return results_dir(root) / "per_run" / f"{dataset}.ceiling.csv"


def bridges_path(root: Path, dataset: str) -> Path:
    return results_dir(root) / "per_run" / f"{dataset}.bridges.csv"


#: the folder below ``data/``, ``embeddings/``, ``results/`` and ``figures/`` that holds the
#: studies' files, apart from the datasets' (so no study can share a folder with a dataset of
#: its name, e.g. the random_walk study and dataset); no dataset may take this name
STUDIES = "studies"


def study_data_dir(root: Path, study: str) -> Path:
    """Inputs a study generated itself (``{config}/`` below for several inputs)."""
    return root / "data" / STUDIES / study


def study_embeddings_dir(root: Path, study: str) -> Path:
    """A study's maps: ``{method}/`` below for each method, one study_embed stage's
    output, holding ``{config}/`` per input (none for a study of one input)."""
    return root / "embeddings" / STUDIES / study


def study_table_path(root: Path, name: str) -> Path:
    """A study's table ``name`` (``addplot_per_run``): the previous release's file name, in
    the studies' results folder."""
    return results_dir(root) / STUDIES / f"{name}.csv"


def study_map_folders(base: Path, config: str) -> dict[str, Path]:
    """Method -> the folder of its maps of input ``config``, below a study's maps ``base``
    (:func:`study_embeddings_dir`), for each method whose stage wrote one (a ``status.json``)."""
    methods = sorted(p.name for p in base.iterdir()) if base.is_dir() else []
    folders = {m: base / m / config for m in methods}
    return {m: folder for m, folder in folders.items() if (folder / "status.json").is_file()}


def study_map_stage(base: Path, method: str) -> str:
    """The stage that writes ``method``'s maps below a study's maps ``base``
    (``study_embed addplot/PCA``), as refusals name it."""
    return f"study_embed {base.name}/{method}"


def study_headline_path(root: Path, study: str) -> Path:
    """A study's headline medians, a DVC ``metrics`` file."""
    return results_dir(root) / "headline" / f"{study}.json"


def study_curve_path(root: Path, study: str) -> Path:
    """A study's median curves over its knob, a DVC ``plots`` file."""
    return results_dir(root) / "plots" / f"{study}.csv"


def published_results_dir(root: Path) -> Path:
    """The published result tables of the release ``root`` configures (the import
    ``reference/<tag>/results``), read through the committed link ``reference/published``."""
    return root / "reference" / "published" / "results"


def comparison_paths(root: Path, release: str) -> tuple[Path, Path]:
    """The generated comparison with ``release`` (``v1.3.0`` -> ``comparison_v1_3_0``):
    (CSV summary, Markdown page)."""
    stem = f"comparison_{release.replace('.', '_')}"
    return results_dir(root) / f"{stem}.csv", results_dir(root) / f"{stem}.md"


#: the previous project's releases whose public data this checkout imports, oldest first. The
#: first is the frozen configuration the pipeline rebuilds; its import pointers sit at the
#: upstream paths of the checkout's root. Each later one keeps the same upstream paths below
#: ``releases/<tag>/`` (a pointer moved as a whole stays valid), beside the ``params.yaml`` of
#: its frozen configuration (its grids, its ranking rule).
RELEASES = ("v1.3.0", "v1.4.0")


#: the living configuration (issue 42): today's methods beside the frozen list, more seeds, in
#: ``releases/living``. It is rebuilt by the same pipeline as a later release but published
#: nothing, so it has no ``reference/published`` link and no comparison stage.
LIVING = "living"
#: the configurations whose pipeline is the root's run in ``releases/<name>``
#: (tools/release_pipeline.py writes their ``dvc.yaml``)
CONFIGURATIONS = (*RELEASES[1:], LIVING)


def configuration_root(root: Path, name: str) -> Path:
    """The folder of configuration ``name`` (:data:`CONFIGURATIONS`) below the checkout ``root``."""
    if name not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {name!r}; configurations: "
                         f"{', '.join(CONFIGURATIONS)}")
    return root / "releases" / name


def published_release(root: Path) -> str | None:
    """The release whose configuration ``root`` holds: the tag that its committed link
    ``reference/published`` names (``v1.3.0`` at the checkout's root, ``v1.4.0`` in
    ``releases/v1.4.0``); None without the link (the living configuration, which published
    nothing). Its published tables are the ones compared with."""
    link = root / "reference" / "published"
    if not os.path.lexists(link):
        return None
    tag = Path(os.path.realpath(link)).name
    if tag not in RELEASES:
        raise ValueError(f"{root / 'reference' / 'published'} names {tag!r}, not a release "
                         f"({', '.join(RELEASES)})")
    return tag


def release_root(root: Path, release: str) -> Path:
    """The folder holding ``release``'s import pointers at their upstream paths."""
    if release not in RELEASES:
        raise ValueError(f"unknown release {release!r}; releases: {', '.join(RELEASES)}")
    return root if release == RELEASES[0] else root / "releases" / release


def release_maps_dir(root: Path, release: str) -> Path:
    """``release``'s toorPIA maps (``<dataset>/toorpia/<mode>/<tag>/seed<s>.npy``)."""
    return release_root(root, release) / "external_embeddings"


def release_results_dir(root: Path, release: str) -> Path:
    """``release``'s published result tables (the import of its ``results/``)."""
    return release_root(root, release) / "reference" / release / "results"


def release_paper_tables_dir(root: Path, release: str) -> Path:
    """``release``'s published paper tables (the import of its ``paper/tables/``)."""
    return release_root(root, release) / "reference" / release / "paper_tables"


def release_params_path(root: Path, release: str) -> Path:
    """``release``'s frozen configuration: the root ``params.yaml`` for the first release,
    ``releases/<tag>/params.yaml`` for a later one."""
    return release_root(root, release) / "params.yaml"


def release_diff_paths(root: Path, old: str, new: str) -> dict[str, Path]:
    """The generated account of what moved from release ``old`` to ``new``: every moved cell,
    the summary by cause, the composite ranking under both rules, and the upstream
    inconsistencies found."""
    folder = results_dir(root) / "release_diff"
    stem = f"{old}_to_{new}".replace(".", "_")
    return {part: folder / f"{stem}_{part}.csv"
            for part in ("cells", "summary", "ranking", "inconsistencies")}


def figures_dir(root: Path, dataset: str) -> Path:
    return root / "figures" / dataset


def study_figures_dir(root: Path) -> Path:
    """The studies' figures and their ``facts.json``."""
    return root / "figures" / STUDIES


def report_paths(root: Path) -> tuple[Path, Path]:
    """(REPORT.md, REPORT.html)."""
    return root / "REPORT.md", root / "REPORT.html"


def paper_paths(root: Path) -> tuple[Path, Path, Path]:
    """The paper's generated parts: (tables folder, macros file, figures folder)."""
    paper = root / "paper"
    return paper / "tables", paper / "macros.tex", paper / "figures"


def dvc_stage(stage: str) -> str:
    """DVC's name of the stage run as ``stage`` (``embed density/PCA`` is
    ``embed@density-PCA``)."""
    return stage.replace(" ", "@", 1).replace("/", "-")


def _rerun(stage: str) -> str:
    return f"rerun `dvc repro {dvc_stage(stage)}`"


#: what every ``status.json`` of a map folder holds: the input's fingerprint, per method (a
#: study's map label) what it made or why not, and per map file its record (:func:`map_record`)
STATUS_FIELDS = {"data_fingerprint": str, "methods": dict, "maps": dict}


def map_record(method: str, seed: int, Y: np.ndarray) -> dict:
    """The record of map ``Y`` of ``method`` (a study's map label) and ``seed`` that its stage
    writes in ``status.json`` under the file's path in the folder: the sha256 of the file lets
    every reader (:func:`read_map`) refuse a map swapped, edited or cut short by hand."""
    from drfidelity.core.files import npy_digest

    return {"method": method, "seed": int(seed), "sha256": npy_digest(Y)}


def read_status(folder: Path, stage: str) -> dict:
    """``status.json`` of a map folder (see :data:`STATUS_FIELDS`) made by ``stage``
    (``embed density/PCA``), refused in one line naming it and the stage when it is missing,
    not JSON (cut short) or lacks a field (edited, or written before maps were recorded)."""
    path = folder / "status.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run the {stage} stage first")
    try:
        record = json.loads(path.read_bytes())
    except ValueError as error:  # not JSON, or not UTF-8
        raise ValueError(f"{path} of {stage} is not JSON ({error}): truncated or edited; "
                         f"{_rerun(stage)}") from None
    lacking = [key for key, kind in STATUS_FIELDS.items()
               if not isinstance(record, dict) or not isinstance(record.get(key), kind)]
    if lacking:
        raise ValueError(f"{path} of {stage} lacks {', '.join(lacking)} (edited, or written "
                         f"before maps were recorded); {_rerun(stage)}")
    return record


def read_map(folder: Path, record: dict, stem: str, method: str, seed: int,
             stage: str) -> np.ndarray:
    """Map ``{stem}.npy`` of ``folder``, whose status.json is ``record``, as ``stage`` made it
    for ``method`` (a study's map label) and ``seed``.

    Refused in one line naming the file and the method unless status.json records the file
    for them with the sha256 of its bytes: a map swapped with another method's, edited, cut
    short or missing is never read under a name it does not have.
    """
    name = f"{stem}.npy"
    path, who, again = folder / name, f"{method} seed {seed}", _rerun(stage)
    entry = record["maps"].get(name)
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        raise ValueError(f"{path}: {folder / 'status.json'} records no sha256 of it for {who} "
                         f"(edited); {again}")
    if (entry.get("method"), entry.get("seed")) != (method, seed):
        raise ValueError(f"{path}: status.json records it as {entry.get('method')} seed "
                         f"{entry.get('seed')}, not {who} (swapped or edited); {again}")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} is missing: status.json records it for {who}; "
                                f"{again}") from None
    found = digest(data)
    if found != entry["sha256"]:
        raise ValueError(f"{path}: sha256 {found[:8]}… differs from the {entry['sha256'][:8]}… "
                         f"status.json records for {who} (edited, truncated or swapped; "
                         f"{again})")
    return np.load(io.BytesIO(data), allow_pickle=False)


def facts_path(root: Path, dataset: str) -> Path:
    """The numbers the figures of ``dataset`` show, which the report's captions quote."""
    return figures_dir(root, dataset) / "facts.json"


def data_identity(params: Params, dataset: str) -> dict:
    """What the data of ``dataset`` is a function of (besides the code)."""
    return {"n": params.n, "d": params.d, "data_seed": params.data_seed,
            "snr": snr_label(params.snr), "params": params.dataset_params.get(dataset, {})}


def load_meta(params: Params, dataset: str, root: Path) -> dict:
    """``meta.json`` of the generated data, refused if it was made with other parameters."""
    path = data_dir(root, dataset) / "meta.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run the generate stage first")
    meta = json.loads(path.read_text())
    stale = {k: (meta.get(k), v) for k, v in data_identity(params, dataset).items()
             if meta.get(k) != v}
    if stale:
        what = ", ".join(f"{k}={old!r} (params: {new!r})" for k, (old, new) in stale.items())
        raise ValueError(f"data/{dataset} was generated with {what}: run the generate stage again")
    return meta


def load_data(params: Params, dataset: str, root: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """(meta.json, the arrays) of ``data/{dataset}``, refused when meta.json is stale
    (:func:`load_meta`) or when an array's bytes are not those whose sha256 meta.json records
    (the folder was edited by hand: a stage run outside DVC would otherwise use it)."""
    from drfidelity.core.files import read_array_dir
    from drfidelity.core.storage import fingerprint

    meta = load_meta(params, dataset, root)
    arrays = read_array_dir(data_dir(root, dataset))
    recorded = meta.get("arrays", {})
    for name, entry in recorded.items():
        if name not in arrays:
            raise ValueError(f"data/{dataset}/{name}.npy is missing (meta.json records it): "
                             "run the generate stage again")
        if fingerprint(arrays[name]) != entry["sha256"]:
            raise ValueError(f"data/{dataset}/{name}.npy is not the array the generate stage "
                             "wrote (its sha256 differs from meta.json's): run the generate "
                             "stage again")
    return meta, arrays


def load_embeddings(params: Params, root: Path, dataset: str
                    ) -> tuple[dict, dict[str, dict[int, np.ndarray]]]:
    """Per-method status and the embeddings by method and seed of the methods of params,
    refused when a method's maps were not made from the current data with the current seeds,
    or are not the files its stage wrote (:func:`read_map`)."""
    # each method's spec, found by its name (method_specs imports nothing but core.method)
    from drfidelity.method_specs import spec
    fingerprint = load_meta(params, dataset, root)["fingerprint"]
    status, embeddings = {}, {}
    for name in params.methods:
        folder, stage = method_maps_dir(root, dataset, name), f"embed {dataset}/{name}"
        record = read_status(folder, stage)
        if record["data_fingerprint"] != fingerprint:
            raise ValueError(f"embeddings/{dataset}/{name} was computed on other data than "
                             f"data/{dataset}: run its embed stage again")
        if not isinstance(record["methods"].get(name), dict):
            raise ValueError(f"{folder / 'status.json'} records {sorted(record['methods'])}, "
                             f"not {name} (swapped or edited); {_rerun(stage)}")
        entry = status[name] = record["methods"][name]
        wanted = spec(name).seeds(params.seeds)
        if entry.get("seeds", wanted) != wanted:
            raise ValueError(f"embeddings/{dataset}/{name} holds seeds {entry['seeds']}, "
                             f"params.yaml asks for {wanted}: run its embed stage again")
        if entry.get("status") == "ok":
            embeddings[name] = {s: read_map(folder, record, f"seed{s}", name, s, stage)
                                for s in wanted}
    return status, embeddings
