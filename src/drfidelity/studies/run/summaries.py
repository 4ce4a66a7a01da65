"""Each study's DVC metrics and plots: its headline medians (``results/headline/<study>.json``)
and median curves over its knob (``results/plots/<study>.csv``), read off its aggregated table
as its :class:`~drfidelity.studies.spec.TablePair` says.
"""

from __future__ import annotations

import pandas as pd

from drfidelity.core.files import dumps_json, write_csv, write_text
from drfidelity.core.layout import study_curve_path, study_headline_path, study_table_path
from drfidelity.studies import all_studies
from drfidelity.studies.spec import TablePair


def headline(pair: TablePair, table: pd.DataFrame) -> dict:
    """Per method, the study's headline medians (``metric@group`` where the study has groups)
    read off its aggregated ``table``, for ``dvc metrics show/diff``."""
    group, metrics = pair.headline
    result: dict[str, dict[str, float]] = {}
    for row in table[table["metric"].isin(metrics)].itertuples(index=False):
        row = row._asdict()
        where = ",".join(f"{row[g]:g}" if isinstance(row[g], float) else str(row[g])
                         for g in group)
        key = f"{row['metric']}@{where}" if where else row["metric"]
        result.setdefault(row["method"], {})[key] = row["median"]
    return result


def curve(pair: TablePair, table: pd.DataFrame) -> pd.DataFrame:
    """One row per (series, x) with the median of each plotted metric of the aggregated
    ``table``: the data of ``dvc plots show`` (``series`` names the line: method, and knob and
    dataset where the study has them)."""
    x, series, metrics = pair.curve
    series = list(series)
    wide = table[table["metric"].isin(metrics)].pivot_table(
        index=[*series, x], columns="metric", values="median", sort=True).reset_index()
    label = wide[series].astype(str).agg(" ".join, axis=1)
    return pd.DataFrame({"series": label, x: wide[x],
                         **{m: wide[m] for m in metrics if m in wide}})


def _number(text: str) -> int | float:
    """A knob value as written in a table: "5" is the integer 5, "5.0" the float."""
    return int(text) if text.lstrip("-").isdigit() else float(text)


def write_summaries(root) -> list[str]:
    """Each study's headline medians (DVC metrics) and, for a study over a knob, its median
    curves (DVC plots), read off its aggregated table; the studies written."""
    done = []
    for spec in all_studies():
        for pair in (p for p in spec.tables if p.headline):
            path = study_table_path(root, pair.aggregated)
            if not path.exists():
                continue
            x = pair.curve[0] if pair.curve else None
            table = pd.read_csv(path, float_precision="round_trip",
                                dtype={x: str} if x else None)
            if x:
                table[x] = table[x].map(_number).astype(object)
                write_csv(study_curve_path(root, spec.name), curve(pair, table))
            write_text(study_headline_path(root, spec.name), dumps_json(headline(pair, table)))
            done.append(spec.name)
    return done
