"""PCC (pccdr): correlation with reference-point distances (wrapper: ``methods/pcc.py``)."""

from drfidelity.core.method import Method, at_least

SPEC = Method("PCC", stochastic=True, defaults={"num_epochs": 500},
              checks={"num_epochs": at_least(1)},
              not_operable="pccdr optimizes fit coordinates; no transform", seconds=20)
