"""What the pipeline and the report need to know about each method and dataset, without
their code.

A :class:`Method` entry holds a method's name, whether it is stochastic, its benchmark settings
(the defaults ``params.yaml`` may override) with a check for each, and where its wrapper lives.
The wrapper module (and its library) is imported only when :attr:`Method.fit` or
:attr:`Method.extend` is first used, so validating ``params.yaml``, listing the methods or
ordering a table never loads a wrapper: an edit in one wrapper then changes only the DVC
stages that run methods (their ``deps`` name ``src/drfidelity/methods``). Likewise a dataset is
known here by its name alone (:data:`DATASET_NAMES`); its module, generator and spec load from
:data:`drfidelity.datasets.registry.DATASETS` where a stage uses them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from drfidelity.core.validation import integer, known_keys, one_of, real

#: Benchmark datasets in the ``--dataset all`` order, then the two probes; each is the module
#: ``drfidelity.datasets.<name>`` defining its ``SPEC``.
DATASET_NAMES = ("density", "transition", "clusters", "outliers", "populations", "random_walk",
                 "noise_dims")
#: The supplement studies, in the order of their stages and tables; each is the module
#: ``drfidelity.studies.<name>`` defining its ``SPEC`` (loaded by :mod:`drfidelity.studies`).
STUDY_NAMES = ("addplot", "random_walk", "sweep_outlier_factor", "sweep_minority_frac",
               "noise_dims", "hyperparams")


def clamp_perplexity(perplexity: float, n: int) -> float:
    """min(perplexity, max(5, (N-1)//3)): at most a third of the other points, at least 5."""
    real("perplexity", perplexity, low=0.0, low_open=True)
    return min(perplexity, max(5, (n - 1) // 3))


def clamp_neighbours(n_neighbors: int, n: int) -> int:
    """min(n_neighbors, max(2, N-1)): a k-NN graph needs 2 <= k < N."""
    integer("n_neighbors", n_neighbors, 1)
    return min(n_neighbors, max(2, n - 1))


@dataclass(frozen=True)
class Method:
    """A registered DR method.

    Neighbourhood sizes are clamped so that small inputs stay valid (the values used are
    recorded in the maps' ``status.json``). ``wrapper`` is the module under ``drfidelity.methods`` that defines ``fit_<suffix>`` and, for
    a method with an out-of-sample operation, ``extend_<suffix>``. ``fit`` is called as
    ``fit(X, seed, context, **settings)`` and returns an (N, 2) array; ``extend`` as
    ``extend(X_fit, X_add, seed, context, **settings)`` and returns ``(Y_fit, Y_add)``, the map
    fitted on ``X_fit`` and the rows of ``X_add`` placed on it. A method without one gives
    ``not_operable``, the reason reported instead of a result. Stochastic methods run seeds
    0..R-1, deterministic ones seed 0 only.
    """

    name: str
    stochastic: bool
    wrapper: str
    suffix: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    #: per hyper-parameter, ``check(name, value)`` raising ValueError (run before any job)
    checks: Mapping[str, Callable[[str, Any], Any]] = field(default_factory=dict)
    #: per hyper-parameter, ``clamp(value, n)``: the value the wrapper uses on n points
    clamps: Mapping[str, Callable[[Any, int], Any]] = field(default_factory=dict)
    not_operable: str = ""
    #: its maps come from files of the checkout (a cache, an API key), so its jobs never run
    #: on another machine (a Dask cluster)
    local_only: bool = False
    #: wall seconds of one map at N = 1000, D = 768 in a fresh process, imports included
    #: (benchmarks/bench_methods.py, rounded up): the order jobs start in (longest first) and the
    #: prior of the progress lines' ETA, never a result
    seconds: float = 2.0

    def __post_init__(self):
        if set(self.defaults) != set(self.checks):
            raise ValueError(f"method {self.name!r}: every default needs a check, and only "
                             f"defaults have one ({sorted(set(self.defaults) ^ set(self.checks))})")

    @property
    def fit(self) -> Callable[..., Any]:
        return getattr(self._module(), f"fit_{self.suffix}")

    @property
    def extend(self) -> Callable[..., Any] | None:
        """The out-of-sample operation, or None for a method that is ``not_operable``."""
        return None if self.not_operable else getattr(self._module(), f"extend_{self.suffix}")

    def _module(self):
        return importlib.import_module(f"drfidelity.methods.{self.wrapper}")

    def settings(self, params: Mapping[str, Any], where: str | None = None) -> dict[str, Any]:
        """The defaults overridden by ``params``, every value checked.

        ValueError for a name that is not a hyper-parameter (with the closest one) or a bad
        value, prefixed with ``where`` (default: the method's name).
        """
        where = where or self.name
        known_keys(where, params, self.defaults)
        merged = {**self.defaults, **params}
        for name, value in merged.items():
            try:
                self.checks[name](name, value)
            except ValueError as exc:
                raise ValueError(f"{where}.{exc}") from None
        return merged

    def used(self, settings: Mapping[str, Any], n: int) -> dict[str, Any]:
        """``settings`` as the wrappers apply them to n points (clamped values replaced)."""
        return {name: self.clamps[name](value, n) if name in self.clamps else value
                for name, value in settings.items()}

    def seeds(self, n_seeds: int) -> list[int]:
        return list(range(n_seeds)) if self.stochastic else [0]


def _int(minimum: int):
    return lambda name, value: integer(name, value, minimum)


def _real(**bounds):
    return lambda name, value: real(name, value, **bounds)


def _choice(*options: str):
    return lambda name, value: one_of(name, value, options)


POSITIVE = _real(low=0.0, low_open=True)
NON_NEGATIVE = _real(low=0.0)
#: toorPIA's cache modes: ``embedding`` (refillable through the API), ``fit`` (legacy maps)
TOORPIA_MODES = ("embedding", "fit")

#: The benchmark's methods in canonical (table-tie) order.
METHODS: dict[str, Method] = {m.name: m for m in (
    Method("PCA", stochastic=False, wrapper="linear", suffix="pca"),
    Method("Isomap", stochastic=False, wrapper="isomap", suffix="isomap",
           defaults={"n_neighbors": 15}, checks={"n_neighbors": _int(1)},
           clamps={"n_neighbors": clamp_neighbours}, seconds=3),
    Method("PyMDE", stochastic=True, wrapper="mde", suffix="pymde",
           defaults={"max_iter": 300, "device": "cpu"},
           checks={"max_iter": _int(1), "device": _choice("cpu", "cuda")},
           not_operable="pymde optimizes fit coordinates; no transform", seconds=28),
    Method("PCC", stochastic=True, wrapper="pcc_method", suffix="pcc",
           defaults={"num_epochs": 500}, checks={"num_epochs": _int(1)},
           not_operable="pccdr optimizes fit coordinates; no transform", seconds=20),
    Method("t-SNE", stochastic=True, wrapper="tsne", suffix="tsne",
           defaults={"perplexity": 30}, checks={"perplexity": POSITIVE},
           clamps={"perplexity": clamp_perplexity},
           not_operable="sklearn TSNE has no out-of-sample transform", seconds=6),
    Method("UMAP", stochastic=True, wrapper="umap_", suffix="umap",
           defaults={"n_neighbors": 15, "min_dist": 0.1},
           checks={"n_neighbors": _int(2), "min_dist": NON_NEGATIVE},
           clamps={"n_neighbors": clamp_neighbours}, seconds=6),
    Method("DREAMS", stochastic=False, wrapper="dreams", suffix="dreams",
           defaults={"reg_lambda": 0.15, "perplexity": 30},
           checks={"reg_lambda": _real(low=0.0, high=1.0), "perplexity": POSITIVE},
           clamps={"perplexity": clamp_perplexity}, seconds=5),
    # per-call deadline, sessions, pause step, the whole wait for one dataset's map
    Method("toorPIA", stochastic=False, wrapper="toorpia", suffix="toorpia",
           defaults={"mode": "embedding", "deadline_s": 120.0, "max_attempts": 4,
                     "backoff_s": 3.0, "wait_budget_s": 300.0},
           checks={"mode": _choice(*TOORPIA_MODES), "deadline_s": POSITIVE,
                   "max_attempts": _int(1), "backoff_s": NON_NEGATIVE,
                   "wait_budget_s": POSITIVE}, local_only=True),
)}


def get_method(name: str) -> Method:
    """The registered method called ``name``; a clear error lists the known names."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}") from None
