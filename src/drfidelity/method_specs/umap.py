"""UMAP (umap-learn) (wrapper: ``methods/umap.py``)."""

from drfidelity.core.method import NON_NEGATIVE, Method, at_least, clamp_neighbours

SPEC = Method("UMAP", stochastic=True, defaults={"n_neighbors": 15, "min_dist": 0.1},
              checks={"n_neighbors": at_least(2), "min_dist": NON_NEGATIVE},
              clamps={"n_neighbors": clamp_neighbours}, seconds=6)
