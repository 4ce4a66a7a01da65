"""Torch state for the torch-based methods (PyMDE, PCC): one thread, seeded, at every call.

Why re-pin at every call: numba's OpenMP layer (first used by UMAP) sets the process-wide
OpenMP thread count to the number of cores, and torch shares it. More threads change the
order of float reductions, so without re-pinning PyMDE/PCC coordinates would depend on which
methods ran before them in the same process.
"""

from __future__ import annotations

import importlib
import sys
import types


def seeded_torch(seed: int):
    """The ``torch`` module, pinned to one intra-op thread and seeded with ``seed``."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    return torch


def import_pymde():
    """Import ``pymde``, registering an empty ``torchvision`` module first if none imports.

    Why: pymde 0.3.0 imports torchvision at top level, only to download its demo datasets,
    and the only torchvision wheels matching torch 2.13 are CUDA builds that fail to import.
    An empty stand-in is enough for everything the benchmark uses.
    """
    if "pymde" not in sys.modules:
        try:
            importlib.import_module("torchvision")
        except Exception:  # absent, or a build that cannot load its operators
            for name in [m for m in sys.modules if m.split(".")[0] == "torchvision"]:
                del sys.modules[name]
            sys.modules["torchvision"] = types.ModuleType("torchvision")
    return importlib.import_module("pymde")
