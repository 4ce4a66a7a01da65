"""The out-of-sample (add-plot) test: a map fitted on the outliers input without its outliers,
then cluster-anchored anomalies and fresh bulk points placed on it one call at a time.

Detection is an anomaly's distance from the map centroid over the bulk's median radius;
attribution, whether its direction points at its source cluster. Methods without an
out-of-sample operation are listed as "not operable" rows with the reason, as the previous
release does.
"""

from __future__ import annotations

from drfidelity.core.layout import study_data_dir, study_embeddings_dir
from drfidelity.core.params import Params
from drfidelity.core.job import Job
from drfidelity.method_specs import spec as method_spec
from drfidelity.studies.spec import Config, StudySpec, TablePair

NAME = "addplot"
METRICS = ("anomaly_radius_ratio_med", "anomaly_radius_ratio_min", "attribution_accuracy",
           "angle_to_own_med", "pair_angle_med", "add_bulk_radius_ratio")
PAIR = TablePair(NAME, ("supported", "note", *METRICS), compare_keys=("method", "seed"),
                 compare_group=("method", "metric"),
                 headline=((), ("anomaly_radius_ratio_med", "attribution_accuracy")),
                 release_maps=("outliers/toorpia/embedding_basemap",
                               "outliers/toorpia/embedding_addplot"))
#: report headers of the table, and the paper's (the previous release's wording)
COLUMNS = (
    ("anomaly_radius_ratio_med", "anomaly distance ÷ bulk radius (med)"),
    ("anomaly_radius_ratio_min", "min"),
    ("attribution_accuracy", "source-cluster attribution acc."),
    ("angle_to_own_med", "angle to own cluster ° (med)"),
    ("pair_angle_med", "same-pair angle ° (med)"),
    ("add_bulk_radius_ratio", "bulk-control ratio (≈1 ideal)"),
)
LATEX_HEADERS = [
    r"anom.\ dist $\div$ bulk radius (med)", "min", "attribution acc.",
    r"angle to own cluster $^\circ$ (med)", r"pair angle $^\circ$ (med)",
    r"control ratio ($\approx$1 ideal)",
]
TITLE = "Supplement — out-of-sample add-plot"


def inputs(params: Params, settings: dict) -> list[Config]:
    def build(data) -> dict:
        return data.addplot_inputs(n=params.n, d=params.d, data_seed=params.data_seed,
                                   snr=params.snr, **settings)

    jobs = tuple(Job.of(name, seed, params.method_params.get(name, {}), extend=True)
                 for name in params.job_methods()
                 for seed in method_spec(name).seeds(params.seeds))
    return [Config("", {}, build, ("outliers", params.tag), jobs)]


def readouts(config: Config, arrays: dict, runs, kit) -> list[dict]:
    anchored_metrics = kit.anchored_metrics
    return [anchored_metrics(Y_fit, Y_add, arrays["X_fit"], arrays["X_add"],
                             arrays["labels_fit"], arrays["add_anchor"],
                             n_anom=len(arrays["add_anchor"]))
            for _, (Y_fit, Y_add) in runs]


def tabulate(params: Params, per_run, kit) -> dict:
    rows = per_run.drop(columns=["stochastic"])
    supported = rows[rows["supported"]]
    return {PAIR.per_run: rows,
            PAIR.aggregated: kit.aggregate_grouped(supported, ["method"], list(METRICS), params)}


def figures(params: Params, root, drawn, kit) -> None:
    data = kit.arrays(study_data_dir(root, NAME), "labels_fit", "add_anchor")
    found = kit.lowest_seed_maps(study_embeddings_dir(root, NAME), "", ("_fit", "_add"))
    if data is None or found is None:
        return
    maps, seeds, skipped = found
    drawn.add("basemap_addplot_gallery",
              kit.draw.addplot_gallery(data["labels_fit"], data["add_anchor"], maps, seeds,
                                       skipped),
              kit.main_heading(params, f"Add-plot on {kit.dataset_title('outliers').lower()}"),
              skipped=skipped)


def table(s, kit):
    """Every method in canonical order; a method without an out-of-sample operation gets one
    cell "not operable: {note}" over all columns. No marks (the columns have no common
    direction)."""
    aggregated, per_run = s.tables[PAIR.aggregated], s.tables.get(PAIR.per_run)
    columns = [kit.Column(k, h, "Out-of-sample add-plot", "plain") for k, h in COLUMNS]
    notes = {}
    for frame in (per_run, aggregated):
        if frame is not None and {"supported", "note"} <= set(frame.columns):
            off = frame["supported"].astype(str).str.lower() == "false"  # blank: not said
            notes.update(zip(frame.loc[off, "method"], frame.loc[off, "note"].fillna("")))
    rows = {}
    for method in kit.ordered(list(aggregated["method"]) + list(notes)):
        if method in notes:
            rows[method] = [kit.Cell(f"not operable: {notes[method]}".rstrip(": "),
                                     span=len(columns))]
        else:
            rows[method] = [kit.Cell(kit.cell_text(kit.stats(aggregated, method, k)))
                            for k, _ in COLUMNS]
    return kit.filled(NAME, columns, rows)


def detected(s, kit) -> dict[str, float]:
    """Methods whose every added anomaly lands outside the bulk (smallest radius ratio > 1),
    with that smallest ratio, in canonical order."""
    aggregated = s.tables[PAIR.aggregated]
    smallest = {m: kit.median(aggregated, m, "anomaly_radius_ratio_min")
                for m in kit.ordered(aggregated["method"])}
    return {m: v for m, v in smallest.items() if v > 1}


def section(s, kit) -> list:
    if PAIR.aggregated not in s.tables:
        return kit.not_built(TITLE, STAGE_WORDS, PAIR.aggregated)
    found = detected(s, kit)
    blocks = [kit.Heading(2, TITLE), kit.Quote(
        "A map is fitted on normal data only; then cluster-anchored anomalies (displaced "
        "along dimensions the normal data never varies in) and fresh normal controls are "
        "added one at a time through the method's out-of-sample operation. Detection: the "
        "anomaly's distance from the map centroid over the bulk's median radius (above 1 = "
        "outside the bulk); attribution: its direction points at its source cluster.")]
    blocks += s.figure("basemap_addplot_gallery", (
        "**Add-plot gallery** (lowest seed; fit bulk faint by cluster, controls = dark dots, "
        "anchored anomalies = triangles coloured by source cluster). Read: triangles should "
        "sit outside the bulk, each on the side of its own cluster; dots inside it."
        + kit.missing(s, "basemap_addplot_gallery")))
    blocks += [kit.Table(table(s, kit)), kit.Para(
        "Methods with every anomaly outside the bulk (min ratio > 1): "
        + (", ".join(f"{m} ({v:.2f}×)" for m, v in found.items()) if found else "none")
        + ". Not operable: methods that expose no out-of-sample operation.")]
    return blocks


def caption(confidence: float) -> str:
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


def paper_tables(s, kit, params: Params) -> dict[str, str]:
    if PAIR.aggregated not in s.tables:
        return {}
    return {f"{NAME}.tex": kit.latex_tabular(
        table(s, kit), caption=caption(100 * (1 - params.bootstrap.alpha)),
        headers=LATEX_HEADERS)}


def macros(s, kit) -> list[str]:
    """``\\AddplotDetected``: the methods that detect every anomaly ("---": not built)."""
    if PAIR.aggregated not in s.tables:
        return [kit.macro("AddplotDetected", "---")]
    found = detected(s, kit)
    text = ", ".join(f"{kit.escape(m)} (${v:.2f}\\times$)" for m, v in found.items())
    return [kit.macro("AddplotDetected", text or "none")]


def glossary(params: Params) -> tuple[str, ...]:
    return ("**anomaly distance ÷ bulk radius**: an added anomaly's distance from the map's "
            "centre over the median radius of the fitted bulk (above 1 = outside); "
            "**attribution**: its direction points at its source cluster; **bulk-control "
            "ratio**: how far fresh normal points land, relative to the map's spread, over the "
            "same in the data (1 = ideal).",)


STAGE_WORDS = "the add-plot study stage"

SPEC = StudySpec(
    name=NAME,
    schema={"n_add_bulk": int, "deviation": float, "pair_offset": float, "extra_dims": int},
    ranges={"deviation": (0, None, True), "pair_offset": (0, None, False),
            "extra_dims": (1, None, False)},
    inputs=inputs, readouts=readouts, tabulate=tabulate, tables=(PAIR,),
    reads=("data",), maps="outliers", not_operable_rows=True,
    stage_words=STAGE_WORDS, report_order=30,
    report_tables=(PAIR.aggregated, PAIR.per_run),
    figures=figures, section=section, paper_tables=paper_tables, macros=macros,
    glossary=glossary,
    paper_figures=("basemap_addplot_gallery",),
)
