"""The scale study's figure: cost against N, log-log, from ``results/scale_runs.csv`` (the
frozen ``scale`` stage, :mod:`drfidelity.scale.study`); its caption and table are the report's
(:mod:`drfidelity.report.scale`)."""

from __future__ import annotations

import pandas as pd

from drfidelity.figures import style
from drfidelity.scale import ENGINE

ENGINE_COLOR = "#555555"


def _color(subject: str) -> str:
    return ENGINE_COLOR if subject == ENGINE else style.method_color(subject)


def scale_figure(runs: pd.DataFrame) -> object:
    """Wall time and peak RSS against N (log-log), one line per method and the metric engine
    (dashed); sizes a subject did not finish are left out of its line."""
    done = runs[runs["status"] == "ok"]
    fig = style.figure(style.FULL_WIDTH, 2.8)
    axes = fig.subplots(1, 2)
    for subject in dict.fromkeys(runs["subject"]):
        rows = done[done["subject"] == subject]
        if rows.empty:
            continue
        for ax, column in zip(axes, ("wall_s", "peak_rss_mib")):
            ax.plot(rows["n"], rows[column], marker="o", ms=3, lw=1.2, color=_color(subject),
                    ls="--" if subject == ENGINE else "-", label=subject)
    for ax, label in zip(axes, ("wall time of one call (s)", "peak RSS of the process (MiB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("N (points)")
        ax.set_ylabel(label)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 5))
    return fig
