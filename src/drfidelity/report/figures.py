"""The figures of one dataset, drawn from its data, its maps and the aggregated results.

Ranks, co-ranking matrices, first-mode bands and point-wise qualities all come from the
metric engine (:mod:`drfidelity.metrics`); this module only draws them. Each figure function
takes a :class:`DatasetView` (and the :class:`Analysis` computed once from it) and returns a
matplotlib figure; :func:`draw_all` returns every figure as PNG bytes together with the numbers
the report's captions quote (the "facts").

References: the co-ranking matrix and R_NX(K) follow Lee & Verleysen (2009) and Lee,
Peluffo-Ordonez & Verleysen (2015); the two-parameter rank-error quality and its point-wise
form follow Lueks, Mokbel, Biehl & Hammer (2011).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm, Normalize, PowerNorm
from matplotlib.ticker import FuncFormatter
from scipy.spatial.distance import pdist

from drfidelity.datasets.registry import DATASETS
from drfidelity.metrics import (auc_log_rnx, coranking_matrix, pointwise_quality, r_nx,
                                rank_error_quality_from_coranking)
from drfidelity.metrics.bands import PERCENTILES, first_mode_threshold, percentile_thresholds
from drfidelity.metrics.distances import distance_rows
from drfidelity.report import style

#: neighbourhood of interest and tolerated rank error of the point-wise quality colouring
#: (kappa_s = the k of the reference block's recall@15, tolerance of the same size).
POINTWISE_KAPPA_S = 15
POINTWISE_KAPPA_T = 15
#: neighbour rank whose distance the recall-bias figure histograms (recall@15's k).
RECALL_K = 15
#: tolerances shown as rows of the rank-error quality figure.
KAPPA_T_GRID = (0, 1, 2, 5, 10, 20, 50, 100, 200)
KAPPA_S_POINTS = 24
HEX_GRIDSIZE = 90
HIST_BINS = 60
#: the point-wise quality's colour scale, the same on every dataset so that the maps compare:
#: 0..1 on a square-root scale (typical Q'_i lie at 0.05-0.4, which a linear 0..1 scale
#: leaves all dark).
POINTWISE_VMAX = 1.0
POINTWISE_GAMMA = 0.5
#: bottom of the rank-error quality's log colour scale (smaller values share its colour)
RANK_QUALITY_FLOOR = 0.01
#: the level whose boundary is drawn on every rank-error quality panel
RANK_QUALITY_LEVEL = 0.5
#: tick labels as plain numbers (1, 10, 100; 0.03) on log axes
PLAIN_NUMBER = FuncFormatter(lambda value, _: f"{value:g}")
#: marker size (points^2) of the map galleries and point-wise maps
MAP_POINT_SIZE = 3
LOCAL_POINT_SIZE = 7

#: (metric, axis label) of the score scatter's x axis unless a dataset's spec names its own.
SCATTER_X_DEFAULT = ("shepard_near__vs_ambient", "near-band Shepard ρ (median)")
HEATMAP_METRICS = (("shepard_near__vs_ambient", "near ρ"), ("full_shepard", "full ρ"),
                   ("recall_k15", "recall@15"), ("trust_k15", "trust@15"),
                   ("cont_k15", "cont.@15"))


def heatmap_metrics(dataset: str) -> tuple[tuple[str, str], ...]:
    """The summary heat map's (metric, label) columns for ``dataset``: near and full ρ, the
    dataset's own scored columns (outlier ρ, minority ρ, ...: what it exists for), then the
    biased k-NN reference block."""
    own = tuple((c.metric, c.header) for c in DATASETS[dataset].scored
                if c.metric not in dict(HEATMAP_METRICS))
    return HEATMAP_METRICS[:2] + own + HEATMAP_METRICS[2:]


#: Figure key -> file stem: the previous release's names where it had the figure, new names
#: for the rank-based figures it lacked; a dataset's ``figure_stems`` override some.
FIGURE_STEMS = {
    "gallery": "embeddings",
    "distance_distribution": "distance_distribution",
    "recall_bias": "recall_bias",
    "shepard": "shepard_scatter",
    "score_scatter": "score_scatter",
    "summary_heatmap": "summary_heatmap",
    "rnx": "rnx_curves",
    "rank_error_quality": "rank_error_quality",
    "local_quality": "local_quality",
}


def figure_names(dataset: str) -> dict[str, str]:
    """Figure key -> file stem of ``dataset``'s figures (SNR suffix added by the caller)."""
    return {**FIGURE_STEMS, **DATASETS[dataset].figure_stems}


def scatter_axis(dataset: str) -> tuple[str, str]:
    """(metric, axis label) of the x axis of ``dataset``'s score scatter."""
    return DATASETS[dataset].scatter or SCATTER_X_DEFAULT


def dataset_heading(title: str, snr: str, n: int | str, d: int | str) -> str:
    """What every figure says it shows: the data, its SNR and its size."""
    return f"{title} — SNR = {snr}, N = {n}, D = {d}"


@dataclass
class DatasetView:
    """What one dataset's figures are drawn from.

    ``arrays`` are the generated arrays (X and its ground truth), ``maps`` the representative
    map of each method (its lowest seed), in canonical order, ``seeds`` that seed;
    ``aggregated`` and ``per_run`` are this dataset's rows of the results tables; ``heading``
    (:func:`dataset_heading`) is the line every figure carries on top.
    """

    dataset: str
    title: str
    arrays: dict[str, np.ndarray]
    maps: dict[str, np.ndarray]
    seeds: dict[str, int]
    aggregated: pd.DataFrame
    per_run: pd.DataFrame
    heading: str = ""

    @property
    def X(self) -> np.ndarray:
        return self.arrays["X"]

    def median(self, method: str, metric: str) -> float:
        rows = self.aggregated[(self.aggregated["method"] == method)
                               & (self.aggregated["metric"] == metric)]
        return float(rows["median"].iloc[0]) if len(rows) else float("nan")

    def ci(self, method: str, metric: str) -> tuple[float, float]:
        rows = self.aggregated[(self.aggregated["method"] == method)
                               & (self.aggregated["metric"] == metric)]
        if not len(rows):
            return float("nan"), float("nan")
        return float(rows["ci_lo"].iloc[0]), float(rows["ci_hi"].iloc[0])

    def run_value(self, method: str, metric: str) -> float:
        """The value of the representative (drawn) run of ``method``."""
        rows = self.per_run[(self.per_run["method"] == method)
                            & (self.per_run["seed"] == self.seeds[method])]
        return float(rows[metric].iloc[0]) if len(rows) and metric in rows else float("nan")


@dataclass
class Analysis:
    """Everything computed once per dataset for several figures."""

    d_ambient: np.ndarray
    near_radius: float
    near_fallback: bool
    radii: dict
    d_maps: dict[str, np.ndarray] = field(default_factory=dict)
    rnx: dict[str, np.ndarray] = field(default_factory=dict)
    auc: dict[str, float] = field(default_factory=dict)
    kappa_s: np.ndarray | None = None
    rank_quality: dict[str, np.ndarray] = field(default_factory=dict)
    pointwise: dict[str, np.ndarray] = field(default_factory=dict)
    k: int = RECALL_K
    kth_distance: np.ndarray | None = None

    @property
    def kth_inside(self) -> float:
        """Share of points whose k-th ambient neighbour lies inside the near band."""
        return float(np.mean(self.kth_distance <= self.near_radius))

    @property
    def near_pairs(self) -> int:
        """Pairs inside the near band."""
        return int(np.count_nonzero(self.d_ambient <= self.near_radius))

    @property
    def far_pairs(self) -> int:
        """Pairs outside the near band: those that out-vote it in a full-pair ρ."""
        return int(self.d_ambient.size) - self.near_pairs

    @property
    def near_share(self) -> float:
        return self.near_pairs / self.d_ambient.size

    @property
    def outvote_ratio(self) -> float | None:
        """Far pairs per near pair: the one number the bars, the title and the caption show."""
        return self.far_pairs / self.near_pairs if self.near_pairs else None


def analyse(view: DatasetView) -> Analysis:
    """Distances, bands, co-ranking curves and point-wise qualities of every map (engine calls)."""
    d = pdist(view.X)
    radius, fallback = first_mode_threshold(d)
    analysis = Analysis(d, radius, fallback, percentile_thresholds(d))
    n = view.X.shape[0]
    analysis.k = min(RECALL_K, n - 1)
    analysis.kth_distance = np.empty(n)
    for start in range(0, n, 256):
        rows = np.arange(start, min(start + 256, n))
        block = distance_rows(d, n, rows)  # column i of row i is 0: self is the 0-th neighbour
        analysis.kth_distance[rows] = np.partition(block, analysis.k, axis=1)[:, analysis.k]
    analysis.kappa_s = np.unique(np.geomspace(1, n // 2, KAPPA_S_POINTS).astype(int))
    kappa_t = np.array([t for t in KAPPA_T_GRID if t <= n - 2])
    for method, Y in view.maps.items():
        analysis.d_maps[method] = pdist(Y)
        Q = coranking_matrix(view.X, Y)
        analysis.rnx[method] = r_nx(Q)
        analysis.auc[method] = auc_log_rnx(Q)
        analysis.rank_quality[method] = rank_error_quality_from_coranking(
            Q, analysis.kappa_s, kappa_t)
        analysis.pointwise[method] = pointwise_quality(
            view.X, Y, min(POINTWISE_KAPPA_S, n - 1), min(POINTWISE_KAPPA_T, n - 2))
    return analysis


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
#: gallery kind -> what its colours and markers mean (the caption's key)
GALLERY_KEYS = {
    "labels": "colour = true cluster",
    "local_density": "colour = latent log local density, bright = dense core",
    "cyclic_position": "colour = position along the loop, a cyclic colour map",
    "outlier_stars": "bulk coloured by cluster, faint; outliers as white stars labelled "
                     "o<direction><a|b>, or o<direction>ab where the pair's two members "
                     "coincide in the map — a pair should stay together and away from the bulk",
    "minority_triangles": "majority = dots, minority = black-edged triangles, colour = cluster",
}
#: score-scatter x metric -> what a point far up but left means (the caption's reading)
SCATTER_READINGS = {
    "shepard_near__vs_ambient": (
        "Spearman ρ over the pairs of the first-mode near band",
        "keeps the global layout and scrambles the near structure"),
    "outlier_shepard__vs_ambient": (
        "Spearman ρ over the pairs that touch an outlier",
        "keeps the bulk's layout and misplaces the outliers (how far out, and where)"),
    "minority_shepard__vs_ambient": (
        "Spearman ρ over the pairs that touch the minority population, minority–minority and "
        "minority–majority",
        "keeps the majority's layout and misplaces the minority"),
}


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


def rnx_k_max(n: int) -> int:
    """Largest K the R_NX figure draws: N/2. Beyond it R_NX divides by N − 1 − K, which goes
    to 0, so a handful of rank swaps swing the curve to ±1 (the tail is noise, not structure)."""
    return max(1, n // 2)


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


def facts(view: DatasetView, analysis: Analysis) -> dict:
    """The numbers the captions quote, so that no caption types one."""
    d = analysis.d_ambient
    best_auc = max(analysis.auc, key=analysis.auc.get) if analysis.auc else None
    return {
        "n_pairs": int(d.size),
        "near_radius": analysis.near_radius,
        "near_fallback": analysis.near_fallback,
        "near_pairs": analysis.near_pairs,
        "near_pct": 100.0 * analysis.near_pairs / d.size,
        "outvote_ratio": analysis.outvote_ratio,
        "mean_distance": float(d.mean()),
        "seeds": dict(view.seeds),
        "auc_log_rnx": dict(analysis.auc),
        "best_auc_method": best_auc,
        "pointwise_mean": {m: float(q.mean()) for m, q in analysis.pointwise.items()},
        "pointwise_kappa": [POINTWISE_KAPPA_S, POINTWISE_KAPPA_T],
        "pointwise_vmax": POINTWISE_VMAX,
        "rnx_k_max": rnx_k_max(view.X.shape[0]),
        "heading": view.heading,
        "recall_k": analysis.k,
        "kth_inside_pct": 100.0 * analysis.kth_inside,
    }


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


# ------------------------------------------------------------------------- captions
# One caption per figure family, written from the dataset's facts (facts.json), so every
# number is the drawn one and the text matches what the figure draws.

def _caption_gallery(dataset: str, facts: dict) -> str:
    seed = min(facts["seeds"].values(), default=0)
    return (f"**Map gallery** (each method's seed-{seed} map; "
            f"{GALLERY_KEYS[DATASETS[dataset].gallery]}). Read: are the groups the data has "
            "kept apart, and kept at their relative sizes? Map axes have no units (a.u.).")


def _caption_distance(dataset: str, facts: dict) -> str:
    band = ("the fallback 5th percentile (no clear first mode)" if facts["near_fallback"]
            else "the first mode of the histogram")
    return (f"**Pair-distance distribution.** All {facts['n_pairs']:,} ambient distances; green "
            f"= the near band up to {facts['near_radius']:.2f} ({band}), "
            f"{facts['near_pct']:.1f}% of the pairs; dashed = fixed percentiles. Read: the far "
            f"pairs out-vote the near ones {facts['outvote_ratio']:.1f} : 1 in a full-pair ρ.")


def _caption_scatter(dataset: str, facts: dict) -> str:
    metric, label = scatter_axis(dataset)
    meaning, reading = SCATTER_READINGS[metric]
    return (f"**Scores.** x = {label}, the {meaning}; y = full ρ over all pairs; bars = "
            f"bootstrap CIs of the median over seeds. Read: up and to the right is better; a point far up "
            f"but left {reading}.")


def _caption_shepard(dataset: str, facts: dict) -> str:
    return ("**Shepard density**: map distance against ambient distance over all pairs, as "
            "hexagons coloured by their pair count on one log scale for all panels; dashed red "
            f"= the near-band radius {facts['near_radius']:.2f}. Read: a thin rising ridge left "
            "of the dashed line means near pairs keep their order; a flat or fanned blob there "
            "means the map scrambles them. Titles give the drawn run's full ρ.")


def _caption_heatmap(dataset: str, facts: dict) -> str:
    labels = [label for _, label in heatmap_metrics(dataset)[:-len(HEATMAP_METRICS) + 2]]
    return (f"**Summary** of the medians ({', '.join(labels)}, then the biased k-NN reference "
            "block; cont. = continuity). Read across a row for a method's profile; colours "
            "clip at 0.")


def _caption_rnx(dataset: str, facts: dict) -> str:
    best = facts["best_auc_method"]
    auc = facts["auc_log_rnx"].get(best, float("nan")) if best else float("nan")
    return (f"**R_NX(K)** (Lee & Verleysen 2009) of each drawn map on a log-K axis up to "
            f"K = N/2 = {facts['rnx_k_max']}; legend = AUC on log K over all K (small K "
            f"weighted most). Highest here: {best} ({auc:.3f}). Read: the curve's height at K "
            "tells how much of the K-neighbourhoods survives beyond chance (0 = random map, "
            "1 = perfect). Larger K are not drawn: R_NX divides by N − 1 − K, so near K = N a "
            "few swapped ranks swing it to ±1.")


def _caption_rank_quality(dataset: str, facts: dict) -> str:
    return ("**Rank-error quality Q′(κ_s, κ_t)** (Lueks et al. 2011): the share of pairs within "
            "κ_s neighbours (in the data or the map) whose rank error is at most κ_t; κ_s on a "
            "log axis, the tolerances 0, 1, 2, 5, 10, … one row each; colour on a log scale "
            f"from {RANK_QUALITY_FLOOR:g} to 1; the white outline closes the cells with "
            f"Q′ ≥ {RANK_QUALITY_LEVEL:g}, above it. Read: the lower the outline, the smaller the "
            "rank error that already keeps half the neighbourhoods; an outline that rises at "
            "small κ_s means local order is lost.")


def _caption_local(dataset: str, facts: dict) -> str:
    ks, kt = facts["pointwise_kappa"]
    ringed = " Red rings = the outliers." if DATASETS[dataset].gallery == "outlier_stars" else ""
    return (f"**Where each map can be trusted**: point-wise Q′ᵢ (κ_s = {ks}, κ_t = {kt}), "
            "counted from both ends of every pair, so tears and folds mark all points involved; "
            f"one square-root colour scale from 0 to {facts['pointwise_vmax']:g} for every map "
            f"and every dataset.{ringed} Read: dark points sit among neighbours they do not "
            "have in the data.")


def _caption_recall(dataset: str, facts: dict) -> str:
    return (f"**Why recall@k is biased.** Left: the same k gives very different radii in dense "
            f"and sparse regions (schematic). Right: each point's distance to its "
            f"{facts['recall_k']}-th ambient neighbour against the single near-band radius; "
            f"{facts['kth_inside_pct']:.0f}% of points have it inside the band. Read: recall@k "
            "asks every point for the same count of neighbours, whatever its local density.")


CAPTIONS = {"gallery": _caption_gallery, "distance_distribution": _caption_distance,
            "score_scatter": _caption_scatter, "shepard": _caption_shepard,
            "summary_heatmap": _caption_heatmap, "rnx": _caption_rnx,
            "rank_error_quality": _caption_rank_quality, "local_quality": _caption_local,
            "recall_bias": _caption_recall}


def figure_caption(key: str, dataset: str, facts: dict) -> str:
    """The caption of ``dataset``'s figure ``key`` from its facts (``facts.json``), headed by
    the data it shows (dataset, SNR, size) where the facts carry it."""
    text = CAPTIONS[key](dataset, facts)
    heading = facts.get("heading")
    return f"{text} ({heading}.)" if heading else text


__all__ = ["DatasetView", "Analysis", "analyse", "dataset_heading", "draw_all", "facts",
           "figure_caption", "figure_names", "scatter_axis"]
