"""The pieces the figures share: panel grids, method titles and map axes, and the map
gallery of a dataset, whose kind (:data:`GALLERIES`) its spec names."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.colors import Normalize

from drfidelity.datasets.registry import DATASETS
from drfidelity.figures import style

if TYPE_CHECKING:
    from drfidelity.figures.analysis import DatasetView

#: marker size (points^2) of the map galleries and point-wise maps
MAP_POINT_SIZE = 3
#: height (inches) of what a panel grid carries besides its rows: the heading on top, a
#: colour bar or legend below
GRID_OVERHEAD = 0.9


def panel_grid(count: int, panel: float = style.FULL_WIDTH / style.PANELS_PER_ROW,
               extra_height: float = 0.6):
    """A figure of ``count`` panels, :data:`style.PANELS_PER_ROW` to a row; ``extra_height``
    per row holds the panel titles and axis labels."""
    cols = min(style.PANELS_PER_ROW, max(count, 1))
    rows = -(-max(count, 1) // cols)
    fig = style.figure(style.FULL_WIDTH, rows * (panel + extra_height) + GRID_OVERHEAD)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes[:count]


def method_title(ax, method: str, detail: str = "") -> None:
    ax.set_title(method + (f"\n{detail}" if detail else ""), color=style.method_color(method))
    for spine in ax.spines.values():
        spine.set_edgecolor(style.method_color(method))


def map_axes(ax) -> None:
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.spines[["top", "right"]].set_visible(True)
    ax.set_xlabel("map axis 1 (a.u.)", fontsize=7)
    ax.set_ylabel("map axis 2 (a.u.)", fontsize=7)


def gallery(view: DatasetView) -> object:
    """Each method's map, coloured by what is known to be true about the points; the marker
    kinds a gallery draws (outlier stars, minority triangles) get a legend."""
    fig, axes = panel_grid(len(view.maps))
    draw, label = GALLERIES[DATASETS[view.dataset].gallery]
    scalar = None
    for ax, (method, Y) in zip(axes, view.maps.items()):
        scalar = draw(ax, Y, view.arrays)
        map_axes(ax)
        method_title(ax, method, f"seed {view.seeds[method]}")
    if scalar is not None:
        fig.colorbar(scalar, ax=list(axes), location="bottom", shrink=0.5, aspect=40, label=label)
    handles, labels = axes[0].get_legend_handles_labels() if len(axes) else ([], [])
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=len(handles))
    return fig


def _draw_labels(ax, Y, arrays) -> None:
    ax.scatter(*Y.T, c=arrays["labels"] % 10, cmap="tab10", norm=Normalize(0, 9),
               s=MAP_POINT_SIZE, linewidths=0)


def _draw_value(key: str, cmap: str):
    """A gallery drawing that colours the points by input array ``key`` and returns the
    scatter, for the colour bar."""
    def draw(ax, Y, arrays):
        return ax.scatter(*Y.T, c=arrays[key], cmap=cmap, s=MAP_POINT_SIZE, linewidths=0)

    return draw


#: outlier stars: white with a black edge, a look no cluster colour shares
OUTLIER_STAR = {"marker": "*", "s": 70, "c": "white", "edgecolors": "black",
                "linewidths": 0.7, "zorder": 3}
#: a pair's two members get one label ("o0ab") when they lie closer than this share of the
#: map's extent (they would print on top of each other)
PAIR_MERGE = 0.04


def _draw_outliers(ax, Y, arrays) -> None:
    """Bulk faint by cluster; each outlier a white star labelled o<direction><a|b> (one label
    per pair when its members coincide), the labels placed apart."""
    idx = arrays["outlier_idx"]
    bulk = np.ones(Y.shape[0], bool)
    bulk[idx] = False
    ax.scatter(*Y[bulk].T, c=arrays["labels"][bulk] % 10, cmap="tab10", norm=Normalize(0, 9),
               s=MAP_POINT_SIZE, alpha=0.55, linewidths=0)
    ax.scatter(*Y[idx].T, label="outlier o<direction><pair member a|b>", **OUTLIER_STAR)
    extent = float(np.ptp(Y, axis=0).max()) or 1.0
    points, texts = [], []
    for direction in dict.fromkeys(int(v) for v in arrays["outlier_dir"]):
        members = idx[arrays["outlier_dir"] == direction]
        spots = Y[members]
        if len(members) == 2 and np.linalg.norm(spots[0] - spots[1]) < PAIR_MERGE * extent:
            points.append(spots.mean(axis=0))
            texts.append(f"o{direction}ab")
        else:
            points += list(spots)
            texts += [f"o{direction}{'ab'[m % 2]}" for m in range(len(members))]
    style.place_labels(ax, points, texts, ["black"] * len(texts), marker_size=9,
                       others=list(Y[idx]), fontsize=7)


def draw_populations(ax, Y, arrays) -> None:
    population, labels = arrays["population"], arrays["labels"] % 10
    major, minor = population == 0, population == 1
    ax.scatter(*Y[major].T, c=labels[major], cmap="tab10", norm=Normalize(0, 9),
               s=MAP_POINT_SIZE, linewidths=0)
    ax.scatter(*Y[minor].T, c=labels[minor], cmap="tab10", norm=Normalize(0, 9), s=14,
               marker="^", edgecolors="black", linewidths=0.4,
               label="minority population (colour = cluster)")


#: gallery kind (``DatasetSpec.gallery``) -> (draw(ax, Y, arrays), colour-bar label); a kind
#: whose draw returns a scatter gets a colour bar.
GALLERIES = {
    "labels": (_draw_labels, None),
    "local_density": (_draw_value("log_local_density", "viridis"),
                      "latent log local density −log r₁₀"),
    "cyclic_position": (_draw_value("t", "twilight"), "position t along the loop (cyclic)"),
    "outlier_stars": (_draw_outliers, None),
    "minority_triangles": (draw_populations, None),
}
