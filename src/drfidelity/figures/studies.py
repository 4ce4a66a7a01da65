"""The studies' figures and the main benchmark's stability and bridge-gap figures: galleries of
the study maps and curves of the study tables.

Each function takes arrays and result tables (never paths) and returns a matplotlib figure, or
``(figure, facts)`` when the figure measures something the captions quote. A method that did
not run gets a panel saying so, with its reason. Methods whose rows the previous release did
not have (``new``, e.g. DREAMS in the sweeps) are drawn dashed. The stage hands this module to
a study's ``figures`` as ``kit.draw``.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.lines import Line2D

from drfidelity.figures import style
from drfidelity.figures.panels import draw_populations, map_axes, method_title, panel_grid
from drfidelity.figures.settings import JUMP_FACTOR, METRIC_LOOKS
from drfidelity.figures.study_captions import (dims_grid_caption, hyperparam_caption,  # noqa: F401
                                               trajectory_caption)
from drfidelity.metrics.bridges import TORN_RATIO
from drfidelity.ordering import ordered

#: rng seed and size of the cross-series pair sample of the geometry explainer.
PAIR_SEED = 12345
N_PAIRS = 8000
CHANCE = 1 / 3
EMBEDDING_SUFFIX = "-embedding"
#: legend names of toorPIA's two noise-dims arms (its two service endpoints).
TOORPIA_ARMS = {"toorPIA": "toorPIA (basemap_csvform)",
                "toorPIA-embedding": "toorPIA (basemap_embedding)"}
#: characters per line of a text inside a panel at 7 pt: a gallery panel (a quarter of the
#: width), a cell of the maps-across-D grid (a tenth). matplotlib's own ``wrap`` fills the
#: figure's width, so the text overflowed its panel and squeezed the drawn ones.
PANEL_WRAP = 24
CELL_WRAP = 10


def label_color(label: str) -> str:
    """A method's colour, also for a labelled arm of it (``toorPIA-embedding``)."""
    return style.method_color(label.removesuffix(EMBEDDING_SUFFIX))


def skipped_panel(ax, method: str, reason: str) -> None:
    """A panel without a map, framed dashed in the method's colour (so it reads as a panel,
    not as a broken one), that names the method and why, wrapped inside it."""
    ax.text(0.5, 0.5, "not run:\n" + textwrap.fill(reason, PANEL_WRAP), ha="center",
            va="center", fontsize=7, color="#555555", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    method_title(ax, method)
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_linestyle("--")


def _gallery(maps: dict, skipped: dict[str, str], draw) -> object:
    """One panel per method (drawn by ``draw(ax, method, map)``), skipped methods included."""
    methods = ordered(list(maps) + list(skipped))
    fig, axes = panel_grid(len(methods))
    for ax, method in zip(axes, methods):
        if method in maps:
            draw(ax, method, maps[method])
            map_axes(ax)
        else:
            skipped_panel(ax, method, skipped[method])
    return fig


# ------------------------------------------------------------------------- galleries

def addplot_gallery(labels_fit: np.ndarray, anchor: np.ndarray,
                    maps: dict[str, tuple[np.ndarray, np.ndarray]], seeds: dict[str, int],
                    skipped: dict[str, str]) -> object:
    """Fit bulk faint by cluster, added controls as small dark dots, added anomalies as open
    triangles edged in their source cluster's colour: the added rows land on the bulk, so
    they are drawn small or open and the bulk stays visible beneath them.

    Parameters
    ----------
    labels_fit : (N_fit,) cluster label of every fit row.
    anchor : (n_anomalies,) source cluster of each anomaly; the added rows are the anomalies
        first, then the controls.
    maps : method -> (fit map, added rows' map).
    seeds : method -> seed drawn.
    skipped : method -> reason it has no map.
    """
    n_anom = len(anchor)
    norm = Normalize(0, 9)

    def draw(ax, method, pair):
        fit, added = pair
        ax.scatter(*fit.T, c=labels_fit % 10, cmap="tab10", norm=norm, s=5, alpha=0.5,
                   linewidths=0)
        ax.scatter(*added[n_anom:].T, c="#222222", s=2, alpha=0.8, linewidths=0, zorder=2,
                   label="added controls")
        ax.scatter(*added[:n_anom].T, marker="^", s=34, facecolors="none",
                   edgecolors=colormaps["tab10"](anchor % 10), linewidths=1.0, zorder=3,
                   label="added anomalies")
        method_title(ax, method, f"seed {seeds[method]}")

    return _gallery(maps, skipped, draw)


def trajectory_gallery(series: np.ndarray, t: np.ndarray, maps: dict[str, np.ndarray],
                       seeds: dict[str, int], skipped: dict[str, str]) -> object:
    """Each series in its own colour, its steps joined in time order (start a circle, end a
    square); a step the map stretches beyond :data:`JUMP_FACTOR` x the series' median step is
    drawn thin and dashed, a tear the data does not have."""
    ids = [int(s) for s in np.unique(series)]
    colours = {s: f"C{k % 10}" for k, s in enumerate(ids)}

    def draw(ax, method, Y):
        for s in ids:
            rows = np.flatnonzero(series == s)
            path = Y[rows[np.argsort(t[rows], kind="stable")]]
            steps = np.linalg.norm(np.diff(path, axis=0), axis=1)
            jump = steps > JUMP_FACTOR * np.median(steps) if len(steps) else steps
            for k in range(len(steps)):
                ax.plot(*path[k:k + 2].T, color=colours[s], lw=0.4 if jump[k] else 0.9,
                        ls="--" if jump[k] else "-", alpha=0.6 if jump[k] else 1.0)
            ax.scatter(*path[0], marker="o", s=16, c=colours[s], edgecolors="black",
                       linewidths=0.5, zorder=3)
            ax.scatter(*path[-1], marker="s", s=16, c=colours[s], edgecolors="black",
                       linewidths=0.5, zorder=3)
        method_title(ax, method, f"seed {seeds[method]}")

    fig = _gallery(maps, skipped, draw)
    handles = [Line2D([], [], color=colours[s], lw=1.2, label=f"series {s}") for s in ids]
    handles += [Line2D([], [], ls="none", marker="o", color="grey", mec="black",
                       label="start (t = 0)"),
                Line2D([], [], ls="none", marker="s", color="grey", mec="black",
                       label="end"),
                Line2D([], [], color="grey", lw=0.5, ls="--",
                       label=f"step > {JUMP_FACTOR:g}× the series' median step (torn)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 5))
    return fig


def population_gallery(arrays: dict[str, np.ndarray], maps: dict[str, np.ndarray],
                       seeds: dict[str, int], skipped: dict[str, str]) -> object:
    """The populations gallery of the main figures, for one minority fraction."""
    def draw(ax, method, Y):
        draw_populations(ax, Y, arrays)
        method_title(ax, method, f"seed {seeds[method]}")

    return _gallery(maps, skipped, draw)


def dims_grid(labels: dict[int, np.ndarray], maps: dict[str, dict[int, np.ndarray]],
              skipped: dict[str, str]) -> object:
    """Rows = methods (arms), columns = dimensions; each map coloured by its label."""
    dims = sorted(labels)
    rows = ordered(list(maps) + list(skipped))
    size = style.FULL_WIDTH / max(len(dims), 1)
    fig = style.figure(style.FULL_WIDTH, size * len(rows) + 0.4)
    axes = fig.subplots(len(rows), len(dims), squeeze=False)
    for i, label in enumerate(rows):
        for j, dim in enumerate(dims):
            ax = axes[i, j]
            Y = maps.get(label, {}).get(dim)
            ax.set_xticks([])
            ax.set_yticks([])
            if Y is not None:
                ax.scatter(*Y.T, c=labels[dim] % 10, cmap="tab10", norm=Normalize(0, 9), s=1,
                           linewidths=0)
                ax.set_aspect("equal", adjustable="datalim")
            else:
                ax.text(0.5, 0.5, textwrap.fill(skipped.get(label, "no map"), CELL_WRAP),
                        ha="center", va="center", fontsize=7, transform=ax.transAxes)
            if i == 0:
                ax.set_title(f"D = {dim}")
            if j == 0:
                ax.set_ylabel(row_label(label), color=label_color(label), fontsize=7,
                              rotation=0, ha="right", va="center")
    return fig


def row_label(label: str) -> str:
    """A row's name, written across: an arm's suffix on a line of its own (``toorPIA`` /
    ``-embedding``), since a name written up the row was longer than the row and was cut."""
    base = label.removesuffix(EMBEDDING_SUFFIX)
    return base + ("\n" + EMBEDDING_SUFFIX if base != label else "")


# ------------------------------------------------------------------------- geometry

def _angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angles in degrees between the rows of ``a`` and ``b`` (zero rows dropped)."""
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    keep = (na > 0) & (nb > 0)
    cos = np.einsum("ij,ij->i", a[keep], b[keep]) / (na[keep] * nb[keep])
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def walk_geometry(X: np.ndarray, series: np.ndarray, t: np.ndarray) -> dict[str, np.ndarray]:
    """What the random walks are, measured on the data: radius against t, step angles,
    cross-series displacement angles and a Pythagorean check on random cross-series pairs.

    The common start is the mean of the series' first points; radii are distances from it.
    """
    ids = np.unique(series)
    ordered_rows = [np.flatnonzero(series == s)[np.argsort(t[series == s], kind="stable")]
                    for s in ids]
    origin = np.mean([X[rows[0]] for rows in ordered_rows], axis=0)
    length = min(len(rows) for rows in ordered_rows)
    disp = np.stack([X[rows[:length]] - origin for rows in ordered_rows])  # (S, T, D)
    radius = np.linalg.norm(disp, axis=2)
    steps = np.diff(disp, axis=1)
    step_angles = np.concatenate([_angles(s[:-1], s[1:]) for s in steps])
    cross = [_angles(disp[a, 1:], disp[b, 1:]) for a in range(len(ids))
             for b in range(a + 1, len(ids))]
    cross_angles = np.concatenate(cross) if cross else np.array([])
    rng = np.random.default_rng(PAIR_SEED)
    i = rng.integers(0, X.shape[0], N_PAIRS)
    j = rng.integers(0, X.shape[0], N_PAIRS)
    keep = series[i] != series[j]
    i, j = i[keep], j[keep]
    r2 = ((X[i] - origin) ** 2).sum(1) + ((X[j] - origin) ** 2).sum(1)
    d2 = ((X[i] - X[j]) ** 2).sum(1)
    steps_t = np.arange(1, length)
    med_radius = np.median(radius[:, 1:], axis=0)
    exponent = float(np.polyfit(np.log(steps_t), np.log(med_radius), 1)[0])
    return {"radius": radius, "step_angles": step_angles, "cross_angles": cross_angles,
            "r2": r2, "d2": d2, "exponent": exponent}


def geometry_explainer(X: np.ndarray, series: np.ndarray, t: np.ndarray) -> tuple[object, dict]:
    """Four panels measured on the data, and the numbers the caption quotes."""
    g = walk_geometry(X, series, t)
    fig = style.figure(style.FULL_WIDTH, 4.6)
    (a, b), (c, d) = fig.subplots(2, 2)
    steps = np.arange(g["radius"].shape[1])
    for r in g["radius"]:
        a.plot(steps, r, color="#999999", lw=0.5)
    scale = np.median(g["radius"][:, 1:] / np.sqrt(steps[1:]))
    a.plot(steps, scale * np.sqrt(steps), color="black", ls="--",
           label=f"c·√t (fitted exponent {g['exponent']:.2f})")
    a.set_xlabel("step t")
    a.set_ylabel("distance from the start (data units)")
    a.legend()
    b.hist(g["step_angles"], bins=60, color="#888888")
    b.set_xlabel("angle between successive steps (°)")
    b.set_ylabel("count")
    c.hist(g["cross_angles"], bins=60, color="#888888")
    c.set_xlabel("angle between two series' displacements at equal t (°)")
    c.set_ylabel("count")
    d.hexbin(g["r2"], g["d2"], gridsize=50, bins="log", mincnt=1, cmap="viridis")
    top = float(max(g["r2"].max(), g["d2"].max())) if len(g["r2"]) else 1.0
    d.plot([0, top], [0, top], color="black", ls="--", lw=0.8, label="d² = r₁² + r₂²")
    d.set_xlabel("r₁² + r₂² (squared radii, data units²)")
    d.set_ylabel("squared distance d² (data units²)")
    d.legend()
    ratio = g["d2"] / g["r2"]
    facts = {"n_series": int(len(np.unique(series))), "length": int(g["radius"].shape[1]),
             "d": int(X.shape[1]), "radius_exponent": g["exponent"],
             "step_angle_median": float(np.median(g["step_angles"])),
             "cross_angle_median": _median_or_none(g["cross_angles"]),
             "pythagoras_median": _median_or_none(ratio)}
    return fig, facts


def _median_or_none(values: np.ndarray) -> float | None:
    """The median, or ``None`` (JSON null) when there is nothing to take it of (one series)."""
    return float(np.median(values)) if len(values) else None


# ------------------------------------------------------------------------- curves

def _curve(ax, x, rows: pd.DataFrame, label: str, *, dashed: bool, legend: str) -> None:
    """One method's (or arm's) median line with its CI band."""
    colour = label_color(label)
    ax.fill_between(x, rows["ci_lo"], rows["ci_hi"], color=colour, alpha=0.15, linewidth=0)
    ax.plot(x, rows["median"], color=colour, marker="o", ms=3, lw=1.2,
            ls="--" if dashed else "-", label=legend)


def sweep_curves(aggregated: pd.DataFrame, knob: str, metrics, xlabel: str,
                 new_methods=()) -> object:
    """One panel per metric: every method's median and CI against the knob (log x).

    Parameters
    ----------
    aggregated : long table with columns method, ``knob``, metric, median, ci_lo, ci_hi.
    metrics : (metric, label) pairs, one panel each.
    new_methods : drawn dashed (rows the previous release did not have).
    """
    cols = min(len(metrics), 3)
    rows_n = -(-len(metrics) // cols)
    fig = style.figure(style.FULL_WIDTH, 2.4 * rows_n + 0.5)
    axes = fig.subplots(rows_n, cols, squeeze=False).ravel()
    for ax in axes[len(metrics):]:
        ax.set_visible(False)
    for ax, (metric, label) in zip(axes, metrics):
        subset = aggregated[aggregated["metric"] == metric]
        for method in ordered(subset["method"]):
            rows = subset[subset["method"] == method].sort_values(knob)
            new = method in new_methods
            _curve(ax, rows[knob].to_numpy(float), rows, method, dashed=new,
                   legend=method + (" (new)" if new else ""))
        ax.set_xscale("log")
        values = sorted(set(subset[knob]))
        ax.set_xticks(values, [f"{v:g}" for v in values])
        ax.minorticks_off()
        ax.axhline(0, color="black", lw=0.4, ls=":")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"{label} (Spearman, median)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 8))
    return fig


def dimension_curve(generic: pd.DataFrame, embedding: pd.DataFrame | None,
                    ambient: dict[int, float], k: int) -> object:
    """2-D kNN accuracy (metric ``knn_acc_k<k>``) against D (left, chance and the ambient
    baseline drawn) and the skill ratio (acc − chance) / (ambient acc − chance) (right)."""
    frames = [generic] + ([embedding] if embedding is not None else [])
    knn = pd.concat([f[f["metric"] == f"knn_acc_k{k}"] for f in frames])
    fig = style.figure(style.FULL_WIDTH, 3.4)
    left, right = fig.subplots(1, 2, sharex=True)
    for label in ordered(knn["method"]):
        rows = knn[knn["method"] == label].sort_values("dim")
        dims = rows["dim"].to_numpy(int)
        dashed = label.endswith(EMBEDDING_SUFFIX)
        _curve(left, dims, rows, label, dashed=dashed, legend=TOORPIA_ARMS.get(label, label))
        base = np.array([ambient.get(int(d), np.nan) for d in dims])
        skill = (rows["median"].to_numpy() - CHANCE) / (base - CHANCE)
        right.plot(dims, skill, color=label_color(label), marker="o", ms=3, lw=1.2,
                   ls="--" if dashed else "-")
    if ambient:
        dims = sorted(ambient)
        left.plot(dims, [ambient[d] for d in dims], color="black", ls=":", lw=1.5,
                  label="ambient D-dim data")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("dimension D (log scale)")
    left.axhline(CHANCE, color="black", ls="--", lw=0.6, label="chance (1/3)")
    left.set_ylabel(f"2-D kNN label accuracy (k = {k})")
    right.axhline(0, color="black", ls="--", lw=0.6)
    right.set_ylabel("skill = (acc − 1/3) ÷ (ambient acc − 1/3)")
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=5)
    return fig


#: panels per row of the hyper-parameter figure (beyond it, a panel's tick labels collide)
HYPERPARAM_COLUMNS = 4


def hyperparam_curves(aggregated: pd.DataFrame, metrics, defaults: dict[tuple[str, str], float]
                      ) -> object:
    """Datasets × methods grid; each panel the metrics' medians (with CIs) against the knob
    value (log x), the main benchmark's setting as a grey vertical line.

    Parameters
    ----------
    aggregated : long table (dataset, method, knob, value, metric, median, ci_lo, ci_hi).
    metrics : (metric, label) pairs, one line each (colour, line style and marker tell them
        apart; the panel frame and title carry the method's colour).
    defaults : (method, knob) -> the main benchmark's value.
    """
    datasets = list(dict.fromkeys(aggregated["dataset"]))
    methods = ordered(aggregated["method"])
    # a dataset's methods wrap onto lines of at most HYPERPARAM_COLUMNS panels
    columns = min(len(methods), HYPERPARAM_COLUMNS)
    lines = -(-len(methods) // columns)
    fig = style.figure(style.FULL_WIDTH, 2.0 * len(datasets) * lines + 0.5)
    axes = fig.subplots(len(datasets) * lines, columns, squeeze=False)
    looks = [dict(color=colour, ls=ls, marker=marker) for colour, ls, marker in METRIC_LOOKS]
    for i, dataset in enumerate(datasets):
        for empty in range(len(methods), lines * columns):
            axes[i * lines + empty // columns, empty % columns].set_visible(False)
        for j, method in enumerate(methods):
            ax = axes[i * lines + j // columns, j % columns]
            subset = aggregated[(aggregated["dataset"] == dataset)
                                & (aggregated["method"] == method)]
            knob = subset["knob"].iloc[0] if len(subset) else ""
            for (metric, label), look in zip(metrics, looks):
                rows = subset[subset["metric"] == metric].copy()
                rows["x"] = rows["value"].astype(float)
                rows = rows.sort_values("x")
                ax.fill_between(rows["x"], rows["ci_lo"], rows["ci_hi"], color=look["color"],
                                alpha=0.15, linewidth=0)
                ax.plot(rows["x"], rows["median"], ms=3, lw=1.1, label=label, **look)
            if (method, knob) in defaults:
                ax.axvline(float(defaults[(method, knob)]), color="#888888", lw=0.8,
                           label="main benchmark's setting")
            ax.set_xscale("log")
            values = sorted(set(subset["value"].astype(float)))
            ax.set_xticks(values, [f"{v:g}" for v in values])
            ax.minorticks_off()
            ax.set_xlabel(f"{knob} (log scale)")
            method_title(ax, method, dataset)
            if j % columns == 0:
                ax.set_ylabel("median score")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels))
    return fig


def stability_bars(stability: pd.DataFrame) -> object:
    """Position dispersion and full-ρ std per dataset, one bar per stochastic method."""
    datasets = list(dict.fromkeys(stability["dataset"]))
    methods = ordered(stability["method"])
    width = 0.8 / max(len(methods), 1)
    fig = style.figure(style.FULL_WIDTH, 2.8)
    axes = fig.subplots(1, 2)
    for ax, (column, label) in zip(axes, (("position_dispersion",
                                            "position dispersion (unit-norm map)"),
                                           ("full_shepard__std", "std of full ρ over seeds"))):
        for k, method in enumerate(methods):
            rows = stability[stability["method"] == method].set_index("dataset")
            values = [rows[column].get(d, np.nan) for d in datasets]
            ax.bar(np.arange(len(datasets)) + k * width, values, width,
                   color=style.method_color(method), label=method)
        ax.set_xticks(np.arange(len(datasets)) + width * (len(methods) - 1) / 2, datasets)
        ax.set_ylabel(label)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels))
    return fig


def bridge_gap_bars(gaps: pd.DataFrame) -> object:
    """Median gap ratio over seeds per bridge and method; the torn threshold dashed."""
    bridges = list(dict.fromkeys(gaps["bridge"]))
    methods = ordered(gaps["method"])
    medians = gaps.groupby(["method", "bridge"])["gap_ratio"].median()
    width = 0.8 / max(len(methods), 1)
    fig = style.figure(style.FULL_WIDTH, 2.8)
    ax = fig.subplots()
    for k, method in enumerate(methods):
        ax.bar(np.arange(len(bridges)) + k * width, [medians[(method, b)] for b in bridges],
               width, color=style.method_color(method), label=method)
    ax.axhline(TORN_RATIO, color="black", ls="--", lw=0.8, label="torn above")
    ax.set_xticks(np.arange(len(bridges)) + width * (len(methods) - 1) / 2,
                  [f"bridge {b}" for b in bridges])
    ax.set_ylabel("gap ÷ centroid distance\n(median over seeds)")
    # below the axes: inside them the legend covered the tallest bars
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=5)
    return fig
