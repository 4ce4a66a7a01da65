"""Synthetic datasets with known geometry, reproduced draw for draw from the v1.3.0 generators.

Every generator maps a latent point cloud (or, for the probes, raw columns) to a
:class:`Dataset`; :func:`generate` adds the SNR noise (:mod:`.noise`) and returns the arrays of the
reference ``inputs.npz`` files. Under ``drfidelity.runtime.configure("exact")`` all arrays are
bit-identical to the reference.
"""

from ._common import Dataset
from .inputs import addplot_inputs, generate
from .noise import add_noise, noise_rng
from .outliers import make_anchored_addplot
from .registry import DATASETS, make_dataset

__all__ = ["DATASETS", "Dataset", "add_noise", "addplot_inputs", "generate",
           "make_anchored_addplot", "make_dataset", "noise_rng"]
