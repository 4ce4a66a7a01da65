"""PCA: the linear baseline; deterministic, no settings (wrapper: ``methods/pca.py``)."""

from drfidelity.core.method import Method

SPEC = Method("PCA", stochastic=False)
