"""PyMDE distance-preserving embedding (all pairwise distances, standardized constraint)."""

from __future__ import annotations

import numpy as np

from drfidelity.core.validation import integer

from .torch_setup import import_pymde, seeded_torch

#: the libraries its jobs import, preloaded for them (drfidelity.jobs.fresh); pymde itself is
#: imported by each job: it needs import_pymde's torchvision stand-in, which a preload by name
#: cannot install
PRELOAD = ("torch",)


def fit_pymde(X: np.ndarray, seed: int, context=None, *, max_iter: int,
              device: str) -> np.ndarray:
    """``pymde.preserve_distances`` on float32 data, 2-D, ``Standardized`` constraint.

    PyMDE's defaults otherwise: ``Absolute`` loss, ``max_distances=5e7`` (all N(N-1)/2 pairs
    for N <= 10,000). The random initial layout comes from torch, seeded here; ``device`` is
    the only method setting the benchmark forwards from the driver.
    """
    integer("max_iter", max_iter, 1)
    pymde = import_pymde()
    torch = seeded_torch(seed)
    problem = pymde.preserve_distances(
        torch.as_tensor(X, dtype=torch.float32), embedding_dim=2,
        constraint=pymde.Standardized(), device=device, verbose=False)
    return problem.embed(max_iter=max_iter, verbose=False).detach().cpu().numpy()
