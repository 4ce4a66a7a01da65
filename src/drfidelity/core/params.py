"""``params.yaml``: load it once, check every key and value, and say which key is wrong and why.

This module loads no numeric library when imported (the CLI imports it before
:func:`drfidelity.core.runtime.configure`); the checks it shares with the rest of the package come
from :mod:`drfidelity.core.validation` when params are parsed. Every stage validates the whole file
before it touches anything, so a bad value, or a key that
is not one (``data.snrr``, a stray top-level ``seed``; the closest known key is suggested), stops
the pipeline at its first stage with one clear message and no output changed. The names (of
datasets, methods, studies) and every method hyper-parameter are checked against the registry a
stage hands in (:data:`drfidelity.registry.NAMES`), so a bad one never waits for the other jobs
to run; a map stage hands in none, since it reads no list of names, and checks its own method's
settings itself. A study's own section (``studies.<study>``) is checked here for its name
only; its keys and values against the study's schema (:func:`check_section`) where the study is
loaded, so that no stage depends on a study module it does not run.
"""

from __future__ import annotations

import math
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drfidelity.core.console import brief

if TYPE_CHECKING:
    from drfidelity.core.method import Names


class ParamsError(ValueError):
    """A key in params.yaml is unknown or missing, or its value of the wrong type or range."""


TOP_KEYS = ("data", "datasets", "dataset_params", "methods", "method_params", "seeds", "jobs",
            "bootstrap", "ranking", "studies")
DATA_KEYS = ("n", "d", "seed", "snr")
BOOTSTRAP_KEYS = ("n_boot", "alpha", "seed")


@dataclass(frozen=True)
class Bootstrap:
    n_boot: int
    alpha: float
    seed: int


@dataclass(frozen=True)
class Params:
    n: int
    d: int
    data_seed: int
    snr: float
    datasets: tuple[str, ...]
    dataset_params: dict[str, dict[str, Any]]
    methods: tuple[str, ...]
    method_params: dict[str, dict[str, Any]]
    seeds: int
    jobs: int
    bootstrap: Bootstrap
    studies: dict[str, Any]  # a :class:`StudyParams`
    #: dataset -> the scored columns a release's ranking rule adds to that dataset's (names of
    #: its spec's ``rankable`` columns; checked where the ranking is computed)
    ranking: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: the registry the names were checked against; None in a map stage (see parse_params)
    names: Names | None = field(default=None, compare=False, repr=False)
    #: a map stage's one method: a study builds that method's jobs alone (:meth:`job_methods`)
    only: str | None = None

    def job_methods(self, names=None) -> tuple[str, ...]:
        """The methods whose jobs a study builds: ``names`` (default ``methods``), or of them
        the map stage's own method alone, so that it never loads another method's spec."""
        names = tuple(self.methods if names is None else names)
        return names if self.only is None else tuple(n for n in names if n == self.only)

    @property
    def tag(self) -> str:
        """Cache tag of the main benchmark input, e.g. ``n1000_d768_snr1``."""
        return f"n{self.n}_d{self.d}_snr{snr_label(self.snr)}"


def snr_label(snr: float) -> str:
    return "inf" if math.isinf(snr) else f"{snr:g}"


def load_params(path: str | Path = "params.yaml", names: Names | None = None) -> Params:
    """Read and validate ``path`` (against ``names``: see :func:`parse_params`); raise
    :class:`ParamsError` naming the offending key."""
    import yaml  # imported here: `drfidelity score` (no pyyaml needed) loads this module too

    path = Path(path)
    try:
        with open(path, encoding="utf-8") as handle:  # the marks name the file
            raw = yaml.load(handle, Loader=_unique_keys_loader(yaml))
    except FileNotFoundError:
        raise ParamsError(f"{path} not found (run from the repository root)") from None
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ParamsError(f"{path} must hold a mapping of keys, got {type(raw).__name__}")
    return parse_params(raw, names)


def restore_refused_experiment(path: Path, error: ParamsError) -> str:
    """Undo what ``dvc exp run -S`` wrote into ``path`` when this stage refuses it.

    DVC writes the ``-S`` values into params.yaml before any stage runs and leaves them there
    when the experiment fails. Inside an experiment (``DVC_EXP_BASELINE_REV`` set), when every
    key that differs from the baseline commit's file is named in the refusal, the baseline's
    bytes are written back; a key changed by hand beside them keeps the file as it is. Returns
    what to add to the refusal ('' outside an experiment).
    """
    import yaml

    from drfidelity.core.storage import atomic_write

    rev = os.environ.get("DVC_EXP_BASELINE_REV")
    if not rev:
        return ""
    shown = subprocess.run(["git", "show", f"{rev}:./{path.name}"], cwd=path.parent or None,
                           capture_output=True)
    try:
        changed = _changed_keys(yaml.safe_load(shown.stdout), yaml.safe_load(path.read_bytes()))
    except (yaml.YAMLError, OSError):
        changed = None
    if shown.returncode or not changed:
        return ""
    if not all(key in str(error) for key in changed):
        return (f"; {path} still holds the experiment's values of {', '.join(changed)} "
                f"(`git checkout {path}` restores {rev[:7]}'s)")
    atomic_write(path, shown.stdout)
    return f"; {path} is back as in {rev[:7]} (the experiment's {', '.join(changed)} undone)"


def _changed_keys(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The dotted keys whose values differ between two parsed YAML documents."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [] if old == new else [prefix or "(the whole file)"]
    return [key for name in dict.fromkeys([*old, *new])
            for key in _changed_keys(old.get(name), new.get(name),
                                     f"{prefix}.{name}" if prefix else str(name))]


def _unique_keys_loader(yaml):
    """A safe YAML loader that refuses a key given twice in one mapping: YAML's own loaders
    keep the last silently, so a second ``data:`` block would override the first unseen."""
    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise ParamsError(f"{key_node.start_mark.name}: the key {brief(key)} is "
                                      f"given twice in one mapping (lines {seen[key]} and "
                                      f"{line}); YAML would keep the last silently")
                seen[key] = line
            return super().construct_mapping(node, deep)
    return UniqueKeys


def parse_params(raw: dict[str, Any], names: Names | None = None) -> Params:
    """``raw`` (params.yaml's mapping) checked and typed.

    With ``names`` (the registry: :data:`drfidelity.registry.NAMES`), every dataset, method
    and study named is checked to be registered and every method's settings against its spec.
    Without (a map stage, which reads no list of names so that adding a name leaves it up to
    date), names are checked to be names only; the stage checks its own method's settings.
    """
    _known_keys("", raw, TOP_KEYS)
    data = _mapping(raw, "data")
    _known_keys("data", data, DATA_KEYS)
    datasets = _names(raw, "datasets", names and names.datasets)
    methods = _names(raw, "methods", names and names.methods)
    # a dataset's knobs are checked where it is generated (make_dataset): the generators'
    # signatures are not loaded here, so that no stage depends on every generator
    dataset_params = _per_name(raw, "dataset_params", names and names.datasets)
    method_params = _per_name(raw, "method_params", names and names.methods)
    for name in dict.fromkeys([*methods, *method_params]) if names else ():
        try:
            names.methods[name].settings(method_params.get(name, {}),
                                         where=f"method_params.{name}")
        except ValueError as exc:
            raise ParamsError(str(exc)) from None
    boot = _mapping(raw, "bootstrap")
    _known_keys("bootstrap", boot, BOOTSTRAP_KEYS)
    alpha = _number(boot, "alpha", "bootstrap.alpha")
    if not 0 < alpha < 1:
        raise ParamsError(f"bootstrap.alpha must lie in (0, 1), got {alpha}")
    n, d = _integer(data, "n", "data.n", minimum=4), _integer(data, "d", "data.d", minimum=1)
    _check_data_size(n, d)
    return Params(
        n=n,
        d=d,
        data_seed=_integer(data, "seed", "data.seed", minimum=0),
        snr=_snr(data),
        datasets=datasets,
        dataset_params=dataset_params,
        methods=methods,
        method_params=method_params,
        seeds=_integer(raw, "seeds", "seeds", minimum=1),
        jobs=_integer(raw, "jobs", "jobs", minimum=1),
        bootstrap=Bootstrap(
            n_boot=_integer(boot, "n_boot", "bootstrap.n_boot", minimum=1),
            alpha=alpha,
            seed=_integer(boot, "seed", "bootstrap.seed", minimum=0),
        ),
        studies=StudyParams(_studies(raw.get("studies") or {},
                                             names and names.studies)),
        ranking=_ranking(raw.get("ranking") or {}, names and names.datasets),
        names=names,
    )


def _check_data_size(n: int, d: int) -> None:
    """ParamsError naming data.n and data.d when a dataset (X and its noise-free truth, both
    float64) would not fit in memory: refused at the first stage, not by the allocator."""
    from drfidelity.core.validation import available_memory

    needed, available = 2 * 8 * n * d, available_memory()
    if available is not None and needed > available:
        raise ParamsError(f"data.n = {n:,} and data.d = {d:,}: a dataset (X and its noise-free "
                          f"truth) takes {needed / 2**30:,.1f} GiB, but {available / 2**30:.1f} "
                          "GiB of memory is available; lower data.d or data.n")


class StudyParams(dict):
    """``studies`` by study; a study missing from params.yaml is a :class:`ParamsError`
    naming it (one line from the CLI), not a KeyError."""

    def __missing__(self, study: str):
        raise ParamsError(f"params.yaml has no studies.{study} section, which this stage "
                          "needs (see the repository's params.yaml for its keys)")


def _studies(raw: Any, known) -> dict[str, Any]:
    """``studies``: a mapping per registered study. Each section's keys and values are
    checked by the study's own schema (:func:`check_section`) where the study is loaded, so
    that validating params never imports a study module."""
    if not isinstance(raw, dict):
        raise ParamsError(f"studies must be a mapping of study -> settings, got {brief(raw)}")
    if known is not None:
        _known_keys("studies", raw, known)
    for study, settings in raw.items():
        if not isinstance(settings, dict):
            raise ParamsError(f"studies.{study} must be a mapping, got {brief(settings)}")
    return {study: dict(settings) for study, settings in raw.items()}


def _ranking(raw: Any, known) -> dict[str, tuple[str, ...]]:
    """``ranking``: dataset -> a list of column names (possibly empty). Optional: without it,
    each dataset ranks its own scored columns only (the v1.3.0 rule)."""
    if not isinstance(raw, dict):
        raise ParamsError(f"ranking must be a mapping of dataset -> column names, got {brief(raw)}")
    if known is not None:
        _known_keys("ranking", raw, known)
    result = {}
    for dataset, columns in raw.items():
        columns = columns or []
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            raise ParamsError(f"ranking.{dataset} must be a list of column names, "
                              f"got {brief(columns)}")
        result[dataset] = tuple(columns)
    return result


def check_section(where: str, settings: dict, schema: dict[str, Any],
                  ranges: dict[str, tuple[float, float | None, bool]]) -> dict[str, Any]:
    """``settings`` with every key of ``schema`` present and of its type (floats may be
    written as integers; a one-element list type checks every element of a non-empty list,
    a one-element tuple type every element of a list that may be empty) and within
    ``ranges`` (key -> (low, high, low excluded); integers not listed must be >= 0); a bad
    key or value is a :class:`ParamsError` naming ``where.key``."""
    _known_keys(where, settings, schema)
    result = {key: _typed(settings, key, kind, f"{where}.{key}") for key, kind in schema.items()}
    for key, value in result.items():
        _in_range(value, f"{where}.{key}", ranges.get(key, (0, None, False)))
    return result


def _in_range(value: Any, where: str, bounds: tuple[float, float | None, bool]) -> None:
    from drfidelity.core.validation import real

    low, high, low_open = bounds
    for q, item in enumerate(value if isinstance(value, list) else [value]):
        if isinstance(item, (int, float)):
            try:
                real(f"{where}[{q}]" if isinstance(value, list) else where, item, low=low,
                     high=high, low_open=low_open)
            except ValueError as exc:
                raise ParamsError(str(exc)) from None


def _typed(settings: dict, key: str, kind: Any, where: str) -> Any:
    value = _required(settings, key, where)
    if isinstance(kind, (list, tuple)):
        if not isinstance(value, list) or (isinstance(kind, list) and not value):
            raise ParamsError(f"{where} must be a {'non-empty ' * isinstance(kind, list)}list, "
                              f"got {brief(value)}")
        return [_typed({key: v}, key, kind[0], f"{where}[{i}]") for i, v in enumerate(value)]
    if kind is float:
        return _number(settings, key, where)
    if kind is int:
        return _integer(settings, key, where, minimum=0)
    if not isinstance(value, kind):
        raise ParamsError(f"{where} must be a {kind.__name__}, got {brief(value)}")
    return value


def _known_keys(where: str, settings: dict, known) -> None:
    from drfidelity.core.validation import known_keys  # numpy: only once params are parsed

    try:
        known_keys(where, settings, known)
    except ValueError as exc:
        raise ParamsError(str(exc)) from None


def _mapping(raw: dict, key: str) -> dict:
    value = _required(raw, key, key)
    if not isinstance(value, dict):
        raise ParamsError(f"{key} must be a mapping, got {brief(value)}")
    return value


def _required(raw: dict, key: str, where: str) -> Any:
    if key not in raw:
        raise ParamsError(f"{where} is missing")
    return raw[key]


def _integer(raw: dict, key: str, where: str, *, minimum: int) -> int:
    from drfidelity.core.validation import integer

    try:
        return integer(where, _required(raw, key, where), minimum)
    except ParamsError:
        raise
    except ValueError as exc:
        raise ParamsError(str(exc)) from None


def _number(raw: dict, key: str, where: str) -> float:
    value = _required(raw, key, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamsError(f"{where} must be a number, got {brief(value)}{_yaml_hint(value)}")
    return float(value)


def _yaml_hint(value: Any) -> str:
    return (" (write floats as 0.001 or 1.0e-3: YAML reads 1e-3 as a string)"
            if isinstance(value, str) else "")


def _snr(data: dict) -> float:
    from drfidelity.core.validation import snr

    value = _required(data, "snr", "data.snr")
    try:
        return snr("data.snr", value)
    except ValueError as exc:
        raise ParamsError(f"{exc}{_yaml_hint(value)}") from None


def _names(raw: dict, key: str, known) -> tuple[str, ...]:
    """``raw[key]``, a list of names, each of ``known`` when given."""
    from drfidelity.core.validation import close_match

    value = _required(raw, key, key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ParamsError(f"{key} must be a non-empty list of names, got {brief(value)}")
    unknown = [v for v in value if known is not None and v not in known]
    if unknown:
        names = ", ".join(f"{v}{close_match(v, known)}" for v in unknown)
        raise ParamsError(f"{key}: unknown name(s) {names} (known: {', '.join(known)})")
    if len(set(value)) != len(value):
        raise ParamsError(f"{key} lists a name twice: {brief(value)}")
    return tuple(value)


def _per_name(raw: dict, key: str, known) -> dict[str, dict[str, Any]]:
    from drfidelity.core.validation import close_match

    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise ParamsError(f"{key} must be a mapping of name -> settings, got {brief(value)}")
    result = {}
    for name, settings in value.items():
        if known is not None and name not in known:
            raise ParamsError(f"{key}.{name}: unknown name{close_match(name, known)} "
                              f"(known: {', '.join(known)})")
        settings = settings or {}
        if not isinstance(settings, dict):
            raise ParamsError(f"{key}.{name} must be a mapping, got {brief(settings)}")
        result[name] = dict(settings)
    return result
