"""Stage ``study_figures``: the studies' data, maps and result tables ->
``figures/studies/{name}.png`` and ``figures/studies/facts.json``, and each study's
headline medians and median curves (``results/headline/{study}.json``, read by ``dvc metrics``
by path; ``results/plots/{study}.csv``, DVC plots).

Every input is optional: a figure whose table or maps are absent is not drawn (and the report
says "not built"); a method a study skipped gets a panel naming its reason. ``facts.json``
holds the drawn files and the numbers the report's captions quote (``files``, and per figure
``heading`` (the data it shows), ``skipped``, ``new_methods``, measured values and, for the
figures whose drawing needs explaining, ``caption``), so the report stage needs no maps.

Map folders follow ``embeddings/<study>/<method>[/<config>]/<label>/seed<s>[_fit|_add].npy``
with a ``status.json`` in each ``<method>[/<config>]`` that records each map file's sha256,
checked before a map is drawn; the representative map is a label's lowest seed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from drfidelity.core.files import dumps_json, write_text
from drfidelity.core.layout import (read_map, read_status, results_dir, study_figures_dir,
                                    study_map_folders, study_map_stage, study_table_path)
from drfidelity.core.params import Params, snr_label
from drfidelity.core.storage import atomic_write
from drfidelity.datasets.registry import DATASETS
from drfidelity.figures import studies as draw
from drfidelity.figures import style
from drfidelity.figures.scale import scale_figure
from drfidelity.figures.settings import dataset_heading
from drfidelity.scale import CONFIG_FILE, MACHINE_FILE
from drfidelity.studies import all_studies
from drfidelity.studies.spec import FigureKit
from drfidelity.metrics.labels import knn_label_accuracy
from drfidelity.studies.run.summaries import write_summaries
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def _table(root: Path, name: str) -> pd.DataFrame | None:
    """A table of the main results, or None when it is absent or has no rows (nothing to
    draw)."""
    return _read_table(results_dir(root) / f"{name}.csv")


def _study_table(root: Path, name: str) -> pd.DataFrame | None:
    """A study's table (``addplot_per_run``), like :func:`_table`."""
    return _read_table(study_table_path(root, name))


def _read_table(path: Path) -> pd.DataFrame | None:
    if not path.exists():
        return None
    table = pd.read_csv(path, float_precision="round_trip")
    return table if len(table) else None


def _arrays(folder: Path, *names: str) -> dict[str, np.ndarray] | None:
    paths = {n: folder / f"{n}.npy" for n in names}
    if not all(p.exists() for p in paths.values()):
        return None
    return {n: np.load(p) for n, p in paths.items()}


def lowest_seed_maps(base: Path, key: str = "", suffixes: tuple[str, ...] = ("",)):
    """(maps, seeds, skipped) of input ``key`` of the study whose maps are below ``base``, or
    ``None`` when no method's maps of it are there.

    ``maps[label]`` is one array, or a tuple of one per suffix (``("_fit", "_add")``); a
    label the study skipped is in ``skipped`` with the reason. A map that is not the file its
    stage wrote is refused (:func:`~drfidelity.core.layout.read_map`).
    """
    folders = study_map_folders(base, key)
    if not folders:
        return None
    status = {}
    for method, folder in folders.items():
        stage = study_map_stage(base, method)
        record = read_status(folder, stage)
        status.update({label: (entry, folder, record, stage)
                       for label, entry in record["methods"].items()})
    maps, seeds, skipped = {}, {}, {}
    for label, (entry, folder, record, stage) in sorted(status.items()):
        if entry.get("status") != "ok" or not entry.get("seeds"):
            skipped[label] = entry.get("reason") or entry.get("status", "not run")
            continue
        seed = min(entry["seeds"])
        loaded = tuple(read_map(folder, record, f"{label}/seed{seed}{s}", label, seed, stage)
                       for s in suffixes)
        maps[label] = loaded if len(suffixes) > 1 else loaded[0]
        seeds[label] = seed
    return maps, seeds, skipped


def new_methods(*frames: pd.DataFrame | None) -> list[str]:
    """Methods all of whose rows are flagged ``new`` in the first frame with that column."""
    for frame in frames:
        if frame is not None and "new" in frame.columns:
            flag = frame["new"].astype(str).str.lower() == "true"
            return [m for m, rows in flag.groupby(frame["method"], sort=False) if rows.all()]
    return []


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


def _main_tables(params: Params, root: Path, drawn: Drawn) -> None:
    """The figures of the main benchmark's stability and bridge-gap tables."""
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


#: what a study's ``figures`` is handed: the painters and the loaders above
KIT = FigureKit(draw=draw, arrays=_arrays, table=_study_table, lowest_seed_maps=lowest_seed_maps,
                new_methods=new_methods, main_heading=main_heading,
                dataset_heading=dataset_heading, snr_label=snr_label,
                dataset_title=lambda name: DATASETS[name].title,
                knn_label_accuracy=knn_label_accuracy)


def run(params: Params, root: Path) -> None:
    drawn = Drawn()
    for spec in all_studies():
        # a study its params leave out has nothing to draw (the living configuration runs
        # some studies only)
        if spec.figures is not None and spec.name in params.studies:
            spec.figures(params, root, drawn, KIT)
    _main_tables(params, root, drawn)
    _scale(root, drawn)
    folder = study_figures_dir(root)
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
    print(f"[study_figures] {len(files)} figures: {', '.join(files) or 'none'}; "
          f"headlines and curves of {', '.join(summarised) or 'no study'}", flush=True)
