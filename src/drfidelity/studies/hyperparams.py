"""Hyper-parameter sensitivity: each neighbourhood method's main knob, one at a time, on the
main inputs of ``studies.hyperparams.datasets``.

With ``select_seeds: k`` (k > 0), each studied method also gets a tuned row: the value with
the best median near ρ over seeds 0..k-1, scored over the other seeds, beside the default
scored over the same seeds. Choosing and scoring on one set of runs would report the best of
the grid's noisy medians, which overstates what tuning gains; a deterministic method runs
once, so its row is chosen and scored on that one run, and says so.

Those inputs are generated again (the same bytes as ``data/<dataset>/``), so the study never
depends on a main dataset that ``datasets`` leaves out; the grid's default values are embedded
again for the same reason. It reads no external maps.
"""

from __future__ import annotations

import pandas as pd

from drfidelity.core.params import ParamsError, Params
from drfidelity.core.validation import close_match
from drfidelity.core.job import Job
from drfidelity.method_specs import spec as method_spec
from drfidelity.studies.spec import Config, StudySpec, TablePair

NAME = "hyperparams"
#: the readouts in the previous release's two orders: the columns of its per-run table, and
#: the metric rows of its aggregated table
RUN_METRICS = ("shepard_near__vs_ambient", "full_shepard", "recall_k15")
METRICS = ("full_shepard", "shepard_near__vs_ambient", "recall_k15")
PAIR = TablePair("hyperparam_sensitivity", ("knob", "value", *RUN_METRICS),
                 compare_keys=("dataset", "method", "knob", "value", "seed"),
                 compare_group=("dataset", "method", "knob", "value", "metric"),
                 headline=(("dataset", "knob", "value"), ("full_shepard",)),
                 curve=("value", ("dataset", "method", "knob"),
                        ("full_shepard", "shepard_near__vs_ambient")))
#: the figure's panels
PLOTTED = (("full_shepard", "full ρ"), ("shepard_near__vs_ambient", "near ρ"),
           ("recall_k15", "recall@15"))
#: a knob's name in prose
KNOB_WORDS = {"perplexity": "perplexity", "n_neighbors": "number of neighbours",
              "reg_lambda": "regularisation weight λ", "n_inliers": "number of inliers",
              "knn": "k of the kernel's neighbours"}
#: the score a tuned row chooses its value by, and the one it adds beside it
TUNED_BY, TUNED_ALSO = "shepard_near__vs_ambient", "full_shepard"
TITLE = "Supplement — hyper-parameter sensitivity"


def check(settings: dict, where: str, params: Params) -> None:
    """Known datasets, methods and knobs, each value valid for its method: against the
    registry (``params.names``) where the stage reads it; a map stage (which reads no list of
    names) checks its own method's grid alone, after the study's inputs stage checked them all."""
    names = params.names
    select = settings["select_seeds"]
    if select and select >= params.seeds:
        raise ParamsError(f"{where}.select_seeds: {select} leaves no seed to score the tuned "
                          f"value on (seeds: {params.seeds}); use 1..{params.seeds - 1}, or 0 "
                          "for no tuned rows")
    for name in settings["datasets"] if names else ():
        if name not in names.datasets:
            raise ParamsError(f"{where}.datasets: unknown dataset "
                              f"{name!r}{close_match(name, names.datasets)}")
    for name, knobs in settings["grid"].items():
        grid = f"{where}.grid.{name}"
        if params.only is not None and name != params.only:
            continue
        if names is not None and name not in names.methods:
            raise ParamsError(f"{grid}: unknown method (known: {', '.join(names.methods)})")
        try:
            method_spec(name)
        except ValueError as exc:
            raise ParamsError(f"{grid}: {exc}") from None
        if not isinstance(knobs, dict) or not knobs:
            raise ParamsError(f"{grid} must map knob -> list of values, got {knobs!r}")
        for knob, values in knobs.items():
            if not isinstance(values, list) or not values:
                raise ParamsError(f"{grid}.{knob} must be a non-empty list, got {values!r}")
            for value in values:
                try:
                    method_spec(name).settings({knob: value}, where=grid)
                except ValueError as exc:
                    raise ParamsError(str(exc)) from None


def inputs(params: Params, settings: dict) -> list[Config]:
    """One input per dataset of the study that ``datasets`` lists; a job per method of the
    grid that ``methods`` lists, per knob value and seed."""
    grid = {name: knobs for name, knobs in settings["grid"].items() if name in params.methods}
    run = params.job_methods(grid)
    result = []
    for dataset in settings["datasets"]:
        if dataset not in params.datasets or not grid:
            continue
        jobs = [Job.of(name, seed, {**params.method_params.get(name, {}), knob: value},
                       config=dataset, label=f"{name}/{knob}={value}")
                for name, knobs in grid.items() if name in run for knob, values in knobs.items()
                for value in values for seed in method_spec(name).seeds(params.seeds)]

        def build(data, dataset=dataset) -> dict:
            return data.generate(dataset, n=params.n, d=params.d, data_seed=params.data_seed,
                                 snr=params.snr, params=params.dataset_params.get(dataset, {}))

        result.append(Config(dataset, {"dataset": dataset}, build, None, tuple(jobs)))
    return result


def notes(params: Params, settings: dict) -> list[str]:
    result = [f"dataset {d} skipped: not in `datasets`" for d in settings["datasets"]
              if d not in params.datasets]
    return result + [f"method {m} skipped: not in `methods`" for m in settings["grid"]
                     if m not in params.methods]


def knob_of(job: Job) -> tuple[str, object]:
    """(knob, value) of a job, from its label ``method/knob=value``."""
    knob = job.name.split("/", 1)[1].split("=", 1)[0]
    return knob, job.kwargs[knob]


def readouts(config: Config, arrays: dict, runs, kit) -> list[dict]:
    high_d = kit.Reference(arrays["X"], per_point=False)
    rows = []
    for job, Y in runs:
        knob, value = knob_of(job)
        scores = high_d.score(Y)
        rows.append({"knob": knob, "value": value, **{m: scores[m] for m in RUN_METRICS}})
    return rows


def tabulate(params: Params, per_run, kit) -> dict:
    """The gathered per-dataset rows (``method`` is the method, not the job label) and their
    medians per (dataset, method, knob, value)."""
    rows = per_run.assign(method=per_run["method"].str.split("/").str[0])
    rows = rows[["dataset", "method", "knob", "value", "seed", *RUN_METRICS]]
    # integer knobs stay integers ("5", not "5.0"), whatever the CSV round trip made of them
    values = [int(v) if isinstance(method_spec(m).defaults.get(k), int) and float(v).is_integer()
              else float(v) for m, k, v in zip(rows["method"], rows["knob"], rows["value"])]
    rows = rows.assign(value=pd.Series(values, index=rows.index, dtype=object))
    return {PAIR.per_run: rows,
            PAIR.aggregated: kit.aggregate_grouped(rows, ["dataset", "method", "knob", "value"],
                                                   list(METRICS), params)}


def defaults(params: Params, aggregated) -> dict[tuple[str, str], float]:
    """(method, knob) -> the main benchmark's setting (registry default or params.yaml)."""
    result = {}
    for method, knob in aggregated[["method", "knob"]].drop_duplicates().itertuples(index=False):
        try:
            found = method_spec(method)
        except ValueError:  # a label of no registered method
            continue
        settings = {**found.defaults, **params.method_params.get(method, {})}
        if knob in settings:
            result[(method, knob)] = float(settings[knob])
    return result


def held_out(per_run, select: int, default: dict[tuple[str, str], float]) -> list[dict]:
    """Per (dataset, method, knob) of ``per_run`` (the study's per-run table): the value with
    the best median :data:`TUNED_BY` over seeds below ``select`` (the first of the grid on
    ties), and the medians and ranges of both scores at it and at ``default`` over the other
    seeds (a method with one run: over that run, ``one_run`` set)."""
    rows = []
    for (dataset, method, knob), runs in per_run.groupby(["dataset", "method", "knob"],
                                                         sort=False):
        runs = runs.assign(value=runs["value"].astype(float))
        one_run = runs["seed"].nunique() == 1
        choose = runs if one_run else runs[runs["seed"] < select]
        scored = runs if one_run else runs[runs["seed"] >= select]
        by_value = choose.groupby("value", sort=False)[TUNED_BY].median()
        best = float(by_value.idxmax())
        row = {"dataset": dataset, "method": method, "knob": knob,
               "default": default.get((method, knob)), "best": best, "one_run": one_run,
               "seeds": sorted(set(scored["seed"]))}
        for name, value in (("at_default", row["default"]), ("at_best", best)):
            at = scored[scored["value"] == value]
            row[name] = ({m: (at[m].median(), at[m].min(), at[m].max())
                          for m in (TUNED_BY, TUNED_ALSO)} if len(at) else None)
        rows.append(row)
    return rows


def _tuned_table(rows: list[dict], select: int, kit):
    """The tuned rows as a table: near ρ at default and tuned, full ρ tuned, over the held-out
    seeds (median and their range)."""
    columns = [kit.Column("method", "method", "setting", "plain"),
               kit.Column("knob", "knob", "setting", "plain"),
               kit.Column("default", "default", "setting", "plain"),
               kit.Column("best", f"tuned (best on seeds 0–{select - 1})", "setting", "plain"),
               kit.Column("near_default", "near ρ at default", "held-out seeds", "plain"),
               kit.Column("near_best", "near ρ tuned", "held-out seeds", "plain"),
               kit.Column("full_best", "full ρ tuned", "held-out seeds", "plain"),
               kit.Column("gain", "near ρ gain", "held-out seeds", "plain")]

    def text(score) -> str:
        if score is None:
            return "—"
        median, lo, hi = score
        return kit.fixed(median) + ("" if lo == hi else f" [{kit.fixed(lo)}, {kit.fixed(hi)}]")

    table = kit.RankingTable("tuned", columns, label="dataset")
    for row in rows:
        at_default, at_best = row["at_default"], row["at_best"]
        gain = ("—" if at_default is None else
                f"{at_best[TUNED_BY][0] - at_default[TUNED_BY][0]:+.3f}")
        if row["one_run"]:
            gain += " (one run: chosen and scored on it)"
        table.rows.append((row["dataset"], [kit.Cell(c) for c in (
            row["method"], f"`{row['knob']}`", "—" if row["default"] is None
            else f"{row['default']:g}", f"{row['best']:g}",
            text(at_default and at_default[TUNED_BY]), text(at_best[TUNED_BY]),
            text(at_best[TUNED_ALSO]), gain)]))
    return table


def figures(params: Params, root, drawn, kit) -> None:
    aggregated = kit.table(root, PAIR.aggregated)
    if aggregated is not None:
        drawn.add("hyperparam_sensitivity",
                  kit.draw.hyperparam_curves(aggregated, PLOTTED, defaults(params, aggregated)),
                  kit.main_heading(params, "Main inputs"),
                  lambda facts: kit.draw.hyperparam_caption(facts, PLOTTED))


def section(s, kit) -> list:
    if PAIR.aggregated not in s.tables:
        return kit.not_built(TITLE, STAGE_WORDS, PAIR.aggregated)
    aggregated = s.tables[PAIR.aggregated]
    blocks = [kit.Heading(2, TITLE), kit.Quote(
        "Each neighbourhood method's main knob, swept on the main benchmark's inputs: do the "
        "rankings hinge on the settings chosen?")]
    blocks += s.figure("hyperparam_sensitivity", s.drawn_caption("hyperparam_sensitivity"))
    lines = []
    full = aggregated[aggregated["metric"] == "full_shepard"]
    for (dataset, method, knob), rows in full.groupby(["dataset", "method", "knob"], sort=False):
        lo, hi = rows["median"].min(), rows["median"].max()
        lines.append(f"{method} on {dataset} ({KNOB_WORDS.get(knob, knob.replace('_', ' '))}): "
                     f"full ρ {kit.fixed(lo)}–{kit.fixed(hi)}")
    blocks.append(kit.Para("Range of full ρ over the knob: " + "; ".join(lines) + "."))
    select = SPEC.settings(s.params)["select_seeds"] if s.params else 0
    if select and PAIR.per_run in s.tables:
        blocks += _tuned_blocks(s, select, kit)
    return blocks


def _tuned_blocks(s, select: int, kit) -> list:
    """The tuned rows: chosen on seeds 0..select-1, scored on the rest."""
    rows = held_out(s.tables[PAIR.per_run], select, defaults(s.params, s.tables[PAIR.aggregated]))
    scored = sorted({seed for row in rows if not row["one_run"] for seed in row["seeds"]})
    held = (f"seeds {scored[0]}–{scored[-1]}" if len(scored) > 1 else f"seed {scored[0]}"
            if scored else "no seed")
    gained = [r for r in rows if not r["one_run"] and r["at_default"] is not None
              and r["at_best"][TUNED_BY][0] > r["at_default"][TUNED_BY][0]]
    several = [r for r in rows if not r["one_run"]]
    return [kit.Heading(3, "Tuned rows"), kit.Para(
        f"Each method's knob at its best value for near ρ, chosen on seeds 0–{select - 1} and "
        f"scored on {held}, beside the default scored on the same seeds (median, and in "
        "brackets the range of those runs). Choosing and scoring on the same runs would "
        "report the best of several noisy medians. A deterministic method runs once, so its "
        f"row is chosen and scored on that run. On the held-out seeds the tuned value beats "
        f"the default in near ρ in {len(gained)} of the {len(several)} rows of a stochastic "
        "method."), kit.Table(_tuned_table(rows, select, kit))]


STAGE_WORDS = "the hyper-parameter sensitivity stage"

SPEC = StudySpec(
    name=NAME, schema={"datasets": [str], "grid": dict, "select_seeds": int}, check=check,
    inputs=inputs, defaults={"select_seeds": 0},  # the frozen params leave it out: no tuned rows
    map_keys=(),  # the grid's values are the maps' settings, which the reuse compares per job
    notes=notes, readouts=readouts, tabulate=tabulate, tables=(PAIR,),
    reads=("data", "datasets", "dataset_params"), maps=None, stage_words=STAGE_WORDS,
    report_order=60, report_tables=(PAIR.per_run, PAIR.aggregated), figures=figures,
    section=section,
)
