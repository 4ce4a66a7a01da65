"""What a study declares: :class:`StudySpec`, its inputs (:class:`Config`) and its table pairs
(:class:`TablePair`), the kits its functions are handed (:class:`ScoringKit`,
:class:`FigureKit`, :class:`ReportKit`), with the helpers every study shares. A study's author
reads this file.

A study module imports this module, :mod:`drfidelity.core` and :mod:`drfidelity.core.job`
only. What it needs from a heavier layer is handed to it by the stage that calls it, so the
code closure of the study's embedding stage stays its own module and never includes the
metrics or the report (an edit to the report then reruns no embedding):

- ``Config.build(data)``: :mod:`drfidelity.datasets.inputs` (the generators);
- ``readouts``/``tabulate(..., kit)``: a :class:`ScoringKit` (the score stage's);
- ``figures(..., kit)``: a :class:`FigureKit` (the study figures stage's);
- ``section``/``paper_tables``/``macros(s, kit)``: a :class:`ReportKit` (the report
  stage's), with ``s`` the report's :class:`~drfidelity.report.studies.StudyResults`
  (tables, figure facts, params).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from drfidelity.core.console import brief
from drfidelity.core.params import Params, ParamsError, check_section
from drfidelity.core.storage import fingerprint
from drfidelity.core.job import Job
from drfidelity.method_specs import spec as method_spec


@dataclass(frozen=True)
class Config:
    """One input of a study: its folder below ``data/studies/{study}/`` (``""``: the study has one
    input), the id columns of its rows, ``build(inputs)`` making its arrays from
    :mod:`drfidelity.datasets.inputs` (handed in by the embedding stage), where toorPIA's
    cache (or injected coordinates) for it live as (dataset, tag), and its jobs."""

    key: str
    ids: dict[str, Any]
    build: Callable[[Any], dict[str, np.ndarray]]
    context: tuple[str, str] | None
    jobs: tuple[Job, ...]


@dataclass(frozen=True)
class TablePair:
    """One pair of result tables, ``results/studies/{stem}_per_run.csv`` and
    ``results/studies/{stem}_aggregated.csv``, with the previous release's names.

    ``run_columns``: the columns the study's tables read besides the ids, method, seed and
    stochastic (a pair with no runs is written with this header). ``compare_keys`` and
    ``compare_group`` identify a run and a median when comparing with the published tables;
    ``tie_sensitive``: its neighbour-rank columns are compared but never held to the exact
    tolerance (clean data with exact ties). ``headline``: (group columns besides method,
    metrics) of the study's DVC metrics; ``curve``: (x column, series columns, metrics) of its
    DVC plot over a knob; ``release_maps``: the folders of the published releases' imported
    maps behind its toorPIA rows (``drfidelity.crosscheck.release_diff``)."""

    stem: str
    run_columns: tuple[str, ...]
    compare_keys: tuple[str, ...]
    compare_group: tuple[str, ...]
    tie_sensitive: bool = False
    headline: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    curve: tuple[str, tuple[str, ...], tuple[str, ...]] | None = None
    release_maps: tuple[str, ...] = ()

    @property
    def per_run(self) -> str:
        """The per-run table's name (``results/studies/<name>.csv``)."""
        return f"{self.stem}_per_run"

    @property
    def aggregated(self) -> str:
        return f"{self.stem}_aggregated"


@dataclass(frozen=True)
class ScoringKit:
    """What ``readouts`` and ``tabulate`` are handed: the metric engine and the aggregation
    (built by :mod:`drfidelity.studies.run.scoring`)."""

    #: :class:`drfidelity.metrics.Reference`: the high-D side, scored against each map
    Reference: type
    #: arrays -> the Reference of the canonical columns, with the input's ground truth
    canonical_reference: Callable[[dict], Any]
    #: :func:`drfidelity.metrics.labels.knn_label_accuracy`
    knn_label_accuracy: Callable[..., float]
    #: :func:`drfidelity.metrics.labels.silhouette_2d`
    silhouette_2d: Callable[..., float]
    #: :func:`drfidelity.metrics.timeseries.random_walk_readouts`
    random_walk_readouts: Callable[..., dict]
    #: :func:`drfidelity.metrics.addplot.anchored_metrics`
    anchored_metrics: Callable[..., dict]
    #: (per_run, keys, metrics, params) -> the median and bootstrap CI of each group
    aggregate_grouped: Callable[..., Any]
    #: (rows, params) -> :func:`drfidelity.aggregation.aggregate_runs` with the params'
    #: bootstrap
    aggregate_runs: Callable[..., Any]


@dataclass(frozen=True)
class FigureKit:
    """What ``figures`` is handed: the painters and the loaders (built by
    :mod:`drfidelity.pipeline.study_figures`)."""

    #: the painters, :mod:`drfidelity.figures.studies`
    draw: Any
    #: (folder, *names) -> the arrays ``<name>.npy`` of a folder, or None when one is missing
    arrays: Callable[..., dict | None]
    #: (root, name) -> a study table, or None when absent or empty
    table: Callable[..., Any]
    #: (maps base, input key, suffixes) -> each method's lowest-seed maps and skip reasons
    lowest_seed_maps: Callable[..., Any]
    #: (*tables) -> the methods flagged ``new`` in them
    new_methods: Callable[..., list[str]]
    #: (params, title, snr) -> a figure heading naming the main input
    main_heading: Callable[..., str]
    #: :func:`drfidelity.figures.settings.dataset_heading`
    dataset_heading: Callable[..., str]
    #: :func:`drfidelity.core.params.snr_label`
    snr_label: Callable[[float], str]
    #: dataset name -> its title
    dataset_title: Callable[[str], str]
    #: :func:`drfidelity.metrics.labels.knn_label_accuracy`
    knn_label_accuracy: Callable[..., float]


@dataclass(frozen=True)
class ReportKit:
    """What ``section``, ``paper_tables`` and ``macros`` are handed: the report's building
    blocks, each of :mod:`drfidelity.report.kit`, which builds it."""

    Block: type
    Figure: type
    Heading: type
    Para: type
    Quote: type
    Table: type
    Cell: type
    Column: type
    RankingTable: type
    escape: Callable[[str], str]
    latex_tabular: Callable[..., str]
    macro: Callable[..., str]
    column_marks: Callable[..., dict]
    fixed: Callable[..., str]
    format_value: Callable[..., str]
    interval_words: Callable[..., str]
    not_built: Callable[..., list]
    ordered: Callable[..., list[str]]
    stats: Callable[..., Any]
    num: Callable[..., str]
    cell_text: Callable[..., str]
    median: Callable[..., float]
    filled: Callable[..., Any]
    marked: Callable[..., Any]
    leader: Callable[..., tuple]
    missing: Callable[..., str]
    new_note: Callable[..., str]


def no_notes(params: Params, settings: dict) -> list[str]:
    return []


@dataclass(frozen=True)
class StudySpec:
    """Everything about one study; the generic stages, the comparison and the
    report read it and never a study's name.

    Wiring: ``schema`` (``studies.<name>`` key -> type; a one-element list types every
    element) and ``ranges`` (key -> (low, high, low excluded); unlisted integers must be
    >= 0) check its params section, ``check(settings, where, params)`` any rule across keys;
    ``defaults`` are the values of schema keys the section may leave out (added after a
    release froze its params, so the frozen files stay as they are and mean what they meant);
    ``reads`` are the shared
    params keys its inputs read besides ``methods``, ``method_params`` and ``seeds`` (at most
    four: ``dvc.yaml``'s padding); ``maps`` the folder of ``external_maps/`` its toorPIA maps
    come from (None: it reads none); ``map_keys`` the keys of its section that decide the bytes
    of a map (None: every key), where the others only choose which maps are made (dims, a
    grid), so a configuration that differs from the checkout in those alone still takes the
    checkout's maps of the jobs both run (``tools/release_pipeline.py``).

    Running: ``inputs(params, settings)`` -> its :class:`Config` list (following ``methods``
    and ``datasets``; ``notes`` says what they leave out); ``readouts(config, arrays, runs,
    kit)`` -> one dict of metric columns per (job, map) run; ``tabulate(params, per_run,
    kit)`` -> result file name -> table; ``table_of(job)`` the stem of the pair a job's row
    goes to (studies of several pairs). ``new_methods`` are methods the previous release did
    not run here (rows flagged ``new``); ``not_operable_rows``: skipped jobs become
    "not operable" rows with the reason.

    Output: ``figures(params, root, drawn, kit)`` draws its study figures;
    ``section(studies, kit)`` -> its report blocks, placed by ``report_order`` among the
    study sections and built from ``report_tables`` (``stage_words`` names the stage in
    a "not built" note); ``paper_tables``, ``macros`` and ``glossary`` add paper tables,
    LaTeX macros and glossary bullets; ``paper_figures`` are its figures the paper shows.
    """

    name: str
    schema: Mapping[str, Any]
    inputs: Callable[[Params, dict], list[Config]]
    readouts: Callable[..., list[dict]]
    tabulate: Callable[..., dict]
    tables: tuple[TablePair, ...]
    reads: tuple[str, ...]
    maps: str | None
    stage_words: str
    report_order: int
    report_tables: tuple[str, ...]
    section: Callable[..., list]
    figures: Callable[..., None] | None = None
    ranges: Mapping[str, tuple[float, float | None, bool]] = field(default_factory=dict)
    check: Callable[[dict, str, Params], None] | None = None
    notes: Callable[[Params, dict], list[str]] = no_notes
    table_of: Callable[[Job], str] | None = None
    new_methods: frozenset[str] = frozenset()
    not_operable_rows: bool = False
    paper_tables: Callable[..., dict[str, str]] | None = None
    paper_figures: tuple[str, ...] = ()
    macros: Callable[..., list[str]] | None = None
    glossary: Callable[[Params], tuple[str, ...]] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    map_keys: tuple[str, ...] | None = None

    def settings(self, params: Params) -> dict:
        """``studies.<name>`` (``defaults`` for the keys it leaves out) checked against
        the schema and ranges, floats as floats; a bad key or value is a ParamsError naming
        it."""
        where = f"studies.{self.name}"
        given = {**self.defaults, **params.studies[self.name]}
        # a switch (a bool key) is checked here: check_section holds every number to a
        # range, and would refuse true as a number
        switches = {k for k, kind in self.schema.items() if kind is bool and k in given}
        for key in sorted(switches):
            if not isinstance(given[key], bool):
                raise ParamsError(f"{where}.{key} must be true or false, got "
                                  f"{brief(given[key])}")
        settings = check_section(
            where, {k: v for k, v in given.items() if k not in switches},
            {k: kind for k, kind in self.schema.items() if k not in switches}, self.ranges)
        settings.update((k, given[k]) for k in switches)
        if self.check is not None:
            self.check(settings, where, params)
        return settings

    def configs(self, params: Params) -> list[Config]:
        return self.inputs(params, self.settings(params))

    def study_notes(self, params: Params) -> list[str]:
        return self.notes(params, self.settings(params))

    def pair(self, stem: str) -> TablePair:
        return next(t for t in self.tables if t.stem == stem)

    def jobs_for(self, config: Config, stem: str) -> tuple[Job, ...]:
        """The jobs of ``config`` whose rows go to table pair ``stem``."""
        if self.table_of is None:
            return config.jobs
        return tuple(job for job in config.jobs if self.table_of(job) == stem)


def method_jobs(params: Params, config: str, names=None, **overrides) -> tuple[Job, ...]:
    """Every method of params (or ``names``) x its seeds on input ``config`` (of them, a map
    stage's own method alone: :meth:`~drfidelity.core.params.Params.job_methods`)."""
    return tuple(Job.of(name, seed, {**params.method_params.get(name, {}), **overrides},
                        config=config)
                 for name in params.job_methods(names or None)
                 for seed in method_spec(name).seeds(params.seeds))


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
