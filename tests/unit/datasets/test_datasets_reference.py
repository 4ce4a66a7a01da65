"""Every array of every reference inputs.npz is reproduced bit for bit (exact numerics).

The conftest selects the generic OpenBLAS kernels and disables numpy's AVX-512 loops, the
setup the reference arrays were produced under (reference README, "Things a re-implementation
should know", item 1), so the comparison is ``np.array_equal`` with no tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from drfidelity.datasets import addplot_inputs, generate

CANONICAL = dict(n=1000, d=768, data_seed=0)
CONFIGS = {
    **{f"canonical/{name}_snr1": (name, CANONICAL, 1.0, None)
       for name in ("density", "clusters", "transition", "outliers", "populations")},
    **{f"canonical/{name}_snrinf": (name, CANONICAL, "inf", None)
       for name in ("density", "clusters")},
    "random_walk/random_walk_n3000_d50_s6": (
        "random_walk", dict(n=3000, d=50, data_seed=0), math.inf, {"n_series": 6}),
    **{f"sweeps/outliers_sweep_of{f:g}": (
        "outliers", CANONICAL, math.inf, {"outlier_factor": f}) for f in (1.5, 2, 3, 5, 8)},
    **{f"sweeps/populations_sweep_mf{m:g}": (
        "populations", CANONICAL, 1.0, {"minority_frac": m}) for m in (0.5, 0.25, 0.1, 0.05)},
    **{f"noise_dims/noise_dims_dim{dim}": (
        "noise_dims", dict(n=1000, d=dim, data_seed=42), math.inf, None)
       for dim in (6, 10, 20, 40, 80, 100, 200, 250, 300, 400, 768)},
}


def assert_matches_reference(ours: dict[str, np.ndarray], folder) -> None:
    with np.load(folder / "inputs.npz") as reference:
        assert set(reference.files) <= set(ours), sorted(set(reference.files) - set(ours))
        for key in reference.files:
            expected = reference[key]
            assert ours[key].dtype == expected.dtype, key
            assert ours[key].shape == expected.shape, key
            assert np.array_equal(ours[key], expected), (
                f"{key}: max |diff| {np.max(np.abs(ours[key] - expected))}")


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_generate_reproduces_reference_inputs(config, reference_dir):
    name, shape, snr, params = CONFIGS[config]
    ours = generate(name, snr=snr, params=params, **shape)
    assert_matches_reference(ours, reference_dir / config)
    if math.isinf(float(snr)) and name != "noise_dims":
        assert ours["X_truth"] is ours["X"]
    if name == "noise_dims":
        assert np.array_equal(ours["X_truth"], ours["X"][:, :3])


def test_addplot_inputs_reproduce_reference(reference_dir):
    ours = addplot_inputs()
    assert_matches_reference(ours, reference_dir / "addplot/outliers_addplot_snr1")
    with np.load(reference_dir / "canonical/outliers_snr1/inputs.npz") as outliers:
        assert np.array_equal(outliers["X"][ours["fit_rows_in_outliers_snr1"]], ours["X_fit"])
