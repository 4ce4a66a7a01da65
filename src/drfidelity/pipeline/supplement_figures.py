"""Stage ``supplement_figures``: the supplement studies' data, maps and result tables ->
``figures/supplements/{name}.png`` and ``figures/supplements/facts.json``, and each study's
headline medians and median curves (``results/headline/{study}.json``, read by ``dvc metrics``
by path; ``results/plots/{study}.csv``, DVC plots).

Every input is optional: a figure whose table or maps are absent is not drawn (and the report
says "not built"); a method a study skipped gets a panel naming its reason. ``facts.json``
holds the drawn files and the numbers the report's captions quote (``files``, and per figure
``heading`` (the data it shows), ``skipped``, ``new_methods``, measured values and, for the
figures whose drawing needs explaining, ``caption``), so the report stage needs no maps.

Map folders follow ``embeddings/<study>[/<config>]/<method>/seed<s>[_fit|_add].npy`` with a
``status.json`` beside them; the representative map is a method's lowest seed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from drfidelity.core.registry import METHODS
from drfidelity.metrics.labels import knn_label_accuracy
from drfidelity.core.files import dumps_json, write_text
from drfidelity.core.layout import (read_status, results_dir, study_data_dir,
                                    study_embeddings_dir, supplement_figures_dir)
from drfidelity.core.params import Params, snr_label
from drfidelity.datasets.registry import DATASETS
from drfidelity.scale import CONFIG_FILE, MACHINE_FILE
from drfidelity.report import style
from drfidelity.report.scale import scale_figure
from drfidelity.report import supplement_figures as draw
from drfidelity.report.figures import dataset_heading
from drfidelity.report.supplements import (HYPERPARAM_METRICS, KNN_K, LANDMARK_DIMS,
                                           SWEEP_OUTLIER_METRICS, SWEEP_POPULATION_METRICS)
from drfidelity.studies.registry import SWEEPS
from drfidelity.core.storage import atomic_write
from drfidelity.studies.tables import write_summaries

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def _table(root: Path, name: str) -> pd.DataFrame | None:
    """A results table, or None when it is absent or has no rows (nothing to draw)."""
    path = results_dir(root) / f"{name}.csv"
    if not path.exists():
        return None
    table = pd.read_csv(path, float_precision="round_trip")
    return table if len(table) else None


def _arrays(folder: Path, *names: str) -> dict[str, np.ndarray] | None:
    paths = {n: folder / f"{n}.npy" for n in names}
    if not all(p.exists() for p in paths.values()):
        return None
    return {n: np.load(p) for n, p in paths.items()}


def lowest_seed_maps(folder: Path, suffixes: tuple[str, ...] = ("",)):
    """(maps, seeds, skipped) of a map folder, or ``None`` without ``status.json``.

    ``maps[method]`` is one array, or a tuple of one per suffix (``("_fit", "_add")``); a
    method the study skipped, or whose map file is absent, is in ``skipped`` with the reason.
    """
    if not (folder / "status.json").exists():
        return None
    maps, seeds, skipped = {}, {}, {}
    for method, entry in read_status(folder, "supplement_embed")["methods"].items():
        if entry.get("status") != "ok" or not entry.get("seeds"):
            skipped[method] = entry.get("reason") or entry.get("status", "not run")
            continue
        seed = min(entry["seeds"])
        files = [folder / method / f"seed{seed}{s}.npy" for s in suffixes]
        missing = [f.name for f in files if not f.exists()]
        if missing:
            skipped[method] = f"map file {missing[0]} absent"
            continue
        loaded = tuple(np.load(f) for f in files)
        maps[method] = loaded if len(suffixes) > 1 else loaded[0]
        seeds[method] = seed
    return maps, seeds, skipped


def new_methods(*frames: pd.DataFrame | None) -> list[str]:
    """Methods all of whose rows are flagged ``new`` in the first frame with that column."""
    for frame in frames:
        if frame is not None and "new" in frame.columns:
            flag = frame["new"].astype(str).str.lower() == "true"
            return [m for m, rows in flag.groupby(frame["method"], sort=False) if rows.all()]
    return []


def hyperparam_defaults(params: Params, aggregated: pd.DataFrame) -> dict[tuple[str, str], float]:
    """(method, knob) -> the main benchmark's setting (registry default or params.yaml)."""
    defaults = {}
    for method, knob in aggregated[["method", "knob"]].drop_duplicates().itertuples(index=False):
        if method in METHODS:
            settings = {**METHODS[method].defaults, **params.method_params.get(method, {})}
            if knob in settings:
                defaults[(method, knob)] = float(settings[knob])
    return defaults


class Drawn:
    """The figures drawn so far and their facts."""

    def __init__(self):
        self.pngs: dict[str, bytes] = {}
        self.facts: dict = {}

    def add(self, key: str, fig, heading: str = "", caption=None, **facts) -> None:
        """Keep ``fig`` (titled ``heading``: the data it shows) and its caption facts; a
        figure whose drawing needs explaining has its ``caption(facts)`` in them too."""
        if heading:
            fig.suptitle(heading)
            facts["heading"] = heading
        if caption is not None:
            facts["caption"] = caption(facts)
        self.pngs[key] = style.png_bytes(fig)
        self.facts[key] = facts


def main_heading(params: Params, title: str, snr: float | None = None) -> str:
    """The heading of a figure on the main benchmark's inputs (at ``snr``, default data.snr)."""
    return dataset_heading(title, snr_label(params.snr if snr is None else snr), params.n,
                           params.d)


def grid_dims(*frames: pd.DataFrame | None) -> list[int]:
    """The dimensions of the noise-dims table (its landmark D that the sweep ran), so that the
    maps grid beside it shows exactly its columns."""
    ran = set().union(*(set(f["dim"].astype(int)) for f in frames if f is not None))
    return sorted(ran & set(LANDMARK_DIMS))


def _addplot(params: Params, root: Path, drawn: Drawn) -> None:
    data = _arrays(study_data_dir(root, "addplot"), "labels_fit", "add_anchor")
    found = lowest_seed_maps(study_embeddings_dir(root, "addplot"), ("_fit", "_add"))
    if data is None or found is None:
        return
    maps, seeds, skipped = found
    drawn.add("basemap_addplot_gallery",
              draw.addplot_gallery(data["labels_fit"], data["add_anchor"], maps, seeds, skipped),
              main_heading(params, f"Add-plot on {DATASETS['outliers'].title.lower()}"),
              skipped=skipped)


def _random_walk(root: Path, drawn: Drawn) -> None:
    data = _arrays(study_data_dir(root, "random_walk"), "X", "series", "t")
    if data is None:
        return
    series, (n, d) = data["series"], data["X"].shape
    count = len(np.unique(series))
    heading = dataset_heading(f"Random walks, {count} series × {n // count} steps, noise-free",
                              snr_label(float("inf")), n, d)
    fig, facts = draw.geometry_explainer(data["X"], series, data["t"])
    drawn.add("geometry_explainer", fig, heading, **facts)
    found = lowest_seed_maps(study_embeddings_dir(root, "random_walk"))
    if found is not None:
        maps, seeds, skipped = found
        drawn.add("trajectory_gallery",
                  draw.trajectory_gallery(series, data["t"], maps, seeds, skipped), heading,
                  draw.trajectory_caption, skipped=skipped)


def _sweep_heading(params: Params, knob: str, value: float | None = None) -> str:
    """The heading of a sweep's figures: its dataset, its noise (clean or data.snr)."""
    dataset, _, _, noised = SWEEPS[knob]
    title = DATASETS[dataset].title + ("" if value is None else f", {knob} = {value:g}")
    return main_heading(params, title, params.snr if noised else float("inf"))


def _sweeps(params: Params, root: Path, drawn: Drawn) -> None:
    for stem, knob, metrics, key, label in (
            ("sweep_outliers", "outlier_factor", SWEEP_OUTLIER_METRICS, "sweep_outliers_curve",
             "outlier factor (× bulk radius of gyration, log scale)"),
            ("sweep_populations", "minority_frac", SWEEP_POPULATION_METRICS,
             "populations_sweep_curve", "minority fraction (log scale)")):
        aggregated = _table(root, f"{stem}_aggregated")
        if aggregated is None:
            continue
        new = new_methods(aggregated, _table(root, f"{stem}_per_run"))
        drawn.add(key, draw.sweep_curves(aggregated, knob, metrics, label, new),
                  _sweep_heading(params, knob), new_methods=new)
    fractions = []
    base = study_embeddings_dir(root, "sweep_minority_frac")
    for folder in sorted(base.iterdir() if base.is_dir() else [], key=lambda p: -float(p.name)):
        data = _arrays(study_data_dir(root, "sweep_minority_frac") / folder.name, "labels",
                       "population")
        found = lowest_seed_maps(folder)
        if data is None or found is None:
            continue
        maps, seeds, skipped = found
        fractions.append(float(folder.name))
        drawn.add(f"population_gallery_mf{float(folder.name):g}",
                  draw.population_gallery(data, maps, seeds, skipped),
                  _sweep_heading(params, "minority_frac", float(folder.name)), skipped=skipped)
    if fractions:
        drawn.facts["population_galleries"] = {"fractions": fractions}


def _noise_dims(params: Params, root: Path, drawn: Drawn) -> None:
    generic = _table(root, "dimsweep_aggregated")
    embedding = _table(root, "dimsweep_embedding_aggregated")
    data_root = study_data_dir(root, "noise_dims")
    # the inputs of the probe's own data seed (dim<D>; dim<D>_ds<s> are extra realisations)
    dims = sorted(int(p.name[3:]) for p in data_root.glob("dim*")
                  if p.name[3:].isdigit() and (p / "X.npy").exists()) if data_root.is_dir() else []
    # the probe's blobs are drawn without noise (studies.registry), padded with noise columns
    heading = dataset_heading(
        f"Noise-dims probe, {params.supplements['noise_dims']['n_principal']} signal dimensions "
        "padded with noise columns", snr_label(float("inf")), params.n,
        f"{min(dims)}–{max(dims)}" if dims else "—")
    if generic is not None:
        ambient = {}
        for dim in dims:
            arrays = _arrays(data_root / f"dim{dim}", "X", "labels")
            ambient[dim] = knn_label_accuracy(arrays["X"], arrays["labels"], KNN_K)
        drawn.add("dimension_curve", draw.dimension_curve(generic, embedding, ambient), heading,
                  ambient={str(d): v for d, v in ambient.items()})
    labels, maps, skipped = {}, {}, {}
    for dim in (d for d in grid_dims(generic, embedding) if d in dims):
        found = lowest_seed_maps(study_embeddings_dir(root, "noise_dims") / f"dim{dim}")
        if found is None:
            continue
        labels[dim] = np.load(data_root / f"dim{dim}" / "labels.npy")
        dim_maps, _, dim_skipped = found
        for label, Y in dim_maps.items():
            maps.setdefault(label, {})[dim] = Y
        for label, reason in dim_skipped.items():
            skipped.setdefault(label, reason)
    if labels:
        skipped = {m: r for m, r in skipped.items() if m not in maps}
        drawn.add("dims_grid", draw.dims_grid(labels, maps, skipped), heading,
                  draw.dims_grid_caption, skipped=skipped, dims=sorted(labels))


def _tables_only(params: Params, root: Path, drawn: Drawn) -> None:
    hyper = _table(root, "hyperparam_sensitivity_aggregated")
    if hyper is not None:
        drawn.add("hyperparam_sensitivity",
                  draw.hyperparam_curves(hyper, HYPERPARAM_METRICS,
                                         hyperparam_defaults(params, hyper)),
                  main_heading(params, "Main inputs"), draw.hyperparam_caption)
    stability = _table(root, "stability")
    if stability is not None:
        drawn.add("stability", draw.stability_bars(stability), main_heading(params, "Main inputs"))
    gaps = _table(root, "bridge_gaps")
    if gaps is not None:
        drawn.add("bridge_gaps", draw.bridge_gap_bars(gaps),
                  main_heading(params, DATASETS["transition"].title))


def _scale(root: Path, drawn: Drawn) -> None:
    runs = _table(root, "scale_runs")
    if runs is None:
        return
    machine = results_dir(root) / MACHINE_FILE
    config = root / CONFIG_FILE
    heading = ""
    if config.exists():  # the study's input (its runs hold N and D, not the generator)
        import yaml

        setting = yaml.safe_load(config.read_text())
        heading = dataset_heading(f"Scale study on {DATASETS[setting['dataset']].title}",
                                  snr_label(float(setting["snr"])),
                                  f"{runs['n'].min()}–{runs['n'].max()}",
                                  "/".join(str(d) for d in sorted(set(runs["d"]))))
    drawn.add("scale", scale_figure(runs), heading,
              machine=json.loads(machine.read_text()) if machine.exists() else None)


def run(params: Params, root: Path) -> None:
    drawn = Drawn()
    _addplot(params, root, drawn)
    _random_walk(root, drawn)
    _sweeps(params, root, drawn)
    _noise_dims(params, root, drawn)
    _tables_only(params, root, drawn)
    _scale(root, drawn)
    folder = supplement_figures_dir(root)
    files = {}
    for key, data in drawn.pngs.items():
        path = folder / f"{key}.png"
        atomic_write(path, data)
        files[key] = path.relative_to(root).as_posix()
    for stale in sorted(folder.glob("*.png")):
        if stale.relative_to(root).as_posix() not in files.values():
            stale.unlink()
    write_text(folder / "facts.json", dumps_json({"files": files, **drawn.facts}))
    summarised = write_summaries(root)
    print(f"[supplement_figures] {len(files)} figures: {', '.join(files) or 'none'}; "
          f"headlines and curves of {', '.join(summarised) or 'no study'}", flush=True)
