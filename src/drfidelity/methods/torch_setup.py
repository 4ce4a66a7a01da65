"""Torch state for the torch-based methods (PyMDE, PCC): one thread, seeded, IEEE square roots.

Why re-pin the threads at every call: numba's OpenMP layer (first used by UMAP) sets the
process-wide OpenMP thread count to the number of cores, and torch shares it. More threads
change the order of float reductions, so without re-pinning PyMDE/PCC coordinates would depend
on which methods ran before them in the same process.

Why replace torch's square root: on the CPU, torch hands float arrays to MKL's vector math,
whose square-root kernels start from the CPU's approximate reciprocal square root (``rsqrtps``),
an instruction whose bits each vendor defines, and do not round correctly. The same map then
differs between AMD and Intel hosts. numpy's square root is IEEE-754 (correctly rounded), so the
same bits on every x86-64 CPU; it is the only vector-math function these methods call.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings

import numpy as np

#: the ``torch.library.Library`` that holds the IEEE square root, once registered (kept alive:
#: dropping it would unregister the kernels)
_IEEE_SQRT_LIBRARY = None


def seeded_torch(seed: int):
    """The ``torch`` module, pinned to one intra-op thread, seeded with ``seed``, and with its
    CPU square root computed in IEEE arithmetic."""
    import torch

    use_ieee_square_root(torch)
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    return torch


def ieee_sqrt(x):
    """``sqrt(x)`` of a CPU tensor, correctly rounded (numpy's), in torch's result dtype.

    Half-precision values go through float32, whose square root rounds to the same half as an
    exact one would (float32 carries more than twice their significand bits).
    """
    import torch

    result_dtype = x.dtype if x.is_floating_point() or x.is_complex() else torch.get_default_dtype()
    exact_dtype = torch.float32 if result_dtype in (torch.float16, torch.bfloat16) else result_dtype
    values = x.detach().to(exact_dtype).contiguous().numpy()
    with np.errstate(invalid="ignore"):
        root = np.asarray(np.sqrt(values))
    return torch.from_numpy(root).to(result_dtype)


def use_ieee_square_root(torch) -> None:
    """Register :func:`ieee_sqrt` as torch's CPU kernel of ``sqrt``, ``sqrt_`` and ``sqrt.out``,
    once per process; every caller goes through it, ``cdist``'s Euclidean path included."""
    global _IEEE_SQRT_LIBRARY
    if _IEEE_SQRT_LIBRARY is not None:
        return

    def in_place(x):
        root = ieee_sqrt(x)
        if root.dtype != x.dtype:  # as torch's own kernel refuses (an integer tensor, say)
            raise RuntimeError(f"sqrt_: result type {root.dtype} can't be cast to {x.dtype}")
        return x.copy_(root)

    def into(x, *, out):
        root = ieee_sqrt(x)
        out.resize_(root.shape)
        return out.copy_(root)

    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():  # torch warns that it overrides its own kernel: intended
        warnings.simplefilter("ignore")
        library.impl("sqrt", ieee_sqrt, "CPU")
        library.impl("sqrt_", in_place, "CPU")
        library.impl("sqrt.out", into, "CPU")
    _IEEE_SQRT_LIBRARY = library


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
