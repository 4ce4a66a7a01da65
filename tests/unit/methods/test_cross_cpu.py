"""PyMDE's and PCC's maps are the same bits on every x86-64 CPU: torch's square root is IEEE.

torch's CPU square root calls MKL's vector math, whose float32 kernels start from the CPU's own
reciprocal-square-root approximation and round differently on AMD and Intel hosts
(docs/methods.md, "Across CPU vendors"). ``drfidelity.methods.torch_setup`` replaces it with
numpy's correctly rounded one. These tests hold that in place on whichever vendor runs them:
every square root equals the IEEE one bit for bit, and the maps of the cross-CPU probe's input
(``../shared/cross-cpu/probe.py``) equal the goldens below, which that probe prints on any host.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from drfidelity.methods.torch_setup import seeded_torch

#: the probe's hash of PyMDE's and PCC's maps (``run_method`` at default settings, seed 0) of
#: its input: 16 hex digits of sha256 of the map's bytes. Recorded on an AMD EPYC host in a
#: spawned process, twice, with the same result; an Intel host must print the same.
PROBE_MAPS = {"PyMDE": "2745d2926127a0ce", "PCC": "64466c7934571415"}


def probe_hash(a) -> str:
    """The probe's hash: 16 hex digits of sha256 of the array's C-ordered bytes."""
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def probe_maps() -> dict[str, str]:
    """The probe's last entries: the maps of its input, drawn after its primitives' inputs."""
    from drfidelity.registry import METHODS
    from drfidelity.methods.base import run_method

    rng = np.random.default_rng(0)
    rng.normal(size=(300, 64)), rng.normal(size=(64, 40)), rng.uniform(0.01, 5, size=100_000)
    X = rng.normal(size=(200, 30))
    return {name: probe_hash(run_method(METHODS[name], X, 0)[0]) for name in PROBE_MAPS}


@pytest.fixture(scope="module")
def torch():
    return seeded_torch(0)


@pytest.fixture(scope="module")
def values() -> np.ndarray:
    """The probe's square-root input: 100,000 draws from U(0.01, 5)."""
    rng = np.random.default_rng(0)
    rng.normal(size=(300, 64)), rng.normal(size=(64, 40))
    return rng.uniform(0.01, 5, size=100_000)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_form_of_torch_s_square_root_is_ieee(torch, values, dtype):
    """``sqrt``, ``sqrt_`` and ``sqrt(out=)`` give numpy's bits (without the replacement,
    18,643 of these float32 roots differ on an AMD EPYC host)."""
    x = values.astype(dtype)
    ieee = np.sqrt(x)
    assert np.array_equal(torch.sqrt(torch.from_numpy(x)).numpy(), ieee)
    assert np.array_equal(torch.from_numpy(x.copy()).sqrt_().numpy(), ieee)
    out = torch.empty(0, dtype=torch.from_numpy(x).dtype)
    torch.sqrt(torch.from_numpy(x), out=out)
    assert np.array_equal(out.numpy(), ieee)


def test_half_precision_roots_are_rounded_like_exact_ones(torch):
    """Every finite non-negative float16 value's root equals the exact root rounded once to
    float16 (float64's root, correctly rounded, then rounded to float16: no double-rounding
    error at these widths)."""
    bits = np.arange(0, 0x7C00, dtype=np.uint16)  # +0 up to the largest finite half
    x = bits.view(np.float16)
    expected = np.sqrt(x.astype(np.float64)).astype(np.float16)
    assert np.array_equal(torch.sqrt(torch.from_numpy(x)).numpy(), expected)


def test_roots_of_negatives_nan_and_integers_behave_as_torch_s_own(torch):
    roots = torch.sqrt(torch.tensor([-1.0, 0.0, float("inf"), float("nan")]))
    assert np.isnan(roots[0]) and roots[1] == 0 and np.isinf(roots[2]) and np.isnan(roots[3])
    assert torch.sqrt(torch.tensor([4, 9])).dtype == torch.get_default_dtype()
    assert torch.sqrt(torch.tensor(16.0)).item() == 4.0  # a 0-d tensor stays a tensor
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.tensor([4, 9]).sqrt_()


def test_gradients_pass_through_the_ieee_root(torch):
    """Autograd still differentiates it (d sqrt(w) / dw = 1 / (2 sqrt(w))), and ``cdist``'s
    Euclidean path, which takes the root internally, still has its gradient."""
    w = torch.tensor([0.25, 4.0, 9.0], dtype=torch.float64, requires_grad=True)
    w.sqrt().sum().backward()
    assert np.array_equal(w.grad.numpy(), [1.0, 0.25, 1 / 6])
    points = torch.randn(40, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda p: torch.cdist(p, p[:5]), (points,))


def test_the_probe_s_maps_are_the_goldens():
    """The maps the cross-CPU probe prints, computed in a fresh spawned process; an Intel
    host's probe record must show the same two hashes."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert pool.submit(probe_maps).result() == PROBE_MAPS
