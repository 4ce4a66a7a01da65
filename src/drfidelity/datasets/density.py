"""``density``: one latent cloud with three regimes of local density.

A wide uniform box, a tight Gaussian core and a thin spherical shell, stacked in that order
(labels 0, 1, 2), permuted and projected isometrically to D dimensions. The colouring value is
the latent log local density, -log(distance to the 10th nearest other point).
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import NearestNeighbors

from drfidelity.core.validation import integer, real

from . import _checks
from ._common import Dataset, project
from .spec import DatasetSpec, Knobs

def log_local_density(latent: np.ndarray, k: int = 10) -> np.ndarray:
    """-log(max(r_k, 1e-12)), r_k the distance to the k-th nearest neighbour other than self."""
    distances = NearestNeighbors(n_neighbors=k + 1).fit(latent).kneighbors(latent)[0]
    return -np.log(np.maximum(distances[:, -1], 1e-12))


def make_density(n: int = 1000, d: int = 768, seed: int = 0, *, latent_dim: int = 10,
                 uniform_frac: float = 0.40, core_frac: float = 0.45, shell_frac: float = 0.15,
                 core_sigma: float = 0.15, uniform_halfwidth: float = 3.0,
                 shell_radius: float = 6.0, shell_jitter: float = 0.10) -> Dataset:
    """Uniform box [-h, h]^m, N(0, core_sigma^2) core and a shell of radius ~N(R, jitter^2).

    Counts: round(f_u n), round(f_c n) and the rest, with the fractions normalised to sum 1.
    Draw order: box, core, shell directions, shell radii, permutation, projection.
    """
    params = dict(n=n, d=d, seed=seed, latent_dim=latent_dim, uniform_frac=uniform_frac,
                  core_frac=core_frac, shell_frac=shell_frac, core_sigma=core_sigma,
                  uniform_halfwidth=uniform_halfwidth, shell_radius=shell_radius,
                  shell_jitter=shell_jitter)
    latent_dim = integer("latent_dim", latent_dim, 1)
    fractions = np.array([real(k, params[k], low=0.0)
                          for k in ("uniform_frac", "core_frac", "shell_frac")])
    if fractions.sum() <= 0:
        raise ValueError("uniform_frac, core_frac and shell_frac must not all be 0")
    for name in ("core_sigma", "uniform_halfwidth", "shell_radius"):
        real(name, params[name], low=0.0, low_open=True)
    real("shell_jitter", shell_jitter, low=0.0)
    n, d, seed = _checks.shape(n, d, seed, min_d=latent_dim, min_n=11,
                               why_n="the log local density needs 10 neighbours")

    fractions = fractions / fractions.sum()
    n_uniform = int(round(fractions[0] * n))
    n_core = int(round(fractions[1] * n))
    n_shell = n - n_uniform - n_core

    rng = np.random.default_rng(seed)
    box = rng.uniform(-uniform_halfwidth, uniform_halfwidth, (n_uniform, latent_dim))
    core = rng.normal(0.0, core_sigma, (n_core, latent_dim))
    directions = rng.standard_normal((n_shell, latent_dim))
    directions = directions / (np.linalg.norm(directions, axis=1, keepdims=True) + 1e-12)
    shell = directions * (shell_radius + rng.normal(0.0, shell_jitter, (n_shell, 1)))
    latent = np.vstack([box, core, shell])
    labels = np.repeat(np.arange(3, dtype=np.int64), [n_uniform, n_core, n_shell])

    order = rng.permutation(n)
    latent, labels = latent[order], labels[order]
    density = log_local_density(latent)
    clean, _ = project(latent, rng, d)
    return Dataset("density", clean, clean, labels,
                   extras={"log_local_density": density}, params=params)


def _blurb(knobs: Knobs) -> str:
    return ("A wide uniform box, a tight Gaussian core and a thin spherical shell in one "
            "latent cloud: does the map keep the core's scale and the order of near pairs?")


SPEC = DatasetSpec(
    name="density", generator=make_density, title="Non-uniform density", blurb=_blurb,
    extras=("log_local_density",), gallery="local_density",
    guide=("recall_bias",), paper_figures=("recall_bias", "gallery", "shepard"))
