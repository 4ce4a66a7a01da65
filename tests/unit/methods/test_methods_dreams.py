"""DREAMS: lambda = 0 is vanilla openTSNE bit for bit (the FFT path:
tests/pipeline/test_method_processes.py); lambda > 0 pulls toward the PCA layout."""

from __future__ import annotations

import numpy as np
import pytest

from drfidelity.registry import METHODS
from drfidelity.methods.dreams import fit_dreams, fit_embedding, reference_layout
from method_helpers import dreams_data

#: the benchmark's DREAMS settings (the wrappers take every one)
SETTINGS = dict(METHODS["DREAMS"].defaults)


@pytest.fixture(scope="module")
def X() -> np.ndarray:
    return dreams_data()


def shape_gap(Y: np.ndarray, R: np.ndarray) -> float:
    """‖Y/‖Y‖ − R/‖R‖‖_F for centred maps: 0 when Y is a positive multiple of R."""
    Y, R = Y - Y.mean(axis=0), R - R.mean(axis=0)
    return float(np.linalg.norm(Y / np.linalg.norm(Y) - R / np.linalg.norm(R)))


def test_lambda_zero_is_vanilla_opentsne_bit_for_bit(X):
    import openTSNE

    R = reference_layout(X)
    vanilla = openTSNE.TSNE(perplexity=30, n_jobs=1, random_state=0, initialization=R,
                            negative_gradient_method="bh").fit(X)
    ours = fit_dreams(X, 0, reg_lambda=0.0, perplexity=30)
    assert np.array_equal(ours, np.asarray(vanilla))


def test_regulariser_pulls_toward_the_reference_layout(X):
    R = reference_layout(X)
    gaps = [shape_gap(fit_dreams(X, 0, reg_lambda=lam, perplexity=30), R) for lam in (0.0, 0.15, 0.5)]
    assert gaps[0] > gaps[1] > gaps[2]


def test_reference_layout_has_the_small_initialisation_scale(X):
    R = reference_layout(X)
    assert R.shape == (300, 2)
    assert np.std(R[:, 0]) == pytest.approx(1e-4, rel=1e-12)


def test_deterministic_across_calls_and_keeps_affinities_intact(X):
    first = fit_embedding(X, 0, **SETTINGS)
    P_before = first.affinities.P.copy()
    second = fit_embedding(X, 0, **SETTINGS)
    assert np.array_equal(np.asarray(first), np.asarray(second))
    assert (first.affinities.P != P_before).nnz == 0


def test_out_of_sample_keeps_the_fitted_map_and_reads_it_after_transform(X):
    """Y_fit is the fitted map as openTSNE's ``transform`` leaves it: shifted so that its
    bounding box is centred (the shift happens inside the first transform call)."""
    from drfidelity.methods.dreams import extend_dreams

    fitted = fit_dreams(X[:290], 0, **SETTINGS)
    Y_fit, Y_add = extend_dreams(X[:290], X[290:], 0, **SETTINGS)
    centred = fitted - (fitted.max(axis=0) + fitted.min(axis=0)) / 2
    np.testing.assert_allclose(Y_fit, centred, rtol=0, atol=1e-12)
    assert not np.array_equal(Y_fit, fitted)
    assert Y_add.shape == (10, 2)
    assert np.all(np.abs(Y_add) <= np.abs(Y_fit).max(axis=0))
