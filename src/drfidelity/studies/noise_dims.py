"""The curse-of-dimensionality probe: three tight blobs in a few signal dimensions under
D − n_principal pure-noise columns. At which D does a 2-D map stop separating the labels?

toorPIA runs twice, through each endpoint of its service: its CSV-form maps (cache mode
"fit", one per seed, so scored like a stochastic method, also at extra dimensions and data
seeds) keep the method name and go to ``dimsweep``; its embedding endpoint gets its own label
and table pair ``dimsweep_embedding``. Three grids: ``dims`` (every method), ``toorpia_dims``
(toorPIA's two endpoints only: the previous project's v1.4.0 kept D = 768 for toorPIA alone)
and ``toorpia_extra_dims`` x ``toorpia_extra_seeds`` (its CSV-form endpoint only).

The signal is axis-aligned (its first columns), which favours a method that selects or weights
columns; Euclidean-distance methods are rotation-invariant. ``rotated`` (off when absent, as in
the frozen params) adds a twin of each ``dims`` input turned by a Haar-random rotation
(``dim<D>_rot``, rotation seed = ``data_seed``), mapped by every method but toorPIA, whose maps
are imported from its service for the axis-aligned inputs only; its rows are labelled
``<method>-rotated``.
"""

from __future__ import annotations

import math

from drfidelity.core.layout import study_data_dir, study_embeddings_dir
from drfidelity.core.params import ParamsError, Params
from drfidelity.core.job import Job
from drfidelity.studies.spec import Config, StudySpec, TablePair, method_jobs

NAME = "noise_dims"
#: the label of toorPIA's embedding arm
TOORPIA_EMBEDDING_ARM = "toorPIA-embedding"
METRICS = ("shepard_p100__vs_truth", "shepard_p20__vs_truth", "full_shepard",
           "shepard_p5__vs_ambient", "knn_acc_k10", "silhouette_2d", "tight_over_compression",
           "recall_k15")
KNN_K = 10
KNN_METRIC = f"knn_acc_k{KNN_K}"
#: the csvform arm's maps are toorPIA's cache mode "fit", the embedding arm's "embedding"
PAIRS = tuple(TablePair(stem, METRICS, compare_keys=("dim", "data_seed", "method", "seed"),
                        compare_group=("method", "dim", "metric"),
                        release_maps=(f"{NAME}/toorpia/{mode}",), **plots)
              for stem, mode, plots in (
                  ("dimsweep", "fit", {"headline": (("dim",), (KNN_METRIC,)),
                                       "curve": ("dim", ("method",),
                                                 (KNN_METRIC, "full_shepard"))}),
                  ("dimsweep_embedding", "embedding", {})))
GENERIC, EMBEDDING = PAIRS
#: the table's landmark dimensions (both previous releases' lists), shown where the probe
#: has them
LANDMARK_DIMS = (6, 40, 80, 200, 250, 300, 400, 500, 768, 1500, 2000, 6000)
#: the table's two toorPIA rows: the service's two endpoints
TOORPIA_EMBEDDING = "toorPIA (embedding endpoint)"
TOORPIA_CSVFORM = "toorPIA (CSV-form endpoint)"
TITLE = "Supplement — noise dimensions"
#: the rotated inputs' key suffix and their jobs' label suffix
ROTATED_KEY = "_rot"
ROTATED = "-rotated"
#: why toorPIA has no rotated maps (the console's notes and the report say it)
TOORPIA_NOT_ROTATED = ("its maps are imported from its closed service, which mapped the "
                       "axis-aligned inputs only")


def check(settings: dict, where: str, params: Params) -> None:
    for key in ("dims", "toorpia_dims", "toorpia_extra_dims"):
        for q, dim in enumerate(settings[key]):
            if dim < settings["n_principal"]:
                raise ParamsError(f"{where}.{key}[{q}] must be >= n_principal = "
                                  f"{settings['n_principal']}, got {dim}")
    both = sorted(set(settings["dims"]) & set(settings["toorpia_dims"]))
    if both:
        raise ParamsError(f"{where}.toorpia_dims repeats {both} of {where}.dims (where toorPIA "
                          "runs already)")


def inputs(params: Params, settings: dict) -> list[Config]:
    generic = [m for m in params.methods if m != "toorPIA"]
    # (dim, data seed, the generic methods run, toorPIA's embedding endpoint runs)
    probe_seed = settings["data_seed"]
    grid = sorted([(dim, probe_seed, True, True) for dim in settings["dims"]]
                  + [(dim, probe_seed, False, True) for dim in settings["toorpia_dims"]])
    grid += [(dim, extra, False, False) for dim in settings["toorpia_extra_dims"]
             for extra in settings["toorpia_extra_seeds"]]
    toorpia = "toorPIA" in params.methods
    knobs = {"n_principal": settings["n_principal"], "cluster_std": settings["cluster_std"]}
    result = []
    for dim, data_seed, everyone, embedding_arm in grid:
        key = f"dim{dim}" + ("" if data_seed == settings["data_seed"] else f"_ds{data_seed}")
        jobs = list(method_jobs(params, key, generic)) if everyone else []
        if toorpia:
            base = params.method_params.get("toorPIA", {})
            jobs += [Job.of("toorPIA", seed, {**base, "mode": "fit"}, config=key)
                     for seed in range(params.seeds)]
            if embedding_arm:
                jobs.append(Job.of("toorPIA", 0, {**base, "mode": "embedding"}, config=key,
                                   label=TOORPIA_EMBEDDING_ARM))

        def build(data, dim=dim, data_seed=data_seed) -> dict:
            return data.generate(NAME, n=params.n, d=dim, data_seed=data_seed, snr=math.inf,
                                 params=knobs)

        tag = f"n{params.n}_dim{dim}" + ("" if data_seed == 42 else f"_ds{data_seed}")
        result.append(Config(key, {"dim": dim, "n": params.n, "data_seed": data_seed}, build,
                             (NAME, tag), tuple(jobs)))
    if settings["rotated"] and generic:
        result += rotated_inputs(params, settings, knobs, generic)
    return result


def rotated_inputs(params: Params, settings: dict, knobs: dict, generic: list[str]
                   ) -> list[Config]:
    """The rotated twin of each ``dims`` input (after all the axis-aligned ones, so theirs
    keep their order): the same ids, its jobs labelled ``<method>-rotated``."""
    seed = settings["data_seed"]
    result = []
    for dim in settings["dims"]:
        key = f"dim{dim}{ROTATED_KEY}"
        jobs = tuple(Job.of(job.method, job.seed, job.kwargs, config=key,
                            label=job.method + ROTATED)
                     for job in method_jobs(params, key, generic))

        def build(data, dim=dim) -> dict:
            return data.generate(NAME, n=params.n, d=dim, data_seed=seed, snr=math.inf,
                                 params={**knobs, "rotation_seed": seed})

        result.append(Config(key, {"dim": dim, "n": params.n, "data_seed": seed}, build,
                             (NAME, f"n{params.n}_dim{dim}{ROTATED_KEY}"), jobs))
    return result


def notes(params: Params, settings: dict) -> list[str]:
    if not (settings["rotated"] and "toorPIA" in params.methods):
        return []
    return [f"method toorPIA skipped on the rotated inputs: {TOORPIA_NOT_ROTATED}"]


def table_of(job: Job) -> str:
    return EMBEDDING.stem if job.name == TOORPIA_EMBEDDING_ARM else GENERIC.stem


def readouts(config: Config, arrays: dict, runs, kit) -> list[dict]:
    high_d = kit.canonical_reference(arrays)
    knn, silhouette = kit.knn_label_accuracy, kit.silhouette_2d
    return [{**high_d.score(Y), KNN_METRIC: knn(Y, arrays["labels"]),
             "silhouette_2d": silhouette(Y, arrays["labels"])} for _, Y in runs]


def tabulate(params: Params, per_run, kit) -> dict:
    """Two table pairs: the generic methods with toorPIA's csvform arm (seeded like a
    stochastic method), and toorPIA's embedding arm alone; data seeds pooled."""
    per_run = per_run.sort_values(["dim", "data_seed", "method", "seed"], kind="stable")
    per_run = per_run.assign(stochastic=per_run["stochastic"] | (per_run["method"] == "toorPIA"))
    arm = per_run["method"] == TOORPIA_EMBEDDING_ARM
    tables = {}
    for pair, rows in ((GENERIC, per_run[~arm]), (EMBEDDING, per_run[arm])):
        rows = rows.reset_index(drop=True)
        tables[pair.per_run] = rows
        tables[pair.aggregated] = kit.aggregate_grouped(rows, ["method", "dim"], list(METRICS),
                                                        params)
    return tables


def _landmarks(*frames) -> list[int]:
    """The landmark dimensions the tables hold (the table and the maps grid show these)."""
    ran = set().union(*(set(f["dim"].astype(int)) for f in frames if f is not None))
    return sorted(ran & set(LANDMARK_DIMS))


def figures(params: Params, root, drawn, kit) -> None:
    generic = kit.table(root, GENERIC.aggregated)
    embedding = kit.table(root, EMBEDDING.aggregated)
    data_root = study_data_dir(root, NAME)
    # the inputs of the probe's own data seed (dim<D>; dim<D>_ds<s> are extra realisations)
    dims = sorted(int(p.name[3:]) for p in data_root.glob("dim*")
                  if p.name[3:].isdigit() and (p / "X.npy").exists()) if data_root.is_dir() else []
    # the probe's blobs are drawn without noise, padded with noise columns
    heading = kit.dataset_heading(
        f"Noise-dims probe, {params.studies[NAME]['n_principal']} signal dimensions "
        "padded with noise columns", kit.snr_label(math.inf), params.n,
        f"{min(dims)}–{max(dims)}" if dims else "—")
    if generic is not None:
        generic = axis_aligned(generic)  # the rotated rows are in the tables
        knn = kit.knn_label_accuracy
        ambient = {}
        for dim in dims:
            arrays = kit.arrays(data_root / f"dim{dim}", "X", "labels")
            ambient[dim] = knn(arrays["X"], arrays["labels"], KNN_K)
        drawn.add("dimension_curve", kit.draw.dimension_curve(generic, embedding, ambient, KNN_K),
                  heading, ambient={str(d): v for d, v in ambient.items()})
    labels, maps, skipped = {}, {}, {}
    for dim in (d for d in _landmarks(generic, embedding) if d in dims):
        found = kit.lowest_seed_maps(study_embeddings_dir(root, NAME), f"dim{dim}")
        if found is None:
            continue
        labels[dim] = kit.arrays(data_root / f"dim{dim}", "labels")["labels"]
        dim_maps, _, dim_skipped = found
        for label, Y in dim_maps.items():
            maps.setdefault(label, {})[dim] = Y
        for label, reason in dim_skipped.items():
            skipped.setdefault(label, reason)
    if labels:
        skipped = {m: r for m, r in skipped.items() if m not in maps}
        drawn.add("dims_grid", kit.draw.dims_grid(labels, maps, skipped), heading,
                  kit.draw.dims_grid_caption, skipped=skipped, dims=sorted(labels))


def axis_aligned(frame):
    """The rows of the axis-aligned inputs (no ``-rotated`` label)."""
    return frame[~frame["method"].str.endswith(ROTATED)]


def rotated_methods(generic, kit) -> list[str]:
    """The methods with rows on the rotated inputs, in canonical order."""
    labels = set(generic["method"])
    return [m for m in kit.ordered(axis_aligned(generic)["method"]) if m + ROTATED in labels]


def table(generic, embedding, kit):
    """2-D kNN label accuracy at the landmark dimensions: methods in canonical order without
    toorPIA, each followed by its row on the rotated inputs where it has one, then toorPIA's
    two arms (its embedding endpoint, then its CSV-form endpoint)."""
    knn = generic[generic["metric"] == KNN_METRIC]
    frames = [knn] + ([embedding[embedding["metric"] == KNN_METRIC]]
                      if embedding is not None else [])
    dims = _landmarks(*frames)
    columns = [kit.Column(str(d), f"D={d}", "2-D kNN label accuracy (chance = 1/3)", "plain")
               for d in dims]
    rows = {}

    def add(label: str, frame, method: str) -> None:
        rows[label] = [kit.Cell(kit.cell_text(kit.stats(frame, method, KNN_METRIC, dim=d)))
                       for d in dims]

    for method in kit.ordered(axis_aligned(knn)["method"]):
        if method != "toorPIA":
            add(method, knn, method)
            if method + ROTATED in set(knn["method"]):
                add(f"{method} (rotated)", knn, method + ROTATED)
    if embedding is not None:
        for method in dict.fromkeys(frames[1]["method"]):
            add(TOORPIA_EMBEDDING, frames[1], method)
    if "toorPIA" in set(knn["method"]):
        add(TOORPIA_CSVFORM, knn, "toorPIA")
    return kit.filled(NAME, columns, rows)


def section(s, kit) -> list:
    if GENERIC.aggregated not in s.tables:
        return kit.not_built(TITLE, STAGE_WORDS, GENERIC.aggregated)
    generic = s.tables[GENERIC.aggregated]
    ranked = table(generic, s.tables.get(EMBEDDING.aggregated), kit)
    curve = s.fact("dimension_curve")
    blocks = [kit.Heading(2, TITLE), kit.Quote(
        "Three labelled clusters in a few signal dimensions, padded with pure-noise "
        "dimensions up to D: at which D does a 2-D map stop separating the labels? toorPIA "
        "runs twice, once through each of its service's endpoints: the CSV-form endpoint "
        "(seeded, so run like a stochastic method) and the embedding endpoint "
        "(deterministic); the table has a row for each. " + alignment(s.params))]
    ambient = curve.get("ambient", {})
    caption = ("**kNN label accuracy against D** (left: the 2-D maps' leave-one-out kNN "
               "accuracy, log D axis, chance dashed, dotted = the same classifier on the raw "
               "D-dim data; right: skill = (acc − 1/3) ÷ (ambient acc − 1/3)).")
    if ambient:
        top = max(ambient, key=int)
        caption += (f" The ambient baseline is {kit.fixed(ambient[top])} at D = {top}: the "
                    "labels are still there, so a map's loss is the map's.")
    blocks += s.figure("dimension_curve", caption + kit.missing(s, "dimension_curve"))
    blocks += s.figure("dims_grid", s.drawn_caption("dims_grid") + kit.missing(s, "dims_grid"))
    largest = int(generic["dim"].max())
    leader, value = kit.leader(axis_aligned(generic), KNN_METRIC, dim=largest)
    blocks += [kit.Table(ranked), kit.Para(
        f"At the largest D = {largest}, the highest 2-D kNN accuracy is "
        f"{TOORPIA_CSVFORM if leader == 'toorPIA' else leader}'s ({kit.fixed(value)}); "
        "chance is 1/3.")]
    if rotated_methods(generic, kit):
        blocks.append(kit.Para(rotated_words(generic, kit)))
    if stored_draws_words(generic, s.params):
        blocks.append(kit.Para(stored_draws_words(generic, s.params)))
    return blocks


def alignment(params: Params | None) -> str:
    """The frozen probe's axis alignment, in words."""
    count = ("the first" if params is None
             else f"the first {params.studies[NAME]['n_principal']}")
    return (f"The signal sits in {count} columns, axis-aligned (not rotated into the noise "
            "columns): a method that selects or weights columns can single them out, while "
            "every method that sees only Euclidean distances would map a rotated copy the "
            "same way in exact arithmetic.")


def rotated_words(generic, kit) -> str:
    """What the "(rotated)" rows are, and why toorPIA has none."""
    return ("The rows marked (rotated) map the same inputs turned by a Haar-random rotation "
            "of all D columns after the z-scoring (pairwise distances unchanged, the signal "
            "spread over every column), for "
            f"{', '.join(rotated_methods(generic, kit))}. toorPIA has no rotated row: "
            f"{TOORPIA_NOT_ROTATED}.")


def stored_draws_words(generic, params: Params | None) -> str:
    """What toorPIA's CSV-form row stands on where its stored draws are fewer than the seeds
    asked for ("" where they are not): the legacy endpoint cannot be called for more."""
    runs = generic[(generic["method"] == "toorPIA") & (generic["metric"] == KNN_METRIC)]
    if params is None or runs.empty or runs["n_runs"].min() >= params.seeds:
        return ""
    count = int(runs["n_runs"].min())
    pooled = runs[runs["n_runs"] > count]
    words = (f"{TOORPIA_CSVFORM}'s row stands on its {count} stored draws per input, not the "
             f"{params.seeds} seeds the other stochastic methods run: that endpoint's maps are "
             f"imported and cannot be asked for again, so its intervals are over {count} runs")
    if not pooled.empty:
        dims = " and ".join(str(int(d)) for d in pooled["dim"])
        words += (f" ({int(pooled['n_runs'].max())} at D = {dims}, which pool the inputs of "
                  f"{len(params.studies[NAME]['toorpia_extra_seeds'])} data seeds)")
    return words + "."


def paper_tables(s, kit, params: Params) -> dict[str, str]:
    """The kNN-accuracy table for the paper's appendix (none where the study did not run)."""
    if GENERIC.aggregated not in s.tables:
        return {}
    generic = s.tables[GENERIC.aggregated]
    full = table(generic, s.tables.get(EMBEDDING.aggregated), kit)
    medians = kit.RankingTable(full.dataset, full.columns, [
        (label, [kit.Cell(c.text.split(" [")[0], c.mark) for c in cells])
        for label, cells in full.rows], full.label)
    return {f"{NAME}.tex": kit.latex_tabular(
        medians, headers=None,
        caption=("Noise dimensions: leave-one-out 2-D kNN label accuracy "
                 f"(k = {KNN_K}; chance 1/3) at the landmark dimensions, medians over seeds "
                 "where a method ran several (their intervals are in the report and the "
                 "results file); toorPIA's two endpoints as two rows. The signal "
                 f"sits in the first {params.studies[NAME]['n_principal']} columns, "
                 "axis-aligned (not rotated into the noise columns). "
                 + (kit.escape(rotated_words(generic, kit)) + " "
                    if rotated_methods(generic, kit) else "") + "From "
                 r"\texttt{results/dimsweep\_aggregated.csv} and "
                 r"\texttt{results/dimsweep\_embedding\_aggregated.csv}."))}


def glossary(params: Params) -> tuple[str, ...]:
    return ("**kNN accuracy / skill**: leave-one-out k-nearest-neighbour label accuracy in the "
            "map; skill = (accuracy − chance) ÷ (the same classifier's accuracy on the raw data "
            "− chance).",)


STAGE_WORDS = "the noise-dimensions stage"

SPEC = StudySpec(
    name=NAME,
    schema={"dims": [int], "toorpia_dims": (int,), "data_seed": int, "n_principal": int,
            "cluster_std": float, "toorpia_extra_dims": [int], "toorpia_extra_seeds": [int],
            "rotated": bool},
    defaults={"rotated": False},  # the frozen params (v1.4.0 and after) leave it out
    map_keys=("data_seed", "n_principal", "cluster_std"),  # an input's draw, whatever its dim
    ranges={"dims": (1, None, False), "toorpia_dims": (1, None, False),
            "n_principal": (1, None, False), "cluster_std": (0, None, False),
            "toorpia_extra_dims": (1, None, False)},
    check=check, inputs=inputs, notes=notes, readouts=readouts, tabulate=tabulate, tables=PAIRS,
    table_of=table_of, reads=("data.n",), maps=NAME, stage_words=STAGE_WORDS,
    report_order=50, report_tables=(GENERIC.aggregated, EMBEDDING.aggregated),
    figures=figures, section=section, paper_tables=paper_tables,
    paper_figures=("dimension_curve",), glossary=glossary,
)
