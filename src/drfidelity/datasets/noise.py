"""The SNR noise model: isotropic Gaussian noise at a power ratio to the clean signal.

Signal power s2 is the mean per-column population variance of the clean matrix; at SNR the
noise has standard deviation sigma = sqrt(s2 / SNR) in every coordinate. The noise generator is
keyed by ``(data_seed, round(SNR * 1000))`` only, not by the dataset, so every dataset of one
shape receives the same standard-normal matrix, scaled by its own sigma (as upstream v1.3.0).
"""

from __future__ import annotations

import math

import numpy as np

from drfidelity.core.validation import integer, snr

INFINITE_SNR_KEY = 10**9


def parse_snr(value: object) -> float:
    """SNR as a float in (0, inf] (:func:`drfidelity.core.validation.snr`)."""
    return snr("snr", value)


def signal_variance(clean: np.ndarray) -> float:
    """s2 = mean over columns of the per-column population variance (ddof=0)."""
    return float(np.var(clean, axis=0).mean())


def noise_std(clean: np.ndarray, snr: object) -> float:
    """sigma = sqrt(s2 / SNR); 0 at infinite SNR."""
    return float(np.sqrt(signal_variance(clean) / parse_snr(snr)))


def noise_rng(data_seed: int, snr: object) -> np.random.Generator:
    """PCG64 seeded by SeedSequence([data_seed, key]), key = round(SNR*1000) or 10**9 at inf."""
    data_seed = integer("data_seed", data_seed, 0)
    value = parse_snr(snr)
    key = INFINITE_SNR_KEY if math.isinf(value) else round(value * 1000)
    return np.random.default_rng(np.random.SeedSequence([data_seed, key]))


def add_noise(clean: np.ndarray, snr: object, data_seed: int) -> np.ndarray:
    """X = clean + sigma * Z with Z drawn in one call from :func:`noise_rng`; clean at inf SNR."""
    clean = np.asarray(clean, dtype=np.float64)
    if clean.ndim != 2:
        raise ValueError(f"clean must be a 2-D array, got shape {clean.shape}")
    snr = parse_snr(snr)
    rng = noise_rng(data_seed, snr)
    if math.isinf(snr):
        return clean
    return np.ascontiguousarray(clean + rng.normal(scale=noise_std(clean, snr), size=clean.shape))
