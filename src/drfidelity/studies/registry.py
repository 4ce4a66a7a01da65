"""The supplements: the previous release's other frozen configurations, one entry each.

A study is a list of inputs ("configurations": the values of a sweep, the dimensions of the
noise-dims probe, ...), the method jobs on each, and the table pairs its rows go to. Its
``supplement_embed`` stage writes ``data/{study}/`` and ``embeddings/{study}/``; one
``supplement_score`` stage per table pair writes the per-run and aggregated tables under the
previous release's file and column names, so each compares cell for cell with the published
ones. Every study follows ``methods`` and ``datasets``: what they leave out is skipped with a
note, never an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from drfidelity.core.registry import METHODS
from drfidelity.jobs.job import Job
from drfidelity.core.params import Params
from drfidelity.core.storage import fingerprint


@dataclass(frozen=True)
class Config:
    """One input of a study: its folder below ``data/{study}/`` (``""``: the study has one
    input), the id columns of its rows, how to build its arrays, where toorPIA's cache (or
    injected coordinates) for it live as (dataset, tag), and its jobs."""

    key: str
    ids: dict[str, Any]
    build: Callable[[], dict[str, np.ndarray]]
    context: tuple[str, str] | None
    jobs: tuple[Job, ...]


@dataclass(frozen=True)
class Study:
    """A supplement's inputs and jobs. How its maps are scored and tabled lives in
    :mod:`~drfidelity.studies.scores` and :mod:`~drfidelity.studies.tables`
    under the same name, so the embedding stage does not depend on the metric code.

    ``tables`` are the stems of its result pairs (``{stem}_per_run.csv``,
    ``{stem}_aggregated.csv``); a study with two sends each job to one of them with
    ``table_of``. ``notes`` says what ``methods``/``datasets`` leave out of it. ``new_methods``
    are the methods the previous release did not run in this study (their rows carry
    ``new = True``)."""

    name: str
    configs: Callable[[Params], list[Config]]
    tables: tuple[str, ...]
    table_of: Callable[[Job], str] | None = None
    notes: Callable[[Params], list[str]] = lambda params: []
    new_methods: frozenset[str] = field(default_factory=frozenset)

    def jobs_for(self, config: Config, table: str) -> tuple[Job, ...]:
        """The jobs of ``config`` whose rows go to table pair ``table``."""
        if self.table_of is None:
            return config.jobs
        return tuple(job for job in config.jobs if self.table_of(job) == table)


def method_jobs(params: Params, config: str, names=None, **overrides) -> tuple[Job, ...]:
    """Every method of params (or ``names``) x its seeds on input ``config``."""
    return tuple(Job.of(name, seed, {**params.method_params.get(name, {}), **overrides},
                        config=config)
                 for name in (names or params.methods)
                 for seed in METHODS[name].seeds(params.seeds))


# ------------------------------------------------------------------------------- add-plot

def _addplot_configs(params: Params) -> list[Config]:
    from drfidelity.datasets.inputs import addplot_inputs

    settings = params.supplements["addplot"]

    def build() -> dict[str, np.ndarray]:
        return addplot_inputs(n=params.n, d=params.d, data_seed=params.data_seed,
                              snr=params.snr, **settings)

    jobs = tuple(Job.of(name, seed, params.method_params.get(name, {}), extend=True)
                 for name in params.methods for seed in METHODS[name].seeds(params.seeds))
    return [Config("", {}, build, ("outliers", params.tag), jobs)]


# ---------------------------------------------------------------------------- random walk

def _random_walk_configs(params: Params) -> list[Config]:
    from drfidelity.datasets.inputs import generate

    s = params.supplements["random_walk"]
    n = s["n_series"] * s["n_steps"]

    def build() -> dict[str, np.ndarray]:
        return generate("random_walk", n=n, d=s["d"], data_seed=params.data_seed, snr=math.inf,
                        params={"n_series": s["n_series"], "step": s["step"]})

    ids = {"dataset": "random_walk", "snr": math.inf, "lag": s["lag"]}
    return [Config("", ids, build, ("random_walk", f"n{n}_d{s['d']}_s{s['n_series']}"),
                   method_jobs(params, ""))]


# ---------------------------------------------------------------------------------- sweeps

#: per sweep: the dataset it varies, the toorPIA cache folder, the tag prefix, and whether the
#: data are noised at data.snr (else clean)
SWEEPS = {"outlier_factor": ("outliers", "outliers_sweep", "of", False),
          "minority_frac": ("populations", "populations_sweep", "mf", True)}
#: (N, D, data seed) of the previous release's sweeps, whose cache tags name the value only
#: ("of1.5"); at any other size the tag names the size too, so no map of another input is met.
PREVIOUS_SWEEP_INPUT = (1000, 768, 0)


def _sweep_configs(knob: str) -> Callable[[Params], list[Config]]:
    dataset, cache, prefix, noised = SWEEPS[knob]

    def configs(params: Params) -> list[Config]:
        from drfidelity.datasets.inputs import generate

        snr = params.snr if noised else math.inf
        result = []
        for value in params.supplements[f"sweep_{knob}"]["values"]:
            knobs = {**params.dataset_params.get(dataset, {}), knob: value}

            def build(knobs=knobs) -> dict[str, np.ndarray]:
                return generate(dataset, n=params.n, d=params.d, data_seed=params.data_seed,
                                snr=snr, params=knobs)

            key = f"{value:g}"
            size = (params.n, params.d, params.data_seed)
            tag = f"{prefix}{key}" if size == PREVIOUS_SWEEP_INPUT else \
                "n{}_d{}_seed{}_".format(*size) + f"{prefix}{key}"
            result.append(Config(key, {knob: value}, build, (cache, tag),
                                 method_jobs(params, key)))
        return result

    return configs


# ------------------------------------------------------------------------------ noise dims

#: toorPIA's two arms on this probe: its csvform maps (cache mode "fit", one per seed, so
#: scored like a stochastic method) keep the method name; the embedding arm gets this label.
TOORPIA_EMBEDDING_ARM = "toorPIA-embedding"


def _noise_dims_configs(params: Params) -> list[Config]:
    from drfidelity.datasets.inputs import generate

    s = params.supplements["noise_dims"]
    generic = [m for m in params.methods if m != "toorPIA"]
    grid = [(dim, s["data_seed"], True) for dim in s["dims"]]
    grid += [(dim, seed, False) for dim in s["toorpia_extra_dims"]
             for seed in s["toorpia_extra_seeds"]]
    toorpia = "toorPIA" in params.methods
    result = []
    for dim, data_seed, everyone in grid:
        key = f"dim{dim}" + ("" if data_seed == s["data_seed"] else f"_ds{data_seed}")
        jobs = list(method_jobs(params, key, generic)) if everyone else []
        if toorpia:
            base = params.method_params.get("toorPIA", {})
            jobs += [Job.of("toorPIA", seed, {**base, "mode": "fit"}, config=key)
                     for seed in range(params.seeds)]
            if everyone:
                jobs.append(Job.of("toorPIA", 0, {**base, "mode": "embedding"}, config=key,
                                   label=TOORPIA_EMBEDDING_ARM))
        knobs = {"n_principal": s["n_principal"], "cluster_std": s["cluster_std"]}

        def build(dim=dim, data_seed=data_seed, knobs=knobs) -> dict[str, np.ndarray]:
            return generate("noise_dims", n=params.n, d=dim, data_seed=data_seed, snr=math.inf,
                            params=knobs)

        tag = f"n{params.n}_dim{dim}" + ("" if data_seed == 42 else f"_ds{data_seed}")
        result.append(Config(key, {"dim": dim, "n": params.n, "data_seed": data_seed}, build,
                             ("noise_dims", tag), tuple(jobs)))
    return result


# ------------------------------------------------------------------------ hyper-parameters

def _hyperparams_grid(params: Params) -> dict[str, dict]:
    """The grid of the methods that ``methods`` lists."""
    return {name: knobs for name, knobs in params.supplements["hyperparams"]["grid"].items()
            if name in params.methods}


def _hyperparams_configs(params: Params) -> list[Config]:
    """One input per dataset of the study that ``datasets`` lists: that dataset's main input,
    generated again (the same bytes as ``data/{dataset}/``), so the study never depends on a
    main dataset that is not configured."""
    from drfidelity.datasets.inputs import generate

    grid = _hyperparams_grid(params)
    result = []
    for dataset in params.supplements["hyperparams"]["datasets"]:
        if dataset not in params.datasets or not grid:
            continue
        jobs = [Job.of(name, seed, {**params.method_params.get(name, {}), knob: value},
                       config=dataset, label=f"{name}/{knob}={value}")
                for name, knobs in grid.items() for knob, values in knobs.items()
                for value in values for seed in METHODS[name].seeds(params.seeds)]

        def build(dataset=dataset) -> dict[str, np.ndarray]:
            return generate(dataset, n=params.n, d=params.d, data_seed=params.data_seed,
                            snr=params.snr, params=params.dataset_params.get(dataset, {}))

        result.append(Config(dataset, {"dataset": dataset}, build, None, tuple(jobs)))
    return result


def _hyperparams_notes(params: Params) -> list[str]:
    hyper = params.supplements["hyperparams"]
    notes = [f"dataset {d} skipped: not in `datasets`" for d in hyper["datasets"]
             if d not in params.datasets]
    notes += [f"method {m} skipped: not in `methods`" for m in hyper["grid"]
              if m not in params.methods]
    return notes


def _noise_dims_table(job: Job) -> str:
    return "dimsweep_embedding" if job.name == TOORPIA_EMBEDDING_ARM else "dimsweep"


STUDIES: dict[str, Study] = {s.name: s for s in (
    Study("addplot", _addplot_configs, ("addplot",)),
    Study("random_walk", _random_walk_configs, ("random_walk",)),
    Study("sweep_outlier_factor", _sweep_configs("outlier_factor"), ("sweep_outliers",),
          new_methods=frozenset({"DREAMS"})),
    Study("sweep_minority_frac", _sweep_configs("minority_frac"), ("sweep_populations",),
          new_methods=frozenset({"DREAMS"})),
    Study("noise_dims", _noise_dims_configs, ("dimsweep", "dimsweep_embedding"),
          table_of=_noise_dims_table),
    Study("hyperparams", _hyperparams_configs, ("hyperparam_sensitivity",),
          notes=_hyperparams_notes),
)}


def input_meta(arrays: dict[str, np.ndarray]) -> dict:
    """Shape and sha256 of an input's arrays; its fingerprint is that of X (or X_fit)."""
    main = arrays["X"] if "X" in arrays else arrays["X_fit"]
    return {"shape": list(main.shape), "fingerprint": fingerprint(main),
            "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype),
                           "sha256": fingerprint(v)} for k, v in sorted(arrays.items())}}


def join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def map_names(job: Job) -> dict[str, int]:
    """File stem(s) of a job's map(s) inside its input's folder, by index in the result."""
    base = f"{job.name}/seed{job.seed}"
    return {f"{base}_fit": 0, f"{base}_add": 1} if job.extend else {base: -1}


def study(name: str) -> Study:
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; studies: {', '.join(STUDIES)}")
    return STUDIES[name]


def study_of_table(stem: str) -> Study:
    """The study whose rows fill table pair ``stem`` (``sweep_outliers``, ``dimsweep``, ...)."""
    for spec in STUDIES.values():
        if stem in spec.tables:
            return spec
    known = [t for spec in STUDIES.values() for t in spec.tables]
    raise ValueError(f"unknown table pair {stem!r}; table pairs: {', '.join(known)}")

