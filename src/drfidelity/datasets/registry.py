"""Name -> generator registry and the validated entry point :func:`make_dataset`."""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Callable

from ._common import Dataset
from .clusters import make_clusters
from .density import make_density
from .noise_dims import make_noise_dims
from .outliers import make_outliers
from .populations import make_populations
from .random_walk import make_random_walk
from .transition import make_transition

#: Benchmark datasets in the ``--dataset all`` order, then the two probes.
DATASETS: dict[str, Callable[..., Dataset]] = {
    "density": make_density,
    "transition": make_transition,
    "clusters": make_clusters,
    "outliers": make_outliers,
    "populations": make_populations,
    "random_walk": make_random_walk,
    "noise_dims": make_noise_dims,
}


def knobs(name: str) -> tuple[str, ...]:
    """The dataset-specific keyword parameters of generator ``name`` (beyond n, d, seed)."""
    return tuple(p.name for p in inspect.signature(_generator(name)).parameters.values()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY)


def make_dataset(name: str, *, n: int, d: int, seed: int, **params: Any) -> Dataset:
    """Generate dataset ``name`` with ``n`` points in ``d`` dims from generator seed ``seed``.

    ``params`` are the generator's own knobs (spec defaults otherwise); unknown names raise.
    """
    valid = knobs(name)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        hints = {u: difflib.get_close_matches(u, valid, n=1) for u in unknown}
        hint = "; ".join(f"did you mean {h[0]!r} for {u!r}?" for u, h in hints.items() if h)
        raise ValueError(f"unknown parameter(s) {unknown} for dataset {name!r}; valid knobs: "
                         f"{list(valid)}" + (f" ({hint})" if hint else ""))
    return _generator(name)(n, d, seed, **params)


def _generator(name: str) -> Callable[..., Dataset]:
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {list(DATASETS)}")
    return DATASETS[name]
