"""Isomap: a k-NN graph's geodesics (wrapper: ``methods/isomap.py``)."""

from drfidelity.core.method import Method, at_least, clamp_neighbours

SPEC = Method("Isomap", stochastic=False, defaults={"n_neighbors": 15},
              checks={"n_neighbors": at_least(1)}, clamps={"n_neighbors": clamp_neighbours},
              seconds=3)
