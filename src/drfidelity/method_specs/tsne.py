"""t-SNE (scikit-learn, Barnes-Hut) (wrapper: ``methods/tsne.py``)."""

from drfidelity.core.method import POSITIVE, Method, clamp_perplexity

SPEC = Method("t-SNE", stochastic=True, defaults={"perplexity": 30},
              checks={"perplexity": POSITIVE}, clamps={"perplexity": clamp_perplexity},
              not_operable="sklearn TSNE has no out-of-sample transform", seconds=6)
