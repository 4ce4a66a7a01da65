"""Synthetic datasets with known geometry, reproduced draw for draw from the v1.3.0 generators.

Every generator maps a latent point cloud (or, for the probes, raw columns) to a
:class:`Dataset`; :func:`generate` adds the SNR noise (:mod:`.noise`) and returns the arrays of the
reference ``inputs.npz`` files. Under ``drfidelity.runtime.configure("exact")`` all arrays are
bit-identical to the reference. :data:`DATASETS` maps each name to its :class:`DatasetSpec`,
the one record of what the stages and the report need to know about that dataset.
"""

from ._common import Dataset
from .inputs import addplot_inputs, generate
from .noise import add_noise, noise_rng
from .outliers import make_anchored_addplot
from .registry import DATASETS, dataset_spec, knob_values, make_dataset
from .spec import DatasetSpec, ScoredColumn

__all__ = ["DATASETS", "Dataset", "DatasetSpec", "ScoredColumn", "add_noise", "addplot_inputs",
           "dataset_spec", "generate", "knob_values", "make_anchored_addplot", "make_dataset",
           "noise_rng"]
