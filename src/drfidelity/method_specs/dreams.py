"""DREAMS: t-SNE pulled toward a PCA layout (wrapper: ``methods/dreams.py``)."""

from drfidelity.core.method import POSITIVE, Method, bounded, clamp_perplexity

SPEC = Method("DREAMS", stochastic=False, defaults={"reg_lambda": 0.15, "perplexity": 30},
              checks={"reg_lambda": bounded(low=0.0, high=1.0), "perplexity": POSITIVE},
              clamps={"perplexity": clamp_perplexity}, seconds=5)
