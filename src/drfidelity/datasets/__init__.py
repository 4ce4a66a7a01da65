"""Synthetic datasets with known geometry, reproduced draw for draw from the v1.3.0 generators.

Every generator maps a latent point cloud (or, for the probes, raw columns) to a
:class:`Dataset`; :func:`generate` adds the SNR noise (:mod:`.noise`) and returns the arrays of the
reference ``inputs.npz`` files. Under ``drfidelity.core.runtime.configure("exact")`` all arrays are
bit-identical to the reference. :data:`DATASETS` maps each name to its :class:`DatasetSpec`,
the one record of what the stages and the report need to know about that dataset.

Importing this package loads nothing numeric: the names below load their module on first use.
"""

from __future__ import annotations

import importlib

#: public names defined in submodules, loaded on first access (PEP 562)
_LAZY = {"Dataset": "_common", "addplot_inputs": "inputs", "generate": "inputs",
         "add_noise": "noise", "noise_rng": "noise", "make_anchored_addplot": "outliers",
         "DATASETS": "registry", "NAMES": "registry", "dataset_spec": "registry",
         "knob_values": "registry", "make_dataset": "registry", "DatasetSpec": "spec",
         "ScoredColumn": "spec"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = sorted(_LAZY)
