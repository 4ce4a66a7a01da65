"""``random_walk``: independent high-dimensional random walks, the time-series probe.

Series s draws its steps from its own generator SeedSequence([seed, s]), uniform in
[-step, step] per dimension, and is their cumulative sum (row 0 is the first step, not the
origin). No latent space, no projection, no noise: the truth is the data itself.
"""

from __future__ import annotations

import numpy as np

from drfidelity.core.validation import integer, real

from . import _checks
from ._common import Dataset
from .spec import DatasetSpec


def make_random_walk(n: int = 3000, d: int = 50, seed: int = 0, *, n_series: int = 6,
                     step: float = 0.001) -> Dataset:
    """``n_series`` walks of n / n_series steps in d dims, concatenated series by series.

    Labels and ``series`` are the series id, ``t`` the step index within the series.
    """
    params = dict(n=n, d=d, seed=seed, n_series=n_series, step=step)
    n_series = integer("n_series", n_series, 1)
    real("step", step, low=0.0, low_open=True)
    n, d, seed = _checks.shape(n, d, seed, min_d=1, min_n=n_series,
                               why_n="one point per series")
    if n % n_series:
        raise ValueError(f"n={n} must be divisible by n_series={n_series} "
                         "(n = n_series * points per series)")
    length = n // n_series
    walks = [np.random.default_rng(np.random.SeedSequence([seed, s]))
             .uniform(-step, step, (length, d)).cumsum(axis=0) for s in range(n_series)]
    clean = np.ascontiguousarray(np.vstack(walks))
    series = np.repeat(np.arange(n_series, dtype=np.int64), length)
    t = np.tile(np.arange(length, dtype=np.int64), n_series)
    return Dataset("random_walk", clean, clean, series, extras={"series": series, "t": t},
                   params=params)


#: The time-series study draws the trajectories; listed in ``datasets``, the gallery
#: colours each map by the step index ``t``.
SPEC = DatasetSpec(
    name="random_walk", generator=make_random_walk, title="High-dimensional random walks",
    extras=("series", "t"), noised=False, gallery="cyclic_position", readouts="trajectory")
