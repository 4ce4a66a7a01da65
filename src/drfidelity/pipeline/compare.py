"""Stage ``compare``: every results table against the published one of the release this
folder configures (``v1.3.0`` at the root) -> ``results/comparison_<tag>.csv`` and ``.md``.

The published tables are the DVC import ``reference/<tag>/results`` (`dvc pull` brings it);
the stage reads them through the committed link ``reference/published``, which names the
release, so it still runs, and says what is missing, when they are not checked out.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from drfidelity.crosscheck.comparison import SUMMARY_COLUMNS, compare, to_markdown
from drfidelity.core.files import write_csv, write_text
from drfidelity.core.layout import (comparison_paths, published_release, published_results_dir,
                                    results_dir)
from drfidelity.core.params import Params
from drfidelity.registry import NAMES  # what params' names are checked against

TARGET = None  # what the stage runs on (see drfidelity.pipeline)


def run(params: Params, root: Path) -> None:
    release = published_release(root)
    if release is None:
        raise ValueError(f"compare: {root / 'reference' / 'published'} does not exist: this "
                         "configuration published no tables to compare with")
    table_path, page_path = comparison_paths(root, release)
    published = published_results_dir(root)
    if not any(published.glob("*.csv")):
        write_csv(table_path, pd.DataFrame(columns=SUMMARY_COLUMNS))
        write_text(page_path, f"# Comparison with {release}\n\nThe published tables are not "
                   f"checked out: `dvc pull reference/{release}/results.dvc` brings them, then "
                   "`dvc repro compare`.\n")
        print(f"[compare] {published} is empty: comparison not made", flush=True)
        return
    summary = compare(results_dir(root), published)
    write_csv(table_path, summary)
    write_text(page_path, to_markdown(summary, release))
    differs = summary["verdict"].str.startswith("DIFFERS")
    print(f"[compare] {len(summary)} (table, method) pairs, {int(summary['cells'].sum())} "
          f"cells; {int(differs.sum())} exact pair(s) differ", flush=True)
