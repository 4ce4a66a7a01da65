"""What every map reads of a method, and what no method's entry is: the :class:`Method` class,
the checks and clamps its settings use, and the rule from a method's name to its modules.

No method's entry and no list of names lives here: every DVC stage depends on ``core/``, so an
entry or a list here would make every map stage stale when one method (or dataset, or study) is
added or edited. A method's ``SPEC`` is the module :func:`spec_module` names (loaded by
:func:`drfidelity.method_specs.spec`); the ordered lists of names are
:mod:`drfidelity.registry`'s, which only the stages that list or order names read.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from drfidelity.core.validation import integer, known_keys, one_of, real

#: modules of ``drfidelity.methods`` that are no method's wrapper, so no method's key
RESERVED_KEYS = ("base", "external", "torch_setup")


def method_key(name: str) -> str:
    """A method's module name: its name in lower case, without what is not a letter or digit
    (``t-SNE`` -> ``tsne``); ValueError for a name that gives no key or a reserved one."""
    key = re.sub(r"[^0-9a-z]", "", str(name).lower())
    if not key or key[0].isdigit() or key in RESERVED_KEYS:
        raise ValueError(f"{name!r} is no method name: its module name would be {key!r}")
    return key


def spec_module(name: str) -> str:
    """The module holding method ``name``'s ``SPEC``: ``drfidelity.method_specs.<key>``."""
    return f"drfidelity.method_specs.{method_key(name)}"


def wrapper_module(name: str) -> str:
    """The module holding method ``name``'s ``fit_<key>``/``extend_<key>``:
    ``drfidelity.methods.<key>``."""
    return f"drfidelity.methods.{method_key(name)}"


def clamp_perplexity(perplexity: float, n: int) -> float:
    """min(perplexity, max(5, (N-1)//3)): at most a third of the other points, at least 5."""
    real("perplexity", perplexity, low=0.0, low_open=True)
    return min(perplexity, max(5, (n - 1) // 3))


def clamp_neighbours(n_neighbors: int, n: int) -> int:
    """min(n_neighbors, max(2, N-1)): a k-NN graph needs 2 <= k < N."""
    integer("n_neighbors", n_neighbors, 1)
    return min(n_neighbors, max(2, n - 1))


def at_least(minimum: int) -> Callable[[str, Any], Any]:
    """The check of an integer setting >= ``minimum``."""
    return lambda name, value: integer(name, value, minimum)


def bounded(**bounds) -> Callable[[str, Any], Any]:
    """The check of a real setting within ``bounds`` (those of :func:`~.validation.real`)."""
    return lambda name, value: real(name, value, **bounds)


def choice(*options: str) -> Callable[[str, Any], Any]:
    """The check of a setting that is one of ``options``."""
    return lambda name, value: one_of(name, value, options)


POSITIVE = bounded(low=0.0, low_open=True)
NON_NEGATIVE = bounded(low=0.0)


@dataclass(frozen=True)
class Method:
    """A registered DR method.

    Neighbourhood sizes are clamped so that small inputs stay valid (the values used are
    recorded in the maps' ``status.json``). Its wrapper is the module
    :func:`wrapper_module` names, defining ``fit_<key>`` and, for a method with an
    out-of-sample operation, ``extend_<key>`` (``key``: :func:`method_key`). ``fit`` is called
    as ``fit(X, seed, context, **settings)`` and returns an (N, 2) array; ``extend`` as
    ``extend(X_fit, X_add, seed, context, **settings)`` and returns ``(Y_fit, Y_add)``, the map
    fitted on ``X_fit`` and the rows of ``X_add`` placed on it. A method without one gives
    ``not_operable``, the reason reported instead of a result. Stochastic methods run seeds
    0..R-1, deterministic ones seed 0 only.
    """

    name: str
    stochastic: bool
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
        method_key(self.name)
        if set(self.defaults) != set(self.checks):
            raise ValueError(f"method {self.name!r}: every default needs a check, and only "
                             f"defaults have one ({sorted(set(self.defaults) ^ set(self.checks))})")

    @property
    def key(self) -> str:
        return method_key(self.name)

    @property
    def wrapper(self) -> str:
        """The wrapper's module name (``drfidelity.methods.<key>``)."""
        return wrapper_module(self.name)

    @property
    def fit(self) -> Callable[..., Any]:
        return getattr(importlib.import_module(self.wrapper), f"fit_{self.key}")

    @property
    def extend(self) -> Callable[..., Any] | None:
        """The out-of-sample operation, or None for a method that is ``not_operable``."""
        return (None if self.not_operable
                else getattr(importlib.import_module(self.wrapper), f"extend_{self.key}"))

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


@dataclass(frozen=True)
class Names:
    """The registered names that ``params.yaml`` is checked against, in the tables' order
    (:data:`drfidelity.registry.NAMES`), and each method's spec. A map stage parses params
    without them and checks its own method alone (:func:`drfidelity.core.params.parse_params`).
    """

    datasets: tuple[str, ...]
    methods: Mapping[str, Method]
    studies: tuple[str, ...]
