"""PyMDE: distance-preserving embedding (wrapper: ``methods/pymde.py``)."""

from drfidelity.core.method import Method, at_least, choice

SPEC = Method("PyMDE", stochastic=True, defaults={"max_iter": 300, "device": "cpu"},
              checks={"max_iter": at_least(1), "device": choice("cpu", "cuda")},
              not_operable="pymde optimizes fit coordinates; no transform", seconds=28)
