"""The figures of one dataset, drawn from its data, its maps and the aggregated results.

Each figure function takes a :class:`~drfidelity.figures.analysis.DatasetView` (and the
:class:`~drfidelity.figures.analysis.Analysis` computed once from it) and returns a
matplotlib figure; :func:`draw_all` returns every figure as PNG bytes together with the numbers
the report's captions quote (the "facts", :func:`~drfidelity.figures.analysis.facts`).
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import LogNorm, PowerNorm
from matplotlib.ticker import FuncFormatter

from drfidelity.figures import style
from drfidelity.figures.analysis import (KAPPA_T_GRID, Analysis, DatasetView, analyse, facts,
                                         rnx_k_max)
from drfidelity.figures.panels import gallery, map_axes, method_title, panel_grid
from drfidelity.figures.settings import (POINTWISE_GAMMA, POINTWISE_KAPPA_S, POINTWISE_KAPPA_T,
                                         POINTWISE_VMAX, RANK_QUALITY_FLOOR, RANK_QUALITY_LEVEL,
                                         heatmap_metrics, scatter_axis)
from drfidelity.metrics.bands import PERCENTILES

HEX_GRIDSIZE = 90
HIST_BINS = 60
#: tick labels as plain numbers (1, 10, 100; 0.03) on log axes
PLAIN_NUMBER = FuncFormatter(lambda value, _: f"{value:g}")
#: marker size (points^2) of the point-wise quality maps
LOCAL_POINT_SIZE = 7


def distance_distribution(view: DatasetView, analysis: Analysis) -> object:
    """Histogram of all ambient pair distances with the first-mode near band shaded."""
    fig = style.figure(style.FULL_WIDTH, 2.6)
    left, right = fig.subplots(1, 2, width_ratios=(3, 1))
    d = analysis.d_ambient
    left.hist(d, bins=HIST_BINS, color="#888888")
    left.axvspan(d.min(), analysis.near_radius, color="tab:green", alpha=0.25,
                 label=f"first-mode near band: d ≤ {analysis.near_radius:.2f} "
                       f"({100 * analysis.near_share:.1f}% of pairs)"
                       + (" — fallback p5" if analysis.near_fallback else ""))
    for p in PERCENTILES[:-1]:
        left.axvline(analysis.radii[p], color="black", ls="--", lw=0.6)
        left.annotate(f"p{p}", (analysis.radii[p], 0.98), xycoords=("data", "axes fraction"),
                      fontsize=7, rotation=90, va="top", ha="right",
                      bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
    left.axvline(d.mean(), color="tab:red", lw=1, label=f"mean {d.mean():.2f}")
    left.set_xlabel("ambient pair distance (data units)")
    left.set_ylabel("pairs per bin")
    cumulative = left.twinx()
    ordered = np.sort(d)
    cumulative.plot(ordered, 100 * np.arange(1, d.size + 1) / d.size, color="tab:blue", lw=1)
    cumulative.set_ylabel("cumulative % of pairs", color="tab:blue")
    cumulative.set_ylim(0, 100)
    cumulative.spines["right"].set_visible(True)
    left.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncols=2, fontsize=7, frameon=False)
    right.bar(["far pairs", "near band"], [analysis.far_pairs, analysis.near_pairs],
              color=["#888888", "tab:green"])
    right.set_ylabel("pairs")
    if analysis.outvote_ratio is not None:
        right.set_title(f"far pairs out-vote near\npairs {analysis.outvote_ratio:.1f} : 1")
    return fig


def recall_bias(view: DatasetView, analysis: Analysis) -> object:
    """Why recall@k is biased: k-NN radii differ per point, a fixed band radius does not.

    The right panel compares with the first-mode near band used everywhere else (the previous
    release drew its fixed 5th-percentile radius here)."""
    fig = style.figure(style.FULL_WIDTH, 2.4)
    left, right = fig.subplots(1, 2)
    rng = np.random.default_rng(0)
    dense = rng.normal([-2.0, 0.0], 0.25, size=(40, 2))
    sparse = rng.normal([2.0, 0.0], 1.0, size=(40, 2))
    left.scatter(*dense.T, s=5, color="tab:blue")
    left.scatter(*sparse.T, s=5, color="tab:orange")
    for cloud, colour in ((dense, "tab:blue"), (sparse, "tab:orange")):
        centre = cloud[0]
        radius = np.sort(np.linalg.norm(cloud - centre, axis=1))[5]
        left.add_patch(_circle(centre, radius, colour))
    left.set_aspect("equal", adjustable="datalim")
    left.set_title("k = 5 neighbourhoods: same k, very different radii")
    left.set_xlabel("x (schematic units)")
    left.set_ylabel("y (schematic units)")
    kth, k = analysis.kth_distance, analysis.k
    right.hist(kth, bins=40, color="#888888")
    right.axvline(analysis.near_radius, color="tab:green", lw=1.5,
                  label=f"first-mode band radius {analysis.near_radius:.2f}")
    inside = analysis.kth_inside
    right.set_title(f"distance to each point's {k}-th ambient neighbour\n"
                    f"{100 * inside:.0f}% of points have it inside the band")
    right.set_xlabel("ambient distance (data units)")
    right.set_ylabel("points")
    right.legend(fontsize=7)
    return fig


def _circle(centre, radius, colour):
    from matplotlib.patches import Circle

    return Circle(centre, radius, fill=False, color=colour, lw=1)


def shepard_density(view: DatasetView, analysis: Analysis) -> object:
    """Shepard diagram per method as a log-count hexbin over all pairs, one count scale (and
    one colour bar) for all panels."""
    fig, axes = panel_grid(len(view.maps), extra_height=0.35)
    bins = []
    for i, (ax, method) in enumerate(zip(axes, view.maps)):
        bins.append(ax.hexbin(analysis.d_ambient, analysis.d_maps[method],
                              gridsize=HEX_GRIDSIZE, mincnt=1, cmap="viridis", linewidths=0))
        ax.axvline(analysis.near_radius, color="tab:red", ls="--", lw=0.8)
        ax.set_facecolor("#f4f4f4")
        if i % style.PANELS_PER_ROW == 0:
            ax.set_ylabel("map distance (map units)")
        method_title(ax, method, f"full ρ = {view.run_value(method, 'full_shepard'):.3f}")
    if bins:
        top = max(float(b.get_array().max()) for b in bins)
        norm = LogNorm(1, max(top, 10.0))
        for b in bins:
            b.set_norm(norm)
        fig.colorbar(bins[0], ax=list(axes), location="bottom", shrink=0.5, aspect=40,
                     label="pairs per hexagon (log scale, same for all panels)")
        fig.supxlabel("ambient distance (data units); dashed red = near-band radius "
                      f"{analysis.near_radius:.2f}", fontsize=8)
    return fig


def score_scatter(view: DatasetView) -> object:
    """One point per method: the dataset's own structure score (x: near-band, outlier-pair or
    minority-pair ρ) against full ρ (y), with CIs; labels placed clear of points and bars."""
    metric_x, label_x = scatter_axis(view.dataset)
    fig = style.figure(style.FULL_WIDTH * 0.6, 3.2)
    ax = fig.subplots()
    points, colours, segments = [], [], []
    for method in view.maps:
        x, y = view.median(method, metric_x), view.median(method, "full_shepard")
        (xlo, xhi), (ylo, yhi) = view.ci(method, metric_x), view.ci(method, "full_shepard")
        colour = style.method_color(method)
        ax.errorbar(x, y, xerr=[[x - xlo], [xhi - x]], yerr=[[y - ylo], [yhi - y]],
                    fmt="o", color=colour, ms=5, capsize=2, lw=0.8)
        points.append((x, y))
        colours.append(colour)
        segments += [((xlo, y), (xhi, y)), ((x, ylo), (x, yhi))]
    ax.axvline(0, color="black", lw=0.5, ls=":")
    ax.set_xlabel(label_x)
    ax.set_ylabel("full Shepard ρ, all pairs (median)")
    style.place_labels(ax, points, list(view.maps), colours, marker_size=8,
                       segments=segments, fontsize=7)
    return fig


def summary_heatmap(view: DatasetView) -> object:
    """Methods x main metrics (medians), values printed."""
    methods = list(view.maps)
    columns = heatmap_metrics(view.dataset)
    values = np.array([[view.median(m, key) for key, _ in columns] for m in methods])
    fig = style.figure(style.FULL_WIDTH * (0.45 + 0.03 * len(columns)),
                       0.35 * len(methods) + 1.0)
    ax = fig.subplots()
    image = ax.imshow(values, cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(columns)), [label for _, label in columns])
    ax.set_yticks(range(len(methods)), methods)
    for tick, method in zip(ax.get_yticklabels(), methods):
        tick.set_color(style.method_color(method))
    for (i, j), v in np.ndenumerate(values):
        # a median that rounds to zero prints unsigned: its sign says nothing
        text = "—" if np.isnan(v) else f"{v:.3f}".replace("-0.000", "0.000")
        ax.text(j, i, text, ha="center", va="center", fontsize=7,
                color="white" if not np.isnan(v) and v < 0.6 else "black")
    fig.colorbar(image, ax=ax, label="median (1 = perfect)")
    return fig



def rnx_curves(view: DatasetView, analysis: Analysis) -> object:
    """R_NX(K) of every map against log K up to K = N/2 (:func:`rnx_k_max`), AUC (over all
    K) on the log axis in the legend."""
    fig = style.figure(style.FULL_WIDTH * 0.6, 3.2)
    ax = fig.subplots()
    k_max = rnx_k_max(view.X.shape[0])
    for method in sorted(view.maps, key=lambda m: -analysis.auc[m]):
        curve = analysis.rnx[method][:k_max]
        ax.plot(np.arange(1, curve.size + 1), curve, color=style.method_color(method), lw=1.1,
                label=f"{method} (AUC {analysis.auc[method]:.3f})")
    ax.set_xscale("log")
    bottom = min((float(c[:k_max].min()) for c in analysis.rnx.values()), default=0.0)
    ax.set_ylim(bottom=min(0.0, bottom))
    ax.set_xlabel(f"neighbourhood size K (points, log scale; drawn up to N/2 = {k_max})")
    ax.set_ylabel("R_NX(K) (0 = random, 1 = perfect)")
    ax.legend(fontsize=7, title="AUC on log K, all K", title_fontsize=7)
    return fig


def level_steps(quality: np.ndarray, level: float = RANK_QUALITY_LEVEL) -> np.ndarray:
    """Per κ_s column, the row boundary (row index − ½) below the first tolerance whose Q′
    reaches ``level``; NaN where none does. Q′ grows with the tolerance, so the region
    Q′ ≥ level is these columns' tops: one outline, where a contour of the coarse, unevenly
    spaced rows broke into interpolated stubs."""
    reached = quality >= level
    return np.where(reached.any(axis=0), reached.argmax(axis=0) - 0.5, np.nan)


def level_outline(kappa_s: np.ndarray, quality: np.ndarray,
                  level: float = RANK_QUALITY_LEVEL) -> tuple[list[float], list[float]]:
    """x, y (pieces apart by NaN) of the outline of the region Q′ ≥ ``level`` on the grid
    ``pcolormesh(..., shading="nearest")`` draws: each column's lower cell edge across its
    whole width, and the sides where the boundary rises or falls (up to the top where a
    column has no such cell), so a region of a single cell shows as a corner, not a stub."""
    mid = (kappa_s[:-1] + kappa_s[1:]) / 2
    edges = np.concatenate([[2 * kappa_s[0] - mid[0]], mid, [2 * kappa_s[-1] - mid[-1]]]) \
        if len(kappa_s) > 1 else np.array([kappa_s[0] / 2, kappa_s[0] * 2])
    steps = level_steps(quality, level)
    top = quality.shape[0] - 0.5
    xs: list[float] = []
    ys: list[float] = []
    for j, y in enumerate(steps):
        if not np.isnan(y):
            xs += [edges[j], edges[j + 1], np.nan]
            ys += [y, y, np.nan]
    for j, (a, b) in enumerate(zip(steps[:-1], steps[1:])):
        if not (np.isnan(a) and np.isnan(b)):
            a, b = (top if np.isnan(v) else v for v in (a, b))
            if a != b:
                xs += [edges[j + 1], edges[j + 1], np.nan]
                ys += [a, b, np.nan]
    return xs, ys


def rank_error_quality(view: DatasetView, analysis: Analysis) -> object:
    """Q'(kappa_s, kappa_t) per method on a log colour scale: region of interest across (log
    axis), tolerated rank error up; the white outline bounds Q' >= 0.5. The colour bar sits at
    the right, so the shared axis label stays right under the panels."""
    fig, axes = panel_grid(len(view.maps), extra_height=0.9)
    kt = [t for t in KAPPA_T_GRID if t <= view.X.shape[0] - 2]
    rows = np.arange(len(kt))
    norm = LogNorm(RANK_QUALITY_FLOOR, 1.0, clip=True)
    image = None
    for i, (ax, method) in enumerate(zip(axes, view.maps)):
        quality = analysis.rank_quality[method]
        image = ax.pcolormesh(analysis.kappa_s, rows, quality, cmap="viridis", norm=norm,
                              shading="nearest")
        ax.plot(*level_outline(analysis.kappa_s, quality), color="white", linewidth=1.0)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(PLAIN_NUMBER)
        ax.set_yticks(rows, [str(t) for t in kt])
        if i % style.PANELS_PER_ROW == 0:
            ax.set_ylabel("tolerance κ_t (ranks)")
        method_title(ax, method)
    if image is not None:
        fig.supxlabel("region of interest κ_s (neighbour rank, log scale); rows: tolerances "
                      "0, 1, 2, 5, … (not to scale)", fontsize=8)
        bar = fig.colorbar(image, ax=list(axes), location="right", shrink=0.8, aspect=40,
                           extend="min",
                           label="Q′(κ_s, κ_t): share of region pairs within tolerance\n"
                                 f"(log scale; white outline: Q′ ≥ {RANK_QUALITY_LEVEL} inside)")
        bar.ax.axhline(RANK_QUALITY_LEVEL, color="white", lw=1.0)
        bar.set_ticks([0.01, 0.03, 0.1, 0.3, 1.0])
        bar.ax.yaxis.set_major_formatter(PLAIN_NUMBER)
        bar.ax.minorticks_off()
    return fig


def local_quality(view: DatasetView, analysis: Analysis) -> object:
    """Each map coloured by its point-wise rank-error quality: where the map can be trusted.
    One colour scale for every dataset; outliers (where the data has them) ringed."""
    fig, axes = panel_grid(len(view.maps))
    image = None
    norm = PowerNorm(POINTWISE_GAMMA, 0.0, POINTWISE_VMAX)
    outliers = view.arrays.get("outlier_idx")
    for ax, (method, Y) in zip(axes, view.maps.items()):
        q = analysis.pointwise[method]
        order = np.argsort(-q, kind="stable")  # worst points drawn last, on top
        image = ax.scatter(*Y[order].T, c=q[order], cmap="viridis", norm=norm,
                           s=LOCAL_POINT_SIZE, linewidths=0)
        if outliers is not None:
            ax.scatter(*Y[outliers].T, s=60, facecolors="none", edgecolors="tab:red",
                       linewidths=1.0, label="outlier")
        map_axes(ax)
        method_title(ax, method, f"mean Q′ᵢ = {q.mean():.3f}")
    if image is not None:
        fig.colorbar(image, ax=list(axes), location="bottom", shrink=0.5, aspect=40,
                     label=f"point-wise Q′ᵢ (κ_s = {POINTWISE_KAPPA_S}, "
                           f"κ_t = {POINTWISE_KAPPA_T}; square-root scale, same for all "
                           "datasets)")
    if outliers is not None and len(axes):
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper right")
    return fig


def draw_all(view: DatasetView) -> tuple[dict[str, bytes], dict]:
    """Every figure of the dataset as PNG bytes (by figure key) and the caption facts."""
    analysis = analyse(view)
    drawn = {
        "gallery": gallery(view),
        "distance_distribution": distance_distribution(view, analysis),
        "recall_bias": recall_bias(view, analysis),
        "shepard": shepard_density(view, analysis),
        "score_scatter": score_scatter(view),
        "summary_heatmap": summary_heatmap(view),
        "rnx": rnx_curves(view, analysis),
        "rank_error_quality": rank_error_quality(view, analysis),
        "local_quality": local_quality(view, analysis),
    }
    if view.heading:
        for fig in drawn.values():
            fig.suptitle(view.heading)
    return {key: style.png_bytes(fig) for key, fig in drawn.items()}, facts(view, analysis)
