"""What the paper takes from the pipeline: its key figures and its table titles."""

from __future__ import annotations

from drfidelity.datasets.registry import DATASETS, knob_values

#: (dataset, figure key) copied to ``paper/figures/{dataset}_{key}.png`` for ``paper/main.tex``
#: (each dataset's ``paper_figures``).
PAPER_FIGURES = tuple((name, key) for name, spec in DATASETS.items()
                      for key in spec.paper_figures)


def paper_title(dataset: str, params) -> str:
    """Table title; a dataset of several populations carries their shares, from its knobs."""
    spec = DATASETS[dataset]
    if spec.shares is None:
        return spec.title
    shares = spec.shares(knob_values(dataset, params.dataset_params.get(dataset)))
    split = " vs.\\ ".join(f"{share:g}\\%" for share in shares)
    return f"{spec.title} ({split})"
