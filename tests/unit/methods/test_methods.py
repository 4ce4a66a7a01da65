"""Method wrappers: shapes, seeding, byte-identical reruns, thread pinning, parameters."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from canary import canary

from drfidelity.core.method import clamp_neighbours, clamp_perplexity
from drfidelity.method_specs.phate import clamp_knn
from drfidelity.method_specs.trimap import clamp_triplet_size
from drfidelity.methods import (METHODS, NotOperable, SkipMethod, embed, embed_extend, get_method,
                                pcc, pymde)
from method_helpers import COMPUTED, LIVING, N, digest, make_data, run, run_fresh


@pytest.fixture(scope="module")
def X() -> np.ndarray:
    return make_data()


def test_registry_follows_canonical_order_and_spec_flags():
    assert list(METHODS) == ["PCA", "Isomap", "PyMDE", "PCC", "t-SNE", "UMAP", "DREAMS", "toorPIA",
                             "PaCMAP", "TriMap", "PHATE"]
    stochastic = {name for name, m in METHODS.items() if m.stochastic}
    assert stochastic == {"PyMDE", "PCC", "t-SNE", "UMAP", "PaCMAP", "TriMap", "PHATE"}
    assert METHODS["t-SNE"].seeds(3) == [0, 1, 2] and METHODS["DREAMS"].seeds(3) == [0]


def test_defaults_are_the_benchmark_settings():
    assert dict(METHODS["t-SNE"].defaults) == {"perplexity": 30}
    assert dict(METHODS["UMAP"].defaults) == {"n_neighbors": 15, "min_dist": 0.1}
    assert dict(METHODS["DREAMS"].defaults) == {"reg_lambda": 0.15, "perplexity": 30}
    assert METHODS["PyMDE"].defaults["max_iter"] == 300
    assert dict(METHODS["PCC"].defaults) == {"num_epochs": 500}
    # the living benchmark's methods: each library's documented defaults
    assert dict(METHODS["PaCMAP"].defaults) == {"n_neighbors": 10, "MN_ratio": 0.5,
                                                "FP_ratio": 2.0}
    assert dict(METHODS["TriMap"].defaults) == {"n_inliers": 12, "n_outliers": 4, "n_random": 3}
    assert dict(METHODS["PHATE"].defaults) == {"knn": 5, "decay": 40, "t": "auto", "gamma": 1}


@pytest.mark.parametrize("name, library, constructor", [
    ("PaCMAP", "pacmap", "PaCMAP"), ("TriMap", "trimap", "TorchTRIMAP"), ("PHATE", "phate", "PHATE")])
def test_living_defaults_are_the_library_defaults(name, library, constructor):
    """The specs write the library's own defaults, so a library upgrade that changes one
    fails here instead of running the benchmark on settings nobody chose."""
    import importlib

    signature = inspect.signature(getattr(importlib.import_module(library), constructor))
    assert {key: signature.parameters[key].default for key in METHODS[name].defaults} \
        == dict(METHODS[name].defaults)


@pytest.mark.parametrize("name", COMPUTED)
def test_wrapper_returns_finite_float64_and_reruns_identically(name, X):
    Y = run(name, X, 0)
    assert Y.shape == (N, 2) and Y.dtype == np.float64 and np.all(np.isfinite(Y))
    assert Y.std(axis=0).min() > 0, "collapsed embedding"
    assert np.array_equal(Y, run(name, X, 0))


@pytest.mark.parametrize("name", [n for n, m in METHODS.items() if m.stochastic])
def test_stochastic_methods_depend_on_the_seed(name, X):
    assert not np.array_equal(run(name, X, 0), run(name, X, 1))


@pytest.mark.slow  # the clean-clone test also reruns every method in fresh processes
def test_fresh_process_gives_byte_identical_coordinates(X):
    """Every method, same seed and params, in a new interpreter: identical bytes."""
    fresh = run_fresh("""
        X = make_data()
        print(json.dumps({name: digest(run(name, X, 0)) for name in COMPUTED}))
    """)
    assert fresh == {name: digest(run(name, X, 0)) for name in COMPUTED}


@pytest.mark.slow
def test_torch_methods_do_not_depend_on_a_preceding_umap():
    """methods.md: numba's OpenMP layer, first used by UMAP, raises the shared thread count
    to the core count unless NUMBA_NUM_THREADS is set. Without that guard, PyMDE and PCC
    must still give the same bytes before and after UMAP ran in the same process (gate);
    that UMAP still raises the count is numba's behaviour (canary)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    out = run_fresh("""
        import torch
        X = make_data(400)
        before = {name: digest(run(name, X, 0)) for name in ("PyMDE", "PCC")}
        run("UMAP", X, 0)
        threads = torch.get_num_threads()
        after = {name: digest(run(name, X, 0)) for name in ("PyMDE", "PCC")}
        print(json.dumps({"before": before, "after": after, "threads": threads}))
    """, env=env)
    if (os.cpu_count() or 1) > 1:
        canary(out["threads"] > 1, "UMAP no longer raises torch's thread count; the guard "
                                   "described in methods.md may be obsolete")
    assert out["after"] == out["before"]


@pytest.mark.parametrize("module, name", [(pymde, "PyMDE"), (pcc, "PCC")])
def test_torch_methods_ignore_the_thread_count_left_by_others(module, name, monkeypatch):
    """2 or 8 torch threads before the call give the same bytes as 1, because the wrapper
    re-pins; the control without re-pinning shows that 2 threads (the core count numba sets
    here) change the result at this size, which is torch's behaviour (a canary, not a gate)."""
    import torch

    X = make_data(400)
    torch.set_num_threads(1)
    pinned = run(name, X, 0)
    try:
        for threads in (2, 8):
            torch.set_num_threads(threads)
            assert np.array_equal(run(name, X, 0), pinned)
            assert torch.get_num_threads() == 1
        monkeypatch.setattr(module, "seeded_torch", seeded_only)
        torch.set_num_threads(2)
        canary(not np.array_equal(run(name, X, 0), pinned),
               f"{name}: 2 torch threads no longer change the bits; the re-pinning in "
               "torch_setup may be unnecessary")
    finally:
        torch.set_num_threads(1)


def seeded_only(seed: int):
    """``seeded_torch`` without the thread re-pinning (control for the test above)."""
    import torch

    torch.manual_seed(seed)
    return torch


@pytest.mark.parametrize("name", [n for n in COMPUTED if METHODS[n].extend is not None])
def test_out_of_sample_shapes(name, X):
    Y_fit, Y_add = embed_extend(get_method(name), X[:180], X[180:], 0)
    assert Y_fit.shape == (180, 2) and Y_add.shape == (20, 2)
    assert np.all(np.isfinite(Y_fit)) and np.all(np.isfinite(Y_add))


def test_pca_transform_places_rows_like_the_fit(X):
    """PCA's map is a fixed projection: a fitted row, re-added, lands on its own spot."""
    Y_fit, Y_add = embed_extend(get_method("PCA"), X, X[:5], 0)
    np.testing.assert_allclose(Y_add, Y_fit[:5], atol=1e-10)


@pytest.mark.parametrize("name, stem", [("PCA", "pca"), ("Isomap", "isomap")])
@pytest.mark.parametrize("config", ["density_snr1", "clusters_snr1"])
def test_embedding_matches_the_reference_bit_for_bit(name, stem, config, reference_dir):
    """The reference's recomputed canonical maps (seed 0); clusters' k-NN graph is disconnected."""
    folder = reference_dir / "canonical" / config
    Y = embed(get_method(name), np.load(folder / "inputs.npz")["X"], 0)
    assert np.array_equal(Y, np.load(folder / f"{stem}.npy"))


@pytest.mark.parametrize("name, stem", [("PCA", "pca"), ("Isomap", "isomap")])
def test_out_of_sample_matches_the_reference_bit_for_bit(name, stem, reference_dir):
    """The reference's recomputed addplot pair (basemap 994 rows, 60 added rows, seed 0)."""
    folder = reference_dir / "addplot" / "outliers_addplot_snr1"
    inputs = np.load(folder / "inputs.npz")
    Y_fit, Y_add = embed_extend(get_method(name), inputs["X_fit"], inputs["X_add"], 0)
    assert np.array_equal(Y_fit, np.load(folder / f"{stem}_basemap.npy"))
    assert np.array_equal(Y_add, np.load(folder / f"{stem}_addplot.npy"))


@pytest.mark.parametrize("name, reason", [
    ("t-SNE", "sklearn TSNE has no out-of-sample transform"),
    ("PyMDE", "pymde optimizes fit coordinates; no transform"),
    ("PCC", "pccdr optimizes fit coordinates; no transform"),
    ("TriMap", "TorchTRIMAP has no out-of-sample transform"),
    ("PHATE", "PHATE's transform of new data is unsupported by its authors (it warns: fit "
              "PHATE to the new data instead)"),
])
def test_not_operable_reasons(name, reason, X):
    with pytest.raises(NotOperable) as caught:
        embed_extend(get_method(name), X[:180], X[180:], 0)
    assert str(caught.value) == reason
    assert isinstance(caught.value, SkipMethod)


def test_unknown_parameter_is_rejected_with_the_known_names(X):
    with pytest.raises(ValueError, match=r"unknown key UMAP.n_neighbours \(did you mean "
                                         r"'n_neighbors'\?\); known in UMAP: min_dist, "
                                         r"n_neighbors"):
        embed(get_method("UMAP"), X, 0, n_neighbours=5)
    with pytest.raises(ValueError, match="unknown key DREAMS.lam"):
        embed_extend(get_method("DREAMS"), X[:180], X[180:], 0, lam=0.2)
    with pytest.raises(ValueError, match="unknown method 'tsne'"):
        get_method("tsne")


@pytest.mark.parametrize("name, params, message", [
    ("t-SNE", {"perplexity": 0}, "perplexity must be > 0.0, got 0.0"),
    ("DREAMS", {"perplexity": float("nan")}, "perplexity must be finite, got nan"),
    ("UMAP", {"n_neighbors": 2.5}, r"n_neighbors must be an integer, got 2.5 \(float\)"),
    ("UMAP", {"n_neighbors": -3}, "n_neighbors must be >= 2, got -3"),
    ("UMAP", {"min_dist": -0.1}, "min_dist must be >= 0.0, got -0.1"),
    ("DREAMS", {"reg_lambda": 1.5}, "reg_lambda must be <= 1.0, got 1.5"),
    ("PCC", {"num_epochs": 0}, "num_epochs must be >= 1, got 0"),
    ("PyMDE", {"max_iter": "300"}, "max_iter must be an integer, got '300'"),
    ("PyMDE", {"device": "gpu"}, "device must be one of 'cpu', 'cuda', got 'gpu'"),
    ("Isomap", {"n_neighbors": True}, "n_neighbors must be an integer, got True"),
    ("PaCMAP", {"MN_ratio": -0.5}, "MN_ratio must be >= 0.0, got -0.5"),
    ("TriMap", {"n_random": -1}, "n_random must be >= 0, got -1"),
    ("PHATE", {"t": "fast"}, "t must be an integer, got 'fast'"),
    ("PHATE", {"gamma": 2}, "gamma must be <= 1.0, got 2"),
])
def test_bad_hyper_parameter_values_are_rejected(name, params, message, X):
    with pytest.raises(ValueError, match=message):
        embed(get_method(name), X, 0, **params)


def test_bad_inputs_are_rejected(X):
    pca = get_method("PCA")
    with pytest.raises(ValueError, match="X must hold finite numbers"):
        embed(pca, np.where(np.arange(N)[:, None] == 3, np.nan, X), 0)
    with pytest.raises(ValueError, match=r"X must be an \(N, D\) matrix"):
        embed(pca, X[0], 0)
    with pytest.raises(ValueError, match="X_add has 3 columns but X_fit has 20"):
        embed_extend(pca, X, X[:, :3], 0)


@pytest.mark.parametrize("name", list(METHODS))
def test_wrapper_takes_exactly_the_registered_settings(name):
    """A method's settings are written once, in the registry: its wrapper's fit (and extend,
    exactly when it is not declared not operable) takes them as keyword-only arguments without
    defaults of its own."""
    method = METHODS[name]
    functions = [method.fit] + ([] if method.not_operable else [method.extend])
    assert (method.extend is None) == bool(method.not_operable)
    for function in functions:
        keywords = {p.name: p.default for p in inspect.signature(function).parameters.values()
                    if p.kind is inspect.Parameter.KEYWORD_ONLY}
        assert set(keywords) == set(method.defaults), function.__name__
        assert all(d is inspect.Parameter.empty for d in keywords.values()), function.__name__


def test_importing_the_registry_loads_no_wrapper():
    code = ("import sys; import drfidelity.methods as m; m.METHODS['UMAP'].settings({}); "
            "print(sorted(k for k in sys.modules if k.startswith('drfidelity.methods.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_clamps_keep_small_inputs_valid():
    assert clamp_perplexity(30, 1000) == 30
    assert clamp_perplexity(30, 50) == 16       # (50 - 1) // 3
    assert clamp_perplexity(30, 10) == 5        # floor of 5
    assert clamp_neighbours(15, 1000) == 15
    assert clamp_neighbours(15, 10) == 9
    assert clamp_neighbours(15, 2) == 2
    assert clamp_triplet_size(12, 1000) == 12
    assert clamp_triplet_size(12, 20) == 9      # (20 - 2) // 2: 9 inliers + 9 outliers < 20
    assert clamp_triplet_size(4, 3) == 1        # floor of 1
    assert clamp_knn(5, 1000) == 5
    assert clamp_knn(5, 6) == 4                 # N - 2, what graphtools would use
    assert clamp_knn(5, 2) == 1


@pytest.mark.parametrize("name", LIVING)
def test_living_methods_run_clamped_on_tiny_inputs(name):
    """Twelve points: the clamped neighbourhoods keep each library's own checks satisfied."""
    Y = embed(get_method(name), make_data(12), 0)
    assert Y.shape == (12, 2) and np.all(np.isfinite(Y))


def test_checking_params_loads_no_method_library():
    """Every spec is read where params are checked (each stage that lists methods): that must
    stay cheap, so a spec module imports no method's library, nor its wrapper."""
    code = ("import sys; from drfidelity.core.params import load_params; "
            "from drfidelity.registry import NAMES; load_params('params.yaml', NAMES); "
            "print(sorted(k for k in sys.modules if k.split('.')[0] in ('torch', 'umap', "
            "'sklearn', 'pymde', 'pcc', 'openTSNE', 'toorpia', 'pacmap', 'trimap', 'phate', "
            "'faiss', 'graphtools') or k.startswith('drfidelity.methods.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[3]).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name, key", [("t-SNE", "tsne"), ("PyMDE", "pymde"), ("toorPIA", "toorpia"),
                                       ("PCA", "pca"), ("PaCMAP", "pacmap"), ("TriMap", "trimap"),
                                       ("PHATE", "phate")])
def test_a_method_is_found_by_its_name(name, key):
    """The rule from a name to its modules (no list needed): lower case, letters and digits."""
    from drfidelity.core.method import spec_module, wrapper_module
    from drfidelity.method_specs import spec

    assert spec_module(name) == f"drfidelity.method_specs.{key}"
    assert wrapper_module(name) == f"drfidelity.methods.{key}"
    assert spec(name) is METHODS[name]


def test_an_unknown_or_reserved_name_is_refused():
    from drfidelity.core.method import method_key
    from drfidelity.method_specs import spec

    with pytest.raises(ValueError, match="unknown method 'Spectral'"):
        spec("Spectral")
    with pytest.raises(ValueError, match="unknown method 'umap'"):   # UMAP's module, not its name
        spec("umap")
    for bad in ("base", "External", "--", "3D"):
        with pytest.raises(ValueError, match="is no method name"):
            method_key(bad)


def test_trimap_weights_take_the_ieee_root_inside_the_fit_only():
    """At temperature 0.5 TriMap's tempered log is (sqrt(x) - 1) / 0.5 with numpy's correctly
    rounded root during the fit; other temperatures, and the library after the fit, are
    untouched (the vendor-free golden of test_executor_paths is the end-to-end check)."""
    import torch
    import trimap.torch_trimap as torch_trimap

    from drfidelity.methods.torch_setup import use_ieee_square_root
    from drfidelity.methods.trimap import ieee_tempered_log

    use_ieee_square_root(torch)
    library_log = torch_trimap.tempered_log
    values = np.random.default_rng(0).uniform(1.0, 50.0, 100_000).astype(np.float32)
    x = torch.from_numpy(values)
    with ieee_tempered_log(torch_trimap):
        weights = torch_trimap.tempered_log(x, 0.5).numpy()
        assert torch.equal(torch_trimap.tempered_log(x, 0.25), library_log(x, 0.25))
    expected = (np.sqrt(values) - np.float32(1.0)) / np.float32(0.5)
    assert weights.dtype == np.float32 and weights.tobytes() == expected.tobytes()
    assert torch_trimap.tempered_log is library_log
