"""The arrays each driver feeds to the methods and metrics, as in the reference inputs.npz.

:func:`generate` builds the input of one (dataset, N, D, data seed, SNR) configuration;
:func:`addplot_inputs` the basemap and added points of the out-of-sample test.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from drfidelity.core.validation import integer
from .noise import add_noise, noise_std, parse_snr
from .outliers import OUTLIER_LABEL, make_anchored_addplot, make_outliers
from .registry import dataset_spec, make_dataset

#: Input arrays that the metrics take as ground truth, by keyword of ``metrics.Reference``.
GROUND_TRUTH = {"truth": "X_truth", "labels": "labels", "outlier_idx": "outlier_idx",
                "outlier_dir": "outlier_dir", "population": "population"}
#: Third SeedSequence word of the added points' noise (their own realisation).
ADDPLOT_NOISE_KEY = 777


def generate(name: str, *, n: int, d: int, data_seed: int, snr: Any,
             params: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """One synthetic dataset with known geometry, as the benchmark's stages use it.

    Parameters
    ----------
    name : str
        A key of :data:`drfidelity.datasets.DATASETS` (density, clusters, transition, outliers,
        populations, random_walk, noise_dims).
    n, d : int
        Points and ambient dimension.
    data_seed : int
        Seed of the generator and of the noise draw.
    snr : float or "inf"
        Signal-to-noise power ratio per coordinate; ``inf`` adds no noise. The probes
        (random_walk, noise_dims: ``DatasetSpec.noised`` False) are never noised, so only an
        infinite ``snr`` is accepted for them.
    params : mapping, optional
        The generator's knobs (``drfidelity.datasets.registry.knobs(name)``), defaults
        otherwise.

    Returns
    -------
    dict of str to numpy.ndarray
        ``X`` (clean + noise, (n, d)), ``X_truth`` (clean), ``labels`` and the dataset's own
        ground-truth arrays (``DatasetSpec.extras``: e.g. ``outlier_idx``, ``population``).

    Raises
    ------
    ValueError
        Naming the argument or knob that is out of range.
    """
    snr = parse_snr(snr)
    spec = dataset_spec(name)
    if not spec.noised and not math.isinf(snr):
        raise ValueError(f"snr must be inf for {name!r} (this probe is never noised), got {snr}")
    params = dict(params or {})
    misplaced = sorted({"n", "d", "seed", "data_seed", "snr"} & set(params))
    if misplaced:
        raise ValueError(f"params must hold only dataset knobs; pass {misplaced} as arguments")
    dataset = make_dataset(name, n=n, d=d, seed=data_seed, **params)
    arrays = {"X": add_noise(dataset.clean, snr, data_seed), "X_truth": dataset.truth,
              "labels": dataset.labels}
    arrays.update((key, dataset.extras[key]) for key in spec.extras)
    return arrays


def addplot_inputs(*, n: int = 1000, d: int = 768, data_seed: int = 0, snr: Any = 1.0,
                   n_add_bulk: int = 50, deviation: float = 3.0, pair_offset: float = 0.1,
                   extra_dims: int = 8) -> dict[str, np.ndarray]:
    """Basemap and added points of the out-of-sample test.

    The basemap is the outliers input at this SNR without its outlier rows (``X_fit``, rows
    ``fit_rows_in_outliers_snr1`` of it). ``X_add`` stacks the 2K cluster-anchored anomalies
    and ``n_add_bulk`` fresh bulk points, noised with the basemap's sigma from
    SeedSequence([data_seed, round(SNR*1000), 777]).
    """
    snr = parse_snr(snr)
    data_seed = integer("data_seed", data_seed, 0)
    base = make_outliers(n, d, data_seed, n_add_bulk=n_add_bulk, add_per_direction=0)
    anchored = make_anchored_addplot(base, deviation=deviation, pair_offset=pair_offset,
                                     extra_dims=extra_dims, seed=data_seed)
    x_fit = add_noise(base.clean, snr, data_seed)
    x_add = np.vstack([anchored["clean"], base.extras["addplot_clean"]])
    if not math.isinf(snr):
        rng = np.random.default_rng(
            np.random.SeedSequence([data_seed, round(snr * 1000), ADDPLOT_NOISE_KEY]))
        x_add = x_add + rng.normal(scale=noise_std(base.clean, snr), size=x_add.shape)
    fit_rows = np.flatnonzero(base.labels != OUTLIER_LABEL)
    return {"X_fit": np.ascontiguousarray(x_fit[fit_rows]), "labels_fit": base.labels[fit_rows],
            "fit_rows_in_outliers_snr1": fit_rows, "X_add": np.ascontiguousarray(x_add),
            "add_anchor": anchored["anchor"], "add_radii": anchored["radii"],
            "add_bulk_labels": base.extras["addplot_labels"]}
