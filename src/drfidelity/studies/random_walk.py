"""The time-series probe: noise-free random walks that all start at one point.

In high dimensions successive steps are nearly orthogonal, so the walks form a star of rough
trajectories; the readouts ask whether a map keeps the star (cross-series ρ), each
trajectory's shape (within-series ρ) and its step structure (near in time, saw-tooth score).
"""

from __future__ import annotations

import math

from drfidelity.core.layout import study_data_dir, study_embeddings_dir
from drfidelity.core.params import Params
from drfidelity.studies.spec import Config, StudySpec, TablePair, method_jobs

NAME = "random_walk"
PAIR = TablePair(NAME, ("n", "d"), compare_keys=("method", "seed"),
                 compare_group=("method", "metric"),
                 headline=((), ("full_shepard", "within_series_near_shepard")),
                 release_maps=(f"{NAME}/toorpia/embedding",))
COLUMNS = (
    ("full_shepard", "full · all pairs", "higher"),
    ("cross_series_shepard", "cross-series · star arrangement (global)", "higher"),
    ("within_series_shepard", "within-series · trajectory shape", "higher"),
    ("within_series_near_shepard", "within-series near, {near} · step structure (local)",
     "higher"),
    ("step_structure", "saw-tooth score (1 = the data's roughness)", "unit"),
)
TITLE = "Time series (random walks)"
#: the paper's short headers of COLUMNS (its caption says what each measures)
LATEX_HEADERS = {"full_shepard": r"full $\rho$",
                 "cross_series_shepard": r"cross-series $\rho$",
                 "within_series_shepard": r"within-series $\rho$",
                 "within_series_near_shepard": r"within, $|\Delta t| \le {lag}$",
                 "step_structure": "saw-tooth"}


def inputs(params: Params, settings: dict) -> list[Config]:
    n = settings["n_series"] * settings["n_steps"]

    def build(data) -> dict:
        return data.generate(NAME, n=n, d=settings["d"], data_seed=params.data_seed,
                             snr=math.inf, params={"n_series": settings["n_series"],
                                                   "step": settings["step"]})

    ids = {"dataset": NAME, "snr": math.inf, "lag": settings["lag"]}
    tag = f"n{n}_d{settings['d']}_s{settings['n_series']}"
    return [Config("", ids, build, (NAME, tag), method_jobs(params, ""))]


def readouts(config: Config, arrays: dict, runs, kit) -> list[dict]:
    walks = kit.random_walk_readouts
    n, d = arrays["X"].shape
    return [{"n": n, "d": d, **walks(arrays["X"], Y, arrays["series"], arrays["t"],
                                     lag=config.ids["lag"])}
            for _, Y in runs]


def tabulate(params: Params, per_run, kit) -> dict:
    rows = per_run.drop(columns=["lag"])
    return {PAIR.per_run: rows, PAIR.aggregated: kit.aggregate_runs(rows, params)}


def figures(params: Params, root, drawn, kit) -> None:
    data = kit.arrays(study_data_dir(root, NAME), "X", "series", "t")
    if data is None:
        return
    series, (n, d) = data["series"], data["X"].shape
    count = len(set(series.tolist()))
    heading = kit.dataset_heading(
        f"Random walks, {count} series × {n // count} steps, noise-free",
        kit.snr_label(float("inf")), n, d)
    fig, facts = kit.draw.geometry_explainer(data["X"], series, data["t"])
    drawn.add("geometry_explainer", fig, heading, **facts)
    found = kit.lowest_seed_maps(study_embeddings_dir(root, NAME))
    if found is not None:
        maps, seeds, skipped = found
        drawn.add("trajectory_gallery",
                  kit.draw.trajectory_gallery(series, data["t"], maps, seeds, skipped),
                  heading, kit.draw.trajectory_caption, skipped=skipped)


def lag(params: Params | None) -> int | None:
    """The near-in-time lag in steps, ``None`` when the study is not configured (or the
    report was given no params)."""
    return None if params is None else params.studies.get(NAME, {}).get("lag")


def near_in_time(steps: int | None) -> str:
    """The label of the near-in-time pairs: "|Δt| ≤ 20", or "near in time" (lag unknown)."""
    return f"|Δt| ≤ {steps}" if steps else "near in time"


def table(aggregated, steps: int | None, kit):
    """Readouts, rows by full ρ (descending); best/worst marked per column (the saw-tooth
    score: closest/farthest to 1). ``steps``: the near-in-time limit."""
    present = set(aggregated["metric"])
    columns = [kit.Column(k, h.format(near=near_in_time(steps)),
                          "Spearman ρ of map vs ambient distances" if kind == "higher"
                          else "Roughness", kind)
               for k, h, kind in COLUMNS if k in present]
    methods = sorted(kit.ordered(aggregated["method"]),
                     key=lambda m: -kit.median(aggregated, m, "full_shepard"))
    values = {m: {c.key: kit.median(aggregated, m, c.key) for c in columns} for m in methods}
    texts = {m: {c.key: kit.cell_text(kit.stats(aggregated, m, c.key)) for c in columns}
             for m in methods}
    return kit.marked(NAME, columns, methods, values, texts)


def paper_tables(s, kit, params: Params) -> dict[str, str]:
    """The readouts table for the paper's appendix (none where the study did not run)."""
    if PAIR.aggregated not in s.tables:
        return {}
    interval = kit.escape(kit.interval_words(params.seeds, params.bootstrap.alpha))
    ranked = table(s.tables[PAIR.aggregated], lag(params), kit)
    return {f"{NAME}.tex": kit.latex_tabular(
        ranked, headers=[LATEX_HEADERS[c.key].format(lag=lag(params)) for c in ranked.columns],
        caption=(r"Random walks: Spearman $\rho$ of map against data distances over all "
                 "pairs, over the pairs of two different walks (the star's arrangement), of "
                 "one walk (each path's shape) and of one walk near in time (its step "
                 "structure), and the saw-tooth score (1: as rough as the data). Medians over "
                 f"seeds, in brackets {interval}; rows by full $\\rho$. From "
                 r"\texttt{results/random\_walk\_aggregated.csv}."))}


def section(s, kit) -> list:
    if PAIR.aggregated not in s.tables:
        return kit.not_built(TITLE, STAGE_WORDS, PAIR.aggregated)
    aggregated = s.tables[PAIR.aggregated]
    geometry = s.fact("geometry_explainer")
    blurb = ("Independent random walks that all start at one point: in high dimensions "
             "successive steps are nearly orthogonal, so the walks form a star of rough "
             "trajectories.")
    if geometry:
        blurb += (f" Here {geometry['n_series']} series × {geometry['length']} steps in "
                  f"D = {geometry['d']}.")
    ranked = table(aggregated, lag(s.params), kit)
    local_m, local_v = kit.leader(aggregated, "within_series_near_shepard")
    blocks = [kit.Heading(2, TITLE), kit.Quote(blurb)]
    if geometry:
        blocks += s.figure("geometry_explainer", (
            "**What the walks look like, measured on the data.** Distance from the start "
            f"against t with the √t law (fitted exponent {geometry['radius_exponent']:.2f}); "
            f"angle between successive steps (median {geometry['step_angle_median']:.1f}°) "
            "and between the displacements of two series (median "
            f"{kit.num(geometry['cross_angle_median'], '.1f')}°); squared distance of random "
            "cross-series pairs against the sum of their squared radii (median ratio "
            f"{kit.num(geometry['pythagoras_median'], '.3f')}). Read: near 90° and a ratio "
            "near 1 mean the series are orthogonal rays — a faithful map shows a star."))
    blocks += s.figure("trajectory_gallery", s.drawn_caption("trajectory_gallery")
                       + kit.missing(s, "trajectory_gallery"))
    blocks += [kit.Table(ranked), kit.Para(
        f"Best within-series near ρ (local step structure): {local_m} "
        f"({kit.fixed(local_v)}); rows sorted by full ρ, best {ranked.rows[0][0]}. Read the "
        "columns apart: a map can keep the star (cross-series ρ) and smooth every "
        "trajectory, or the reverse.")]
    return blocks


def glossary(params: Params) -> tuple[str, ...]:
    steps = lag(params)
    window = f"{steps} steps" if steps else "a fixed number of steps"
    return (
        f"**{near_in_time(steps)}**: pairs of one random walk at most {window} apart in time; "
        "**within-series / cross-series ρ**: over pairs of one walk / of two walks.",
        f"**saw-tooth score**: over windows of {window}, the median of path length ÷ "
        "straight-line distance, minus 1, in the map, divided by the same in the data: "
        "1 = as rough as the data, 0 = smoothed, above 1 = rougher.",
    )


STAGE_WORDS = "the random-walk study stage"

SPEC = StudySpec(
    name=NAME,
    schema={"n_series": int, "n_steps": int, "d": int, "step": float, "lag": int},
    ranges={"n_series": (1, None, False), "n_steps": (1, None, False), "d": (1, None, False),
            "step": (0, None, True), "lag": (1, None, False)},
    inputs=inputs, readouts=readouts, tabulate=tabulate, tables=(PAIR,),
    reads=("data.seed",), maps=NAME, stage_words=STAGE_WORDS, report_order=10,
    report_tables=(PAIR.aggregated,), figures=figures, section=section, glossary=glossary,
    paper_tables=paper_tables, paper_figures=("trajectory_gallery",),
)
