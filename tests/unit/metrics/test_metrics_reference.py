"""Exactness against the v1.3.0 oracle: every metric value of every published configuration.

For each configuration folder the engine scores the folder's toorPIA, PCA and Isomap embeddings
and must reproduce ``verification.csv``: the ``recomputed`` value (upstream code on these exact
arrays) for all three methods, and the ``published`` value for toorPIA, to 1e-9 (angles in
degrees to 1e-6). The SNR=inf canonical folders have no published rows and are checked against
``recomputed_metrics_local.csv``. The emitted key set must equal the set of metrics v1.3.0 emits.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from drfidelity.metrics import Reference

PUBLISHED = (
    [f"canonical/{d}_snr1"
     for d in ("density", "clusters", "transition", "outliers", "populations")]
    + [f"sweeps/outliers_sweep_of{f}" for f in ("1.5", "2", "3", "5", "8")]
    + [f"sweeps/populations_sweep_mf{m}" for m in ("0.5", "0.25", "0.1", "0.05")]
    + [f"noise_dims/noise_dims_dim{d}" for d in (6, 10, 20, 40, 80, 100, 200, 250, 300, 400, 768)]
)
RECOMPUTED_ONLY = ["canonical/density_snrinf", "canonical/clusters_snrinf"]
METHODS = {"toorPIA": "toorpia", "PCA": "pca", "Isomap": "isomap"}

# Columns of the noise-dims tables computed by the label-separation probe, not by this engine.
NOT_ENGINE_COLUMNS = {"knn_acc_k10", "silhouette_2d"}

# (folder, method, metric) -> why the value cannot be reproduced exactly.
EXEMPT = {
    ("sweeps/outliers_sweep_of8", "toorPIA", f"cont_k{k}"): (
        "row 339 of this toorPIA map has exactly tied 2-D distances among its nearest neighbours; "
        "v1.3.0 ranks them with sklearn's unstable argsort on dot-product distances, the engine "
        "breaks the tie by index (quality.md), so one lost neighbour's rank differs by one")
    for k in (5, 15)
}

ABS_TOL = 1e-9
ANGLE_TOL = 1e-6


def _tolerance(metric: str) -> float:
    return ANGLE_TOL if "angle" in metric else ABS_TOL


def _same(ours: float, expected: float, tol: float) -> bool:
    if math.isnan(expected) or math.isnan(ours):
        return math.isnan(expected) and math.isnan(ours)
    if math.isinf(expected) or math.isinf(ours):
        return ours == expected
    return abs(ours - expected) <= tol


def _reference(folder) -> Reference:
    data = np.load(folder / "inputs.npz")
    X = data["X"]
    if "X_truth" in data:
        truth = data["X_truth"]
    elif folder.parent.name == "noise_dims":
        truth = X[:, :3]  # the three signal columns
    else:
        truth = X  # noise-free configurations: the truth is X itself
    options = {key: data[key] for key in ("labels", "outlier_idx", "outlier_dir", "population")
               if key in data}
    return Reference(X, truth=truth, per_point=folder.parent.name == "canonical", **options)


def _rows(folder):
    reference = _reference(folder)
    return {method: reference.score(np.load(folder / f"{stem}.npy"))
            for method, stem in METHODS.items()}


@pytest.mark.parametrize("name", PUBLISHED)
def test_verification_values(reference_dir, name):
    folder = reference_dir / name
    table = pd.read_csv(folder / "verification.csv")
    rows = _rows(folder)
    failures, checked = [], 0
    for method, row in rows.items():
        expected = table[table["method"].str.startswith(method)]
        emitted = expected[expected["status"] != "not_emitted_published_nan"]
        assert set(row) == set(emitted["metric"]) - NOT_ENGINE_COLUMNS, (method, name)
        for record in emitted.itertuples():
            if record.metric in NOT_ENGINE_COLUMNS or (name, method, record.metric) in EXEMPT:
                continue
            tol = _tolerance(record.metric)
            ours = row[record.metric]
            targets = [("recomputed", record.recomputed)]
            if method == "toorPIA" and record.status in ("exact", "diff"):
                targets.append(("published", record.published))
            for label, value in targets:
                checked += 1
                if not _same(ours, float(value), tol):
                    failures.append((method, record.metric, label, ours, value))
    assert not failures, failures
    assert checked > 100


@pytest.mark.parametrize("name", RECOMPUTED_ONLY)
def test_recomputed_snr_inf(reference_dir, name):
    folder = reference_dir / name
    table = pd.read_csv(folder / "recomputed_metrics_local.csv")
    for method, row in _rows(folder).items():
        expected = table[table["method"].str.startswith(method)].iloc[0]
        assert list(row) == [c for c in table.columns if c in row]
        missing = [c for c in table.columns[6:] if c not in row]
        assert not missing, missing
        bad = [(k, v, expected[k]) for k, v in row.items()
               if not _same(v, float(expected[k]), _tolerance(k))]
        assert not bad, (method, bad)


def test_exemptions_are_real(reference_dir):
    """Each exempted value does differ (otherwise the exemption must go)."""
    folder = reference_dir / "sweeps/outliers_sweep_of8"
    table = pd.read_csv(folder / "verification.csv").set_index(["method", "metric"])
    row = _rows(folder)["toorPIA"]
    for (_, method, metric) in EXEMPT:
        expected = table.loc[(method, metric), "recomputed"]
        assert 0 < abs(row[metric] - expected) < 1e-6
