"""Datasets: the §1.2 fingerprints, determinism across processes, and argument validation."""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys

import numpy as np
import pytest

from drfidelity.datasets import DATASETS, add_noise, generate, make_dataset, noise_rng
from drfidelity.datasets.noise import signal_variance

CANONICAL = dict(n=1000, d=768, seed=0)

# §1.2 reference values at N=1000, D=768, data seed 0, SNR=1 (printed to 7-9 digits).
FINGERPRINTS = {
    "density": (2.271595e-02, [-0.06213597, -0.30008884, 0.19662062],
                [-0.12589815, -0.49112942, 0.32251082], -100.28640698,
                [2, 1, 0, 2, 0, 0, 1, 1, 2, 1]),
    "clusters": (6.866948e-01, [-2.05771273, 0.15406288, -0.58500921],
                 [-2.40828668, -0.89630656, 0.10715380], -2394.95315244,
                 [6, 6, 1, 0, 6, 1, 2, 4, 3, 4]),
    "transition": (2.446034e-02, [-0.15447604, 0.08137151, -0.24051608],
                   [-0.22064114, -0.11686854, -0.10988163], -828.00981239,
                   [-1, -1, -1, 6, 4, 0, -1, -1, -1, -1]),
    "outliers": (1.651905e-01, [-0.27627106, -0.26330073, -0.26295179],
                 [-0.44821635, -0.77847329, 0.07653199], 582.13886936,
                 [2, 4, 4, 0, 4, 4, 0, 2, 0, 4]),
    "populations": (2.088940e-01, [2.23590213, -1.07393443, 0.00415314],
                    [2.04254475, -1.65326065, 0.38591232], -3665.56199399,
                    [5, 4, 1, 0, 4, 1, 2, 3, 2, 3]),
}


@pytest.fixture(scope="module")
def canonical():
    return {name: make_dataset(name, **CANONICAL) for name in FINGERPRINTS}


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_spec_fingerprints(name, canonical):
    s2, c0, x0, total, first_labels = FINGERPRINTS[name]
    clean = canonical[name].clean
    X = add_noise(clean, 1.0, 0)
    assert clean.shape == (1000, 768) and clean.dtype == np.float64
    assert clean.flags.c_contiguous and X.flags.c_contiguous
    assert signal_variance(clean) == pytest.approx(s2, rel=1e-6)
    np.testing.assert_allclose(clean[0, :3], c0, atol=6e-9)
    np.testing.assert_allclose(X[0, :3], x0, atol=6e-9)
    assert clean.sum() == pytest.approx(total, abs=6e-8)
    assert canonical[name].labels[:10].tolist() == first_labels


def test_spec_scalars(canonical):
    outliers, populations = canonical["outliers"].extras, canonical["populations"].extras
    assert outliers["outlier_idx"].tolist() == [39, 312, 313, 381, 468, 894]
    assert outliers["outlier_dir"].tolist() == [2, 1, 0, 1, 2, 0]
    assert outliers["outlier_factors"].tolist() == [3.0, 3.1, 3.0, 3.0, 3.1, 3.1]
    assert outliers["bulk_scale"] == pytest.approx(10.993519171, abs=1e-9)
    assert outliers["intra_nn"] == pytest.approx(1.6804192, abs=1e-7)
    assert canonical["clusters"].extras["intra_nn"] == pytest.approx(1.7392516, abs=1e-7)
    minority = np.flatnonzero(populations["population"] == 1)
    assert minority[:5].tolist() == [0, 43, 44, 53, 59]
    assert populations["center_scale"] == pytest.approx(11.757928696, abs=1e-9)
    assert populations["group_delta"] == pytest.approx(28.800925737, abs=1e-9)


@pytest.mark.parametrize("name, fraction", [("clusters", 0.142), ("populations", 0.180)])
def test_within_cluster_pair_fraction(name, fraction, canonical):
    """§1.4/§1.7: the share of same-cluster pairs, where the first-mode near band lands."""
    counts = np.bincount(canonical[name].labels)
    assert (counts * (counts - 1)).sum() / (1000 * 999) == pytest.approx(fraction, abs=5e-4)


def test_registry_order_and_contract():
    assert list(DATASETS) == ["density", "transition", "clusters", "outliers", "populations",
                              "random_walk", "noise_dims"]
    for name in DATASETS:
        n, d = (60, 20) if name == "random_walk" else (200, 20)
        ds = make_dataset(name, n=n, d=d, seed=3)
        assert ds.name == name and ds.clean.shape == (n, d) and ds.labels.dtype == np.int64
        assert ds.params["n"] == n and ds.params["seed"] == 3
        assert ds.truth is ds.clean or name == "noise_dims"


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_same_arguments_same_arrays(name):
    n, d = (60, 20) if name == "random_walk" else (200, 20)
    snr = math.inf if name in ("random_walk", "noise_dims") else 2.0
    first = generate(name, n=n, d=d, data_seed=5, snr=snr)
    second = generate(name, n=n, d=d, data_seed=5, snr=snr)
    assert first.keys() == second.keys()
    for key in first:
        assert np.array_equal(first[key], second[key], equal_nan=True), key
    other = generate(name, n=n, d=d, data_seed=6, snr=snr)
    assert not np.array_equal(first["X"], other["X"])


def test_new_process_gives_byte_identical_X():
    """A fresh interpreter (same exact-numerics environment, inherited) yields the same bytes."""
    code = ("from drfidelity.core import runtime; runtime.configure('exact'); import hashlib; "
            "from drfidelity.datasets import generate; "
            "X = generate('outliers', n=1000, d=768, data_seed=0, snr=1.0)['X']; "
            "print(hashlib.sha256(X.tobytes()).hexdigest())")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
    X = generate("outliers", n=1000, d=768, data_seed=0, snr=1.0)["X"]
    assert child.stdout.strip() == hashlib.sha256(X.tobytes()).hexdigest()


def test_noise_model():
    """§1.2: sigma^2 = s2 / SNR, rng keyed by (data_seed, round(1000 SNR)), inf = identity."""
    clean = make_dataset("clusters", n=2000, d=64, seed=1).clean
    X = add_noise(clean, 4.0, 7)
    assert np.var(X - clean) == pytest.approx(signal_variance(clean) / 4.0, rel=0.02)
    z = np.random.default_rng(np.random.SeedSequence([7, 4000])).standard_normal(clean.shape)
    np.testing.assert_allclose(X - clean, np.sqrt(signal_variance(clean) / 4.0) * z,
                               atol=1e-12)
    assert add_noise(clean, math.inf, 7) is clean and add_noise(clean, "inf", 7) is clean
    assert np.array_equal(noise_rng(3, "inf").random(4),
                          np.random.default_rng(np.random.SeedSequence([3, 10**9])).random(4))


def test_noise_is_shared_across_datasets():
    """§9.1 item 3: the noise key ignores the dataset, so Z is one matrix scaled per dataset."""
    a = make_dataset("density", n=300, d=40, seed=0).clean
    b = make_dataset("clusters", n=300, d=40, seed=0).clean
    za = (add_noise(a, 1.0, 0) - a) / np.sqrt(signal_variance(a))
    zb = (add_noise(b, 1.0, 0) - b) / np.sqrt(signal_variance(b))
    np.testing.assert_allclose(za, zb, atol=1e-12)


# ------------------------------------------------------------------------------- validation

SMALL = dict(n=200, d=30, seed=0)


def test_unknown_dataset_lists_known_ones():
    with pytest.raises(ValueError, match=r"unknown dataset 'blobs'; known datasets: \['density'"):
        make_dataset("blobs", **SMALL)
    with pytest.raises(ValueError, match="unknown dataset 'blobs'"):
        generate("blobs", n=200, d=30, data_seed=0, snr=1.0)


def test_unknown_knob_lists_valid_ones_and_suggests():
    with pytest.raises(ValueError, match=r"unknown key dataset_params.clusters.n_cluster \(did "
                                         r"you mean 'n_clusters'\?\); known in dataset_params"):
        make_dataset("clusters", n_cluster=3, **SMALL)
    with pytest.raises(ValueError, match=r"random_walk.seed_offset; known in "
                                         r"dataset_params.random_walk: n_series, step"):
        make_dataset("random_walk", n=60, d=5, seed=0, seed_offset=1)


@pytest.mark.parametrize("name, d, latent", [
    ("density", 9, "latent dimension 10"), ("clusters", 7, "latent dimension 8"),
    ("transition", 8, "latent dimension 9"),
    ("outliers", 10, r"total latent \(latent_dim \+ n_directions\) dimension 11"),
    ("populations", 16, r"total latent \(2 \* latent_block \+ 1\) dimension 17"),
    ("noise_dims", 2, r"signal \(n_principal\) dimension 3"),
])
def test_d_below_latent_dimension(name, d, latent):
    with pytest.raises(ValueError, match=rf"d must be >= the {latent}, got d={d}"):
        make_dataset(name, n=200, d=d, seed=0)


def test_noise_dims_allows_d_equal_to_signal_dimension():
    ds = make_dataset("noise_dims", n=90, d=3, seed=42)
    assert np.array_equal(ds.clean, ds.truth)


@pytest.mark.parametrize("name, n, params, message", [
    ("clusters", 13, {}, r"n must be >= 14 \(each of the 7 clusters needs 2 points"),
    ("density", 10, {}, r"n must be >= 11 \(the log local density needs 10 neighbours"),
    ("outliers", 69, {}, r"the 6 outliers .* must be fewer than n // 10 = 6"),
    ("outliers", 1000, {"per_direction": 40}, r"the 120 outliers .* n // 10 = 100"),
    ("populations", 60, {}, r"minority \(3\) needs >= 1 point per cluster"),
    ("transition", 13, {}, r"n must be >= 14 \(every state and every bridge needs a point"),
    ("random_walk", 100, {}, r"n=100 must be divisible by n_series=6"),
])
def test_n_too_small_for_the_dataset(name, n, params, message):
    with pytest.raises(ValueError, match=message):
        make_dataset(name, n=n, d=40, seed=0, **params)


@pytest.mark.parametrize("snr, message", [
    ("abc", "snr must be a positive number or 'inf', got 'abc'"),
    (None, "snr must be a positive number or 'inf', got None"),
    (True, "snr must be a positive number or 'inf', got True"),
    (float("nan"), r"snr must be > 0 \(inf means no noise\), got nan"),
    (0, r"snr must be > 0 .*got 0.0"),
    (-1.0, r"snr must be > 0 .*got -1.0"),
    (-math.inf, r"snr must be > 0 .*got -inf"),
])
def test_invalid_snr(snr, message):
    clean = np.zeros((4, 3))
    with pytest.raises(ValueError, match=message):
        generate("clusters", n=200, d=30, data_seed=0, snr=snr)
    with pytest.raises(ValueError, match=message):
        add_noise(clean, snr, 0)
    with pytest.raises(ValueError, match=message):
        noise_rng(0, snr)


def test_probes_are_never_noised():
    with pytest.raises(ValueError, match=r"snr must be inf for 'random_walk'"):
        generate("random_walk", n=60, d=5, data_seed=0, snr=1.0)
    walks = generate("random_walk", n=60, d=5, data_seed=0, snr="inf")
    assert walks["X"] is walks["X_truth"]


@pytest.mark.parametrize("field, value, message", [
    ("n", True, "n must be an integer, got True"),
    ("n", 200.0, r"n must be an integer, got 200.0 \(float\)"),
    ("n", "200", "n must be an integer, got '200'"),
    ("d", 30.5, "d must be an integer, got 30.5"),
    ("seed", 1.5, "seed must be an integer, got 1.5"),
    ("seed", -1, "seed must be >= 0, got -1"),
    ("n", 0, "n must be >= 1, got 0"),
])
def test_invalid_shape_arguments(field, value, message):
    with pytest.raises(ValueError, match=message):
        make_dataset("clusters", **{**SMALL, field: value})


@pytest.mark.parametrize("name, knob, value, message", [
    ("clusters", "cluster_sigma", True, "cluster_sigma must be a real number, got True"),
    ("clusters", "dynamic_range", 0.0, "dynamic_range must be > 0.0, got 0.0"),
    ("clusters", "n_clusters", 2.0, "n_clusters must be an integer, got 2.0"),
    ("clusters", "n_clusters", 9, r"latent_dim must be >= n_clusters=9"),
    ("populations", "minority_frac", 0.6, "minority_frac must be <= 0.5, got 0.6"),
    ("populations", "group_range", 0.5, "group_range must be >= 1.0, got 0.5"),
    ("density", "core_sigma", float("nan"), "core_sigma must be finite, got nan"),
    ("noise_dims", "standardize", 1, "standardize must be True or False, got 1"),
    ("noise_dims", "rotation_seed", 1.5, "rotation_seed must be an integer, got 1.5"),
    ("transition", "closed_loop", "yes", "closed_loop must be True or False"),
    ("random_walk", "n_series", False, "n_series must be an integer, got False"),
])
def test_invalid_knob_values(name, knob, value, message):
    n = 60 if name == "random_walk" else 200
    with pytest.raises(ValueError, match=message):
        make_dataset(name, n=n, d=40, seed=0, **{knob: value})


def test_generate_keeps_shape_arguments_out_of_params():
    with pytest.raises(ValueError, match=r"params must hold only dataset knobs; pass \['n'\]"):
        generate("clusters", n=200, d=30, data_seed=0, snr=1.0, params={"n": 300})


@pytest.mark.parametrize("data_seed", [-1, 1.5, True])
def test_invalid_data_seed(data_seed):
    with pytest.raises(ValueError, match="data_seed must be"):
        add_noise(np.zeros((4, 3)), 1.0, data_seed)
    with pytest.raises(ValueError, match="seed must be"):
        generate("clusters", n=200, d=30, data_seed=data_seed, snr=1.0)
