"""The report's supplement sections: time series, stability, add-plot, sweeps, noise dimensions,
hyper-parameter sensitivity and bridge gaps.

Each section is built from its result table (``results/<name>.csv``) and the numbers the
supplement figures quote (``figures/supplements/facts.json``). A supplement whose table is
absent renders as a one-line "not built" note, so the report runs before its stage exists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from drfidelity.core.registry import METHODS
from drfidelity.report.document import Block, Figure, Heading, Para, Quote, Table
from drfidelity.report.latex import escape, macro
from drfidelity.report.scale import CAPTION as SCALE_CAPTION
from drfidelity.report.scale import scale_macros, scale_section
from drfidelity.report.tables import (Cell, Column, RankingTable, column_marks, fixed,
                                      format_value)

#: result tables the report reads (``results/<name>.csv``), each optional.
TABLES = ("random_walk_aggregated", "stability", "addplot_aggregated", "addplot_per_run",
          "sweep_outliers_aggregated", "sweep_populations_aggregated", "dimsweep_aggregated",
          "dimsweep_embedding_aggregated", "hyperparam_sensitivity_aggregated", "bridge_gaps")
#: where a missing table comes from (the stage that writes it, as ``dvc repro`` names it).
PRODUCERS = {
    "random_walk_aggregated": "the random-walk supplement stage",
    "stability": "the aggregate stage",
    "addplot_aggregated": "the add-plot supplement stage",
    "addplot_per_run": "the add-plot supplement stage",
    "sweep_outliers_aggregated": "the outlier-factor sweep stage",
    "sweep_populations_aggregated": "the minority-fraction sweep stage",
    "dimsweep_aggregated": "the noise-dimensions stage",
    "dimsweep_embedding_aggregated": "the noise-dimensions stage",
    "hyperparam_sensitivity_aggregated": "the hyper-parameter sensitivity stage",
    "bridge_gaps": "the aggregate stage",
}

TIMESERIES_COLUMNS = (
    ("full_shepard", "full · all pairs", "higher"),
    ("cross_series_shepard", "cross-series · star arrangement (global)", "higher"),
    ("within_series_shepard", "within-series · trajectory shape", "higher"),
    ("within_series_near_shepard", "within-series near, {near} · step structure (local)",
     "higher"),
    ("step_structure", "saw-tooth score (1 = the data's roughness)", "unit"),
)
STABILITY_COLUMNS = (("n_runs", "runs"), ("position_dispersion", "position dispersion"),
                     ("full_shepard__std", "full ρ std"),
                     ("full_stress_fidelity__std", "full fidelity std"))
ADDPLOT_COLUMNS = (
    ("anomaly_radius_ratio_med", "anomaly distance ÷ bulk radius (med)"),
    ("anomaly_radius_ratio_min", "min"),
    ("attribution_accuracy", "source-cluster attribution acc."),
    ("angle_to_own_med", "angle to own cluster ° (med)"),
    ("pair_angle_med", "same-pair angle ° (med)"),
    ("add_bulk_radius_ratio", "bulk-control ratio (≈1 ideal)"),
)
#: paper headers of the add-plot table (the previous release's wording).
ADDPLOT_LATEX_HEADERS = [
    r"anom.\ dist $\div$ bulk radius (med)", "min", "attribution acc.",
    r"angle to own cluster $^\circ$ (med)", r"pair angle $^\circ$ (med)",
    r"control ratio ($\approx$1 ideal)",
]
#: the noise-dims table's landmark dimensions (both previous releases' lists), shown where
#: the sweep has them.
LANDMARK_DIMS = (6, 40, 80, 200, 250, 300, 400, 500, 768, 1500, 2000, 6000)
#: the noise-dims table's two toorPIA rows: the service's two endpoints
TOORPIA_EMBEDDING = "toorPIA (embedding endpoint)"
TOORPIA_CSVFORM = "toorPIA (CSV-form endpoint)"
KNN_K = 10
KNN_METRIC = f"knn_acc_k{KNN_K}"
#: a bridge is torn when its bottleneck gap exceeds this share of the centroid distance
#: (the value behind the ``torn`` column of ``bridge_gaps.csv``).
TORN_RATIO = 1 / 3
SWEEP_OUTLIER_METRICS = (("full_shepard", "full ρ"), ("outlier_shepard__vs_ambient", "outlier ρ"))
SWEEP_POPULATION_METRICS = (
    ("full_shepard", "full ρ"), ("minority_shepard__vs_ambient", "minority-pair ρ"),
    ("within_majority_shepard__vs_ambient", "within-majority ρ"),
    ("within_minority_shepard__vs_ambient", "within-minority ρ"),
    ("cross_population_shepard__vs_ambient", "cross-population ρ"),
)
#: a knob's name in prose (the parameter names of params.yaml are for code, not sentences)
KNOB_WORDS = {"outlier_factor": "outlier factor", "minority_frac": "minority fraction",
              "perplexity": "perplexity", "n_neighbors": "number of neighbours",
              "reg_lambda": "regularisation weight λ"}
HYPERPARAM_METRICS = (("full_shepard", "full ρ"), ("shepard_near__vs_ambient", "near ρ"),
                      ("recall_k15", "recall@15"))


@dataclass
class Supplements:
    """The supplement tables that exist (by name, see :data:`TABLES`) and the supplement
    figures' facts (``None``: figures not built)."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    facts: dict | None = None
    #: the random walks' near-in-time lag in steps (params.yaml), quoted by the time-series
    #: header (``None``: not known, the header says "near in time")
    lag: int | None = None

    def figure(self, key: str, caption: str) -> list[Block]:
        """The figure ``key`` with its caption, or nothing when it was not drawn."""
        files = (self.facts or {}).get("files", {})
        return [Figure(files[key], caption)] if key in files else []

    def fact(self, key: str) -> dict:
        return (self.facts or {}).get(key, {})

    def drawn_caption(self, key: str) -> str:
        """The caption the figures stage wrote beside figure ``key`` (it knows what it drew)."""
        return self.fact(key).get("caption", "")


def random_walk_lag(params) -> int | None:
    """The random walks' near-in-time lag in steps (``supplements.random_walk.lag`` of
    params.yaml), ``None`` when the study is not configured."""
    return params.supplements.get("random_walk", {}).get("lag")


def near_in_time(lag: int | None) -> str:
    """The label of the near-in-time pairs: "|Δt| ≤ 20", or "near in time" (lag unknown)."""
    return f"|Δt| ≤ {lag}" if lag else "near in time"


def not_built(title: str, *names: str) -> list[Block]:
    """The one-line note of a supplement whose result table is absent."""
    files = ", ".join(f"`results/{n}.csv`" for n in names)
    return [Heading(2, title),
            Quote(f"Not built in this run: {files} absent (written by "
                  f"{PRODUCERS[names[0]]}).")]


def ordered(methods) -> list[str]:
    """Canonical order first, then any other label (e.g. ``toorPIA-embedding``) as met."""
    present = list(dict.fromkeys(methods))
    return [m for m in METHODS if m in present] + [m for m in present
                                                          if m not in METHODS]


def _stats(long: pd.DataFrame, method: str, metric: str, **where):
    rows = long[(long["method"] == method) & (long["metric"] == metric)]
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows.iloc[0] if len(rows) else None


def _num(value: float | None, spec: str) -> str:
    """A fact formatted, or "—" where the figure could not measure it (``None``)."""
    return "—" if value is None else format(value, spec)


def _cell_text(row) -> str:
    return "—" if row is None else format_value(row["median"], row["ci_lo"], row["ci_hi"],
                                                int(row["n_runs"]))


def _median(long: pd.DataFrame, method: str, metric: str, **where) -> float:
    row = _stats(long, method, metric, **where)
    return math.nan if row is None else float(row["median"])


def _filled(name: str, columns: list[Column], rows: dict[str, list[Cell]]) -> RankingTable:
    table = RankingTable(name, columns)
    table.rows = list(rows.items())
    return table


def _marked(name: str, columns: list[Column], methods: list[str], values: dict, texts: dict
            ) -> RankingTable:
    """A table whose cells are marked per column by :func:`column_marks`."""
    rows = {m: [] for m in methods}
    for column in columns:
        marks = column_marks(column, {m: values[m][column.key] for m in methods})
        for m in methods:
            rows[m].append(Cell(texts[m][column.key], marks.get(m)))
    return _filled(name, columns, rows)


# ------------------------------------------------------------------------- tables

def timeseries_table(aggregated: pd.DataFrame, lag: int | None = None) -> RankingTable:
    """Random-walk readouts, rows by full ρ (descending); best/worst marked per column
    (the saw-tooth score: closest/farthest to 1). ``lag``: the near-in-time limit in steps."""
    present = set(aggregated["metric"])
    columns = [Column(k, h.format(near=near_in_time(lag)), "Spearman ρ of map vs ambient distances"
                      if kind == "higher" else "Roughness", kind)
               for k, h, kind in TIMESERIES_COLUMNS if k in present]
    methods = sorted(ordered(aggregated["method"]),
                     key=lambda m: -_median(aggregated, m, "full_shepard"))
    values = {m: {c.key: _median(aggregated, m, c.key) for c in columns} for m in methods}
    texts = {m: {c.key: _cell_text(_stats(aggregated, m, c.key)) for c in columns}
             for m in methods}
    return _marked("random_walk", columns, methods, values, texts)


def stability_tables(stability: pd.DataFrame) -> dict[str, RankingTable]:
    """Per dataset: run-to-run spread of the stochastic methods (4 decimals, by method)."""
    tables = {}
    columns = [Column(k, h, "Run-to-run spread", "plain") for k, h in STABILITY_COLUMNS]
    for dataset in dict.fromkeys(stability["dataset"]):
        rows = stability[stability["dataset"] == dataset].sort_values("method")
        tables[dataset] = _filled(f"stability_{dataset}", columns, {
            r["method"]: [Cell(str(int(r[k])) if k == "n_runs" else fixed(r[k], 4))
                          for k, _ in STABILITY_COLUMNS] for _, r in rows.iterrows()})
    return tables


def addplot_table(aggregated: pd.DataFrame, per_run: pd.DataFrame | None) -> RankingTable:
    """Every method in canonical order; a method without an out-of-sample operation gets one
    cell "not operable: {note}" over all columns. No marks (the columns have no common
    direction)."""
    columns = [Column(k, h, "Out-of-sample add-plot", "plain") for k, h in ADDPLOT_COLUMNS]
    notes = {}
    for frame in (per_run, aggregated):
        if frame is not None and {"supported", "note"} <= set(frame.columns):
            off = frame["supported"].astype(str).str.lower() == "false"  # blank: not said
            notes.update(zip(frame.loc[off, "method"], frame.loc[off, "note"].fillna("")))
    rows = {}
    for method in ordered(list(aggregated["method"]) + list(notes)):
        if method in notes:
            rows[method] = [Cell(f"not operable: {notes[method]}".rstrip(": "),
                                 span=len(columns))]
        else:
            rows[method] = [Cell(_cell_text(_stats(aggregated, method, k))) for k, _ in
                            ADDPLOT_COLUMNS]
    return _filled("addplot", columns, rows)


def noise_dims_table(generic: pd.DataFrame, embedding: pd.DataFrame | None) -> RankingTable:
    """2-D kNN label accuracy at the landmark dimensions: methods in canonical order without
    toorPIA, then toorPIA's two arms (its embedding endpoint, then its CSV-form endpoint)."""
    knn = generic[generic["metric"] == KNN_METRIC]
    frames = [knn] + ([embedding[embedding["metric"] == KNN_METRIC]]
                      if embedding is not None else [])
    dims = sorted(set().union(*(set(f["dim"].astype(int)) for f in frames)) & set(LANDMARK_DIMS))
    columns = [Column(str(d), f"D={d}", "2-D kNN label accuracy (chance = 1/3)", "plain")
               for d in dims]
    rows = {}

    def add(label: str, frame: pd.DataFrame, method: str) -> None:
        rows[label] = [Cell(_cell_text(_stats(frame, method, KNN_METRIC, dim=d))) for d in dims]

    for method in ordered(knn["method"]):
        if method != "toorPIA":
            add(method, knn, method)
    if embedding is not None:
        for method in dict.fromkeys(frames[1]["method"]):
            add(TOORPIA_EMBEDDING, frames[1], method)
    if "toorPIA" in set(knn["method"]):
        add(TOORPIA_CSVFORM, knn, "toorPIA")
    return _filled("noise_dims", columns, rows)


def bridge_table(gaps: pd.DataFrame) -> RankingTable:
    """Median gap ratio over seeds per bridge, and how many bridges are torn (median above
    :data:`TORN_RATIO`), methods in canonical order."""
    bridges = list(dict.fromkeys(gaps["bridge"]))
    medians = gaps.groupby(["method", "bridge"])["gap_ratio"].median()
    columns = ([Column(b, b, "Median gap ÷ centroid distance per bridge", "plain")
                for b in bridges] + [Column("torn", "torn", "Bridges torn", "plain")])
    rows = {}
    for method in ordered(gaps["method"]):
        values = [float(medians[(method, b)]) for b in bridges]
        rows[method] = ([Cell(fixed(v), "crit" if v > TORN_RATIO else None) for v in values]
                        + [Cell(str(sum(v > TORN_RATIO for v in values)))])
    return _filled("bridge_gaps", columns, rows)


# ------------------------------------------------------------------------- facts from tables

def _leader(long: pd.DataFrame, metric: str, **where) -> tuple[str | None, float]:
    values = {m: _median(long, m, metric, **where) for m in ordered(long["method"])}
    finite = {m: v for m, v in values.items() if not math.isnan(v)}
    if not finite:
        return None, math.nan
    best = max(finite, key=finite.get)
    return best, finite[best]


def _missing(supplements: Supplements, key: str) -> str:
    """" Not drawn: toorPIA (reason)." for the methods a figure lacks."""
    skipped = supplements.fact(key).get("skipped", {})
    return (" Not drawn: " + "; ".join(f"{m} ({r})" for m, r in skipped.items()) + "."
            if skipped else "")


def _new_note(supplements: Supplements, key: str) -> str:
    new = supplements.fact(key).get("new_methods", [])
    return (f" Dashed: {', '.join(new)}, which the previous release did not run here."
            if new else "")


# ------------------------------------------------------------------------- sections

def timeseries_section(s: Supplements) -> list[Block]:
    title = "Time series (random walks)"
    if "random_walk_aggregated" not in s.tables:
        return not_built(title, "random_walk_aggregated")
    aggregated = s.tables["random_walk_aggregated"]
    geometry = s.fact("geometry_explainer")
    blurb = ("Independent random walks that all start at one point: in high dimensions "
             "successive steps are nearly orthogonal, so the walks form a star of rough "
             "trajectories.")
    if geometry:
        blurb += (f" Here {geometry['n_series']} series × {geometry['length']} steps in "
                  f"D = {geometry['d']}.")
    table = timeseries_table(aggregated, s.lag)
    local_m, local_v = _leader(aggregated, "within_series_near_shepard")
    blocks: list[Block] = [Heading(2, title), Quote(blurb)]
    if geometry:
        blocks += s.figure("geometry_explainer", (
            "**What the walks look like, measured on the data.** Distance from the start "
            f"against t with the √t law (fitted exponent {geometry['radius_exponent']:.2f}); "
            f"angle between successive steps (median {geometry['step_angle_median']:.1f}°) "
            "and between the displacements of two series (median "
            f"{_num(geometry['cross_angle_median'], '.1f')}°); squared distance of random "
            "cross-series pairs against the sum of their squared radii (median ratio "
            f"{_num(geometry['pythagoras_median'], '.3f')}). Read: near 90° and a ratio near 1 "
            "mean the series are orthogonal rays — a faithful map shows a star."))
    blocks += s.figure("trajectory_gallery", s.drawn_caption("trajectory_gallery")
                       + _missing(s, "trajectory_gallery"))
    blocks += [Table(table), Para(
        f"Best within-series near ρ (local step structure): {local_m} ({fixed(local_v)}); "
        f"rows sorted by full ρ, best {table.rows[0][0]}. Read the columns apart: a map can keep "
        "the star (cross-series ρ) and smooth every trajectory, or the reverse.")]
    return blocks


def stability_section(s: Supplements) -> list[Block]:
    title = "Run-to-run stability"
    if "stability" not in s.tables:
        return not_built(title, "stability")
    stability = s.tables["stability"]
    blocks: list[Block] = [Heading(2, title), Para(
        "For each stochastic method, its seeds' maps are aligned onto the lowest seed's by "
        "Procrustes (centred, unit Frobenius norm, best rotation or reflection); position "
        "dispersion is the mean over points of the spread of their aligned positions. The "
        "std columns are the spread of the scores over seeds.")]
    blocks += s.figure("stability", (
        "**Stability** per dataset: position dispersion (left) and the std of full ρ over "
        "seeds (right), one bar per stochastic method. Read: a tall bar means the seeds draw "
        "different maps, so a single map of that method should not be over-read."))
    for dataset, table in stability_tables(stability).items():
        top = stability[stability["dataset"] == dataset].sort_values(
            "position_dispersion").iloc[-1]
        blocks += [Heading(3, f"Stability — {dataset}"), Table(table),
                   Para(f"Least stable layout: {top['method']} (dispersion "
                        f"{fixed(top['position_dispersion'], 4)}).")]
    return blocks


def addplot_detected(aggregated: pd.DataFrame) -> dict[str, float]:
    """Methods whose every added anomaly lands outside the bulk (smallest radius ratio > 1),
    with that smallest ratio, in canonical order."""
    smallest = {m: _median(aggregated, m, "anomaly_radius_ratio_min")
                for m in ordered(aggregated["method"])}
    return {m: v for m, v in smallest.items() if v > 1}


def supplement_macros(s: Supplements) -> list[str]:
    """``\\newcommand`` lines for the numbers the paper's supplement prose quotes ("---" for
    a supplement not built, so the paper typesets either way)."""
    if "addplot_aggregated" in s.tables:
        detected = addplot_detected(s.tables["addplot_aggregated"])
        text = ", ".join(f"{escape(m)} (${v:.2f}\\times$)" for m, v in detected.items())
        lines = [macro("AddplotDetected", text or "none")]
    else:
        lines = [macro("AddplotDetected", "---")]
    if "bridge_gaps" in s.tables:
        torn = {m: cells[-1].text for m, cells in bridge_table(s.tables["bridge_gaps"]).rows}
        text = ", ".join(f"{escape(m)} {k}" for m, k in torn.items() if k != "0")
        lines.append(macro("BridgesTorn", text or "none"))
    else:
        lines.append(macro("BridgesTorn", "---"))
    return lines + scale_macros(s.tables.get("scale_runs"), s.tables.get("scale_exponents"))


def addplot_section(s: Supplements) -> list[Block]:
    title = "Supplement — out-of-sample add-plot"
    if "addplot_aggregated" not in s.tables:
        return not_built(title, "addplot_aggregated")
    aggregated = s.tables["addplot_aggregated"]
    table = addplot_table(aggregated, s.tables.get("addplot_per_run"))
    detected = addplot_detected(aggregated)
    blocks: list[Block] = [Heading(2, title), Quote(
        "A map is fitted on normal data only; then cluster-anchored anomalies (displaced "
        "along dimensions the normal data never varies in) and fresh normal controls are "
        "added one at a time through the method's out-of-sample operation. Detection: the "
        "anomaly's distance from the map centroid over the bulk's median radius (above 1 = "
        "outside the bulk); attribution: its direction points at its source cluster.")]
    blocks += s.figure("basemap_addplot_gallery", (
        "**Add-plot gallery** (lowest seed; fit bulk faint by cluster, controls = dark dots, "
        "anchored anomalies = triangles coloured by source cluster). Read: triangles should "
        "sit outside the bulk, each on the side of its own cluster; dots inside it."
        + _missing(s, "basemap_addplot_gallery")))
    blocks += [Table(table), Para(
        "Methods with every anomaly outside the bulk (min ratio > 1): "
        + (", ".join(f"{m} ({v:.2f}×)" for m, v in detected.items()) if detected else "none")
        + ". Not operable: methods that expose no out-of-sample operation.")]
    return blocks


def knob_words(knob: str) -> str:
    """A parameter name as words ("minority_frac" -> "minority fraction")."""
    return KNOB_WORDS.get(knob, knob.replace("_", " "))


def _sweep_text(aggregated: pd.DataFrame, knob: str, metric: str, label: str) -> str:
    values = sorted(set(aggregated[knob]))
    parts = []
    for v in (values[0], values[-1]):
        m, x = _leader(aggregated, metric, **{knob: v})
        parts.append(f"{knob_words(knob)} {v:g}: {m} ({fixed(x)})")
    return f"Highest {label}: " + "; ".join(parts) + "."


def sweeps_section(s: Supplements) -> list[Block]:
    blocks: list[Block] = []
    if "sweep_outliers_aggregated" in s.tables:
        a = s.tables["sweep_outliers_aggregated"]
        blocks += [Heading(2, "Supplement — outlier-factor sweep"), Quote(
            "The outliers dataset on clean data with the outliers displaced by a growing "
            "factor of the bulk's radius of gyration.")]
        blocks += s.figure("sweep_outliers_curve", (
            "**Outlier-factor sweep**: full ρ (left) and outlier-pair ρ (right) against the "
            "factor (log axis), bands = bootstrap CIs. Read: outlier ρ should rise with the "
            "factor as the outliers become easier to see." + _new_note(s, "sweep_outliers_curve")))
        blocks.append(Para(_sweep_text(a, "outlier_factor", "outlier_shepard__vs_ambient",
                                       "outlier ρ")))
    else:
        blocks += not_built("Supplement — outlier-factor sweep", "sweep_outliers_aggregated")
    if "sweep_populations_aggregated" in s.tables:
        a = s.tables["sweep_populations_aggregated"]
        blocks += [Heading(2, "Supplement — minority-fraction sweep"), Quote(
            "The populations dataset (SNR as in the main benchmark) with the minority's "
            "share shrinking.")]
        blocks += s.figure("populations_sweep_curve", (
            "**Minority-fraction sweep**: full, minority-pair, within-majority, "
            "within-minority and cross-population ρ against the minority fraction (log axis). "
            "Read: a method that keeps the minority holds its curves flat as the fraction "
            "shrinks." + _new_note(s, "populations_sweep_curve")))
        for frac in s.fact("population_galleries").get("fractions", []):
            blocks += s.figure(f"population_gallery_mf{frac:g}", (
                f"**Populations at minority fraction {frac:g}** (lowest seed; majority = dots, "
                "minority = black-edged triangles, colour = cluster)."
                + _missing(s, f"population_gallery_mf{frac:g}")))
        blocks.append(Para(_sweep_text(a, "minority_frac", "minority_shepard__vs_ambient",
                                       "minority-pair ρ")))
    else:
        blocks += not_built("Supplement — minority-fraction sweep",
                            "sweep_populations_aggregated")
    return blocks


def noise_dims_section(s: Supplements) -> list[Block]:
    title = "Supplement — noise dimensions"
    if "dimsweep_aggregated" not in s.tables:
        return not_built(title, "dimsweep_aggregated")
    generic = s.tables["dimsweep_aggregated"]
    table = noise_dims_table(generic, s.tables.get("dimsweep_embedding_aggregated"))
    curve = s.fact("dimension_curve")
    blocks: list[Block] = [Heading(2, title), Quote(
        "Three labelled clusters in a few signal dimensions, padded with pure-noise "
        "dimensions up to D: at which D does a 2-D map stop separating the labels? toorPIA "
        "runs twice, once through each of its service's endpoints: the CSV-form endpoint "
        "(seeded, so run like a stochastic method) and the embedding endpoint "
        "(deterministic); the table has a row for each.")]
    ambient = curve.get("ambient", {})
    caption = ("**kNN label accuracy against D** (left: the 2-D maps' leave-one-out kNN "
               "accuracy, log D axis, chance dashed, dotted = the same classifier on the raw "
               "D-dim data; right: skill = (acc − 1/3) ÷ (ambient acc − 1/3)).")
    if ambient:
        top = max(ambient, key=int)
        caption += (f" The ambient baseline is {fixed(ambient[top])} at D = {top}: the labels "
                    "are still there, so a map's loss is the map's.")
    blocks += s.figure("dimension_curve", caption + _missing(s, "dimension_curve"))
    blocks += s.figure("dims_grid", s.drawn_caption("dims_grid") + _missing(s, "dims_grid"))
    largest = int(generic["dim"].max())
    leader, value = _leader(generic, KNN_METRIC, dim=largest)
    blocks += [Table(table), Para(
        f"At the largest D = {largest}, the highest 2-D kNN accuracy is "
        f"{TOORPIA_CSVFORM if leader == 'toorPIA' else leader}'s ({fixed(value)}); chance is "
        "1/3.")]
    return blocks


def hyperparam_section(s: Supplements) -> list[Block]:
    title = "Supplement — hyper-parameter sensitivity"
    if "hyperparam_sensitivity_aggregated" not in s.tables:
        return not_built(title, "hyperparam_sensitivity_aggregated")
    a = s.tables["hyperparam_sensitivity_aggregated"]
    blocks: list[Block] = [Heading(2, title), Quote(
        "Each neighbourhood method's main knob, swept on the main benchmark's inputs: do the "
        "rankings hinge on the settings chosen?")]
    blocks += s.figure("hyperparam_sensitivity", s.drawn_caption("hyperparam_sensitivity"))
    lines = []
    full = a[a["metric"] == "full_shepard"]
    for (dataset, method, knob), rows in full.groupby(["dataset", "method", "knob"], sort=False):
        lo, hi = rows["median"].min(), rows["median"].max()
        lines.append(f"{method} on {dataset} ({knob_words(knob)}): "
                     f"full ρ {fixed(lo)}–{fixed(hi)}")
    blocks.append(Para("Range of full ρ over the knob: " + "; ".join(lines) + "."))
    return blocks


def bridges_section(s: Supplements) -> list[Block]:
    title = "Bridge gaps (transition)"
    if "bridge_gaps" not in s.tables:
        return not_built(title, "bridge_gaps")
    table = bridge_table(s.tables["bridge_gaps"])
    torn = {m: int(cells[-1].text) for m, cells in table.rows}
    blocks: list[Block] = [Heading(2, title), Para(
        "For each bridge between neighbouring states on the transition loop: the smallest "
        "radius at which the two states connect through the bridge's points in the map "
        "(single linkage), divided by the distance of the two states' centroids. "
        f"Above {fixed(TORN_RATIO)} (⚠) the bridge is torn: the map draws a gap the data does "
        "not have.")]
    blocks += s.figure("bridge_gaps", (
        "**Bridge gaps**: median gap ratio per bridge and method, dashed = torn threshold. "
        "Read: bars above the line are bridges the map cuts."))
    blocks += [Table(table), Para(
        "Torn bridges: " + ", ".join(f"{m} {k}" for m, k in torn.items()) + ".")]
    return blocks


def supplement_blocks(s: Supplements) -> list[Block]:
    """Every supplement section, in report order."""
    return (timeseries_section(s) + stability_section(s) + addplot_section(s)
            + sweeps_section(s) + noise_dims_section(s) + hyperparam_section(s)
            + bridges_section(s)
            + scale_section(s.tables.get("scale_runs"), s.tables.get("scale_exponents"),
                            s.fact("scale").get("machine"), s.figure("scale", SCALE_CAPTION)))


def addplot_caption(confidence: float) -> str:
    """Rules and provenance of the paper's add-plot table (``confidence`` in %)."""
    return (r"Out-of-sample (add-plot) monitoring test: cluster-anchored anomalies and fresh "
            "normal controls added one at a time to a map fitted on normal data only. "
            r"Detection $=$ anomaly distance from the map centroid over the bulk's median "
            r"radius (large $=$ outside); attribution $=$ the direction from the centroid "
            f"identifies the source cluster. Medians with {confidence:g}\\% bootstrap CIs "
            "over seeds where a method ran several; no marks (the columns have no common "
            r"direction). Generated by \texttt{drfidelity stage report} from "
            r"\texttt{results/addplot\_aggregated.csv}; every method is listed (the previous "
            "release's table dropped toorPIA).")
