"""Stage ``scale`` (frozen: ``make scale`` runs it): the scale study of ``scale.yaml`` ->
``results/scale_runs.csv``, ``results/scale_exponents.csv`` and ``results/scale_machine.json``.

It measures wall time and peak memory, which depend on the machine and its load, so it is not
part of the frozen rebuild: ``dvc repro`` never runs it, and its committed results are a
record of one measured run (see :mod:`drfidelity.scale.study`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from drfidelity.scale import CONFIG_FILE, EXPONENTS_FILE, MACHINE_FILE, RUNS_FILE
from drfidelity.scale import study as scaling
from drfidelity.core.files import dumps_json, write_csv, write_text
from drfidelity.core.layout import results_dir
from drfidelity.core.params import Params
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, root: Path) -> None:
    config = scaling.load_config(root / CONFIG_FILE)
    rows = scaling.run_study(config)
    folder = results_dir(root)
    write_csv(folder / RUNS_FILE, pd.DataFrame(rows, columns=scaling.COLUMNS))
    write_csv(folder / EXPONENTS_FILE, pd.DataFrame(scaling.exponents(rows)))
    write_text(folder / MACHINE_FILE, dumps_json(scaling.machine()))
    ran = sum(row["status"] == "ok" for row in rows)
    print(f"[scale] {ran} of {len(rows)} measurements ran; results in {folder}", flush=True)
