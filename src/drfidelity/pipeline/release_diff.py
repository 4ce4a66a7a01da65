"""Stage ``release_diff``: what moved between each two consecutive releases the checkout
imports -> ``results/release_diff/<old>_to_<new>_{cells,summary,ranking,inconsistencies}.csv``
(:func:`drfidelity.crosscheck.release_diff.diff_releases`).

A release's data are its DVC imports (`python tools/imports.py` brings them); when one is not
checked out the stage says so and writes the tables with their header only.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from drfidelity.core.files import write_csv
from drfidelity.core.layout import (RELEASES, release_diff_paths, release_maps_dir,
                                    release_paper_tables_dir, release_params_path,
                                    release_results_dir)
from drfidelity.core.params import Params, load_params
from drfidelity.crosscheck.release_diff import (CELL_COLUMNS, INCONSISTENCY_COLUMNS, RANKING_COLUMNS,
                                     SUMMARY_COLUMNS, Release, diff_releases)
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = None  # what the stage runs on (see drfidelity.pipeline)

EMPTY = {"cells": CELL_COLUMNS, "summary": SUMMARY_COLUMNS, "ranking": RANKING_COLUMNS,
         "inconsistencies": INCONSISTENCY_COLUMNS}


def load_release(root: Path, tag: str, params: Params) -> Release:
    """``tag`` as imported, with its ranking rule: ``params`` (the root's) for the first
    release, the release's own params.yaml for a later one."""
    rules = params if tag == RELEASES[0] else load_params(release_params_path(root, tag), NAMES)
    return Release(tag, release_results_dir(root, tag), release_paper_tables_dir(root, tag),
                   release_maps_dir(root, tag), rules.ranking)


def run(params: Params, root: Path) -> None:
    for old_tag, new_tag in zip(RELEASES, RELEASES[1:]):
        old, new = load_release(root, old_tag, params), load_release(root, new_tag, params)
        paths = release_diff_paths(root, old_tag, new_tag)
        absent = [r.results for r in (old, new) if not any(r.results.glob("*.csv"))]
        if absent:
            tables = {part: pd.DataFrame(columns=columns) for part, columns in EMPTY.items()}
            print(f"[release_diff] {', '.join(map(str, absent))} not checked out "
                  "(python tools/imports.py): tables written with their header only", flush=True)
        else:
            tables = diff_releases(old, new)
        for part, table in tables.items():
            write_csv(paths[part], table)
        print(f"[release_diff] {old_tag} -> {new_tag}: {len(tables['cells'])} cells moved, "
              f"{len(tables['inconsistencies'])} inconsistencies", flush=True)
