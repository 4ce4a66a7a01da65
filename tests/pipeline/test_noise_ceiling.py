"""The noise ceiling: each dataset's noise-free geometry scored as a map against its ambient
data, checked against scipy on hand-made data and against the committed results."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.spatial.distance import pdist
from scipy.stats import spearmanr

from drfidelity.metrics import Reference
from drfidelity.metrics.readouts import noise_ceiling
from pipeline_helpers import REPO


def test_the_ceiling_is_the_truths_score_against_the_ambient_data():
    rng = np.random.default_rng(3)
    truth = rng.normal(size=(120, 6))
    X = truth + 0.5 * rng.normal(size=truth.shape)
    arrays = {"X": X, "X_truth": truth}
    ceiling = noise_ceiling(Reference(X, truth=truth), arrays)
    expected = spearmanr(pdist(X), pdist(truth)).statistic
    assert abs(ceiling["full_shepard"] - expected) < 1e-12
    assert not [key for key in ceiling if key.endswith("__vs_truth")]  # 1 by construction
    assert noise_ceiling(Reference(X), {"X": X}) == {}  # no truth, no ceiling


def test_the_committed_ceilings_are_the_near_band_correlations_of_the_data():
    """The near-band correlation of ambient and noise-free distances, per dataset, as the
    review that asked for the ceiling measured it (0.128, 0.115, 0.810, 0.473, 0.375)."""
    ceiling = pd.read_csv(REPO / "results" / "noise_ceiling.csv").set_index("dataset")
    near = ceiling["shepard_near__vs_ambient"].round(3).to_dict()
    assert near == {"density": 0.128, "clusters": 0.115, "transition": 0.81,
                    "outliers": 0.473, "populations": 0.375}
