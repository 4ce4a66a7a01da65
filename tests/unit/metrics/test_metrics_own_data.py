"""The metric library on people's own data (issue 22): never wrong silently, scikit-learn-shaped.

The first test pins the engine's output on a realistic input to the bytes the code gave before
these checks were added (exact numerics), so the pipeline's committed scores cannot move.
"""

from __future__ import annotations

import hashlib
import json
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist, squareform

from drfidelity.metrics import (Reference, continuity, coranking_matrix, neighbourhood_scores,
                                recall_at_k, score, trustworthiness)
from drfidelity.metrics.cli import run

# sha256 of "column hex-value" lines of Reference(...).score(Y) on :func:`_realistic`, computed
# by main at 1d49695 (before issue 22), exact numerics; a few values spelled out
BASELINE_DIGEST = "f291b61658b2e098cafb8543c0b19c7e88affbe654fc4c846391b11d9f8b4776"
BASELINE_VALUES = {
    "full_shepard": "0x1.574646271066bp-1", "full_stress": "0x1.9443df4721798p-2",
    "pp_shepard_p20__vs_truth": "0x1.12002283e87cfp-3", "tight_ratio_2d": "0x1.1a319ecf983a3p-2",
    "outlier_shepard__vs_ambient": "-0x1.fe2d0de71a0e1p-3",
    "minority_shepard__vs_ambient": "0x1.4f5f148ea0d9dp-1",
    "recall_k5": "0x1.fb461ac812e7ap-4", "recall_k15": "0x1.369d0369d036ap-2",
    "recall_k30": "0x1.0433766a99dcdp-1", "trust_k5": "0x1.c540ba720d874p-1",
    "trust_k15": "0x1.ccfa9a84b7338p-1", "trust_k30": "0x1.d7d8fb3beb998p-1",
    "cont_k5": "0x1.d1b44e781ab4ep-1", "cont_k15": "0x1.d9c57d3bf572ep-1",
    "cont_k30": "0x1.e676398f47524p-1"}
RANK_FAMILIES = ("shepard", "trust", "cont", "recall")


def _realistic():
    """Four noisy clusters in 30-D with unlabelled points, outliers, a minority and a 2-D map
    with one exact tie: every block of the engine runs."""
    rng = np.random.default_rng(2026)
    n, dims = 260, 30
    labels = np.repeat(np.arange(4), n // 4)
    labels[:10] = -1
    centres = rng.normal(scale=4.0, size=(4, dims))
    truth = centres[np.maximum(labels, 0)] + rng.normal(size=(n, dims))
    X = truth + rng.normal(scale=0.5, size=(n, dims))
    X[:6] *= 3.0
    population = (np.arange(n) % 5 == 0).astype(int)
    Y = X[:, :2] + rng.normal(scale=0.3, size=(n, 2))
    Y[7] = Y[8]
    inputs = dict(truth=truth, labels=labels, outlier_idx=np.arange(6),
                  outlier_dir=np.array([0, 0, 1, 1, 2, 2]), population=population)
    return X, Y, inputs


def _hex(row: dict) -> dict:
    return {key: float(value).hex() for key, value in row.items()}


def _same(a: dict, b: dict) -> bool:
    return list(a) == list(b) and _hex(a) == _hex(b)


def _data(n=80, seed=0, dims=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dims))
    return X, X[:, :2] + rng.normal(scale=0.3, size=(n, 2))


# ------------------------------------------------------------ the pipeline's bytes do not move

def test_engine_output_is_byte_identical_to_before():
    X, Y, inputs = _realistic()
    row = _hex(Reference(X, **inputs).score(Y))
    for key, value in BASELINE_VALUES.items():
        assert row[key] == value, key
    lines = "\n".join(f"{key} {value}" for key, value in row.items())
    assert hashlib.sha256(lines.encode()).hexdigest() == BASELINE_DIGEST


def test_neighbourhood_scores_use_the_names_and_values_of_score():
    X, Y, _ = _realistic()
    values = neighbourhood_scores(X, Y)
    assert {key: float(v).hex() for key, v in values.items()} == {
        key: value for key, value in BASELINE_VALUES.items()
        if key.startswith(("recall_k", "trust_k", "cont_k"))}
    assert list(values) == [f"{f}_k{k}" for f in ("recall", "trust", "cont") for k in (5, 15, 30)]


# ---------------------------------------------------------------------- the three bad probes

def test_complex_input_is_refused_by_name():
    X, Y = _data()
    with pytest.raises(ValueError, match="X must hold real numbers, got complex"):
        score(X + 1j, Y)
    with pytest.raises(ValueError, match="X must hold real numbers"):
        trustworthiness(X.astype(complex), Y, 5)
    with pytest.raises(ValueError, match="truth must hold real numbers"):
        Reference(X, truth=X + 0j)
    with pytest.raises(ValueError, match="Y must hold real numbers"):
        score(X, Y + 1j)


@pytest.mark.parametrize("metric, spoil", [("cosine", lambda X: X.__setitem__(3, 0.0)),
                                           ("correlation", lambda X: X.__setitem__(3, 2.5))])
def test_undefined_distances_are_refused_before_any_kernel(metric, spoil):
    X, Y = _data()
    spoil(X)
    for call in (lambda: score(X, Y, metric=metric),
                 lambda: neighbourhood_scores(X, Y, metric=metric),
                 lambda: coranking_matrix(X, Y, metric=metric)):
        with pytest.raises(ValueError, match=f"X: the {metric} distance is undefined .* row 3"):
            call()


def test_any_non_finite_distance_is_refused_naming_a_pair():
    """A distance no row or column check foresees: jensenshannon of a row with a negative
    entry (not a distribution) is infinite for every pair with that row."""
    X, Y = _data()
    X = np.abs(X)
    X[2, 1] = -0.5
    for call in (lambda: score(X, Y, metric="jensenshannon"),
                 lambda: trustworthiness(X, Y, 5, metric="jensenshannon")):
        with pytest.raises(ValueError, match=r"jensenshannon distance between points \d+ and 2 "
                                             r"is inf \(not finite\)"):
            call()


@pytest.mark.parametrize("factor", [2.0 ** 700, 2.0 ** -700])
def test_power_of_two_scaling_changes_no_bit(factor):
    """Rescaling is exact, so a map (or data) scaled by a power of two scores identically."""
    X, Y, inputs = _realistic()
    inputs["truth"] = inputs["truth"] * factor
    row = Reference(X, **inputs).score(Y)
    assert _same(Reference(X * factor, **inputs).score(Y / factor), row)
    assert _same(neighbourhood_scores(X * factor, Y / factor), neighbourhood_scores(X, Y))


@pytest.mark.parametrize("x_factor, y_factor", [(1.0, 1e200), (1e-200, 1.0), (1e200, 1e-200)])
def test_huge_and_tiny_coordinates_give_the_unscaled_ranks(x_factor, y_factor):
    X, Y, inputs = _realistic()
    reference = Reference(X, **inputs).score(Y)
    scaled = Reference(X * x_factor, **{**inputs, "truth": inputs["truth"] * x_factor}
                       ).score(Y * y_factor)
    assert list(scaled) == list(reference)
    for key, value in reference.items():
        if key.startswith(RANK_FAMILIES) or "shepard" in key:
            assert scaled[key] == value or (np.isnan(value) and np.isnan(scaled[key])), key
        elif np.isfinite(value):
            assert scaled[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


def _rank_columns(row: dict) -> dict:
    return {key: value for key, value in row.items() if key.startswith(RANK_FAMILIES)
            or "shepard" in key}


@pytest.mark.parametrize("space", ["X", "Y"])
def test_one_far_point_changes_no_rank(space):
    """One row at 1e200, 1e150 or 1e100 among points near 1: the same ranks (its squares
    overflow, and after the global rescale the others' squares underflow, unless each pair
    close to 0 is recomputed on its own scale)."""
    X, Y, inputs = _realistic()
    rows = {}
    for far in (1e200, 1e150, 1e100):
        Xf, Yf = X.copy(), Y.copy()
        (Xf if space == "X" else Yf)[0] = far
        rows[far] = (_rank_columns(Reference(Xf).score(Yf)), neighbourhood_scores(Xf, Yf),
                     coranking_matrix(Xf, Yf))
    for far in (1e200, 1e150):
        assert _same(rows[far][0], rows[1e100][0]) and rows[far][1] == rows[1e100][1]
        assert np.array_equal(rows[far][2], rows[1e100][2])


@pytest.mark.parametrize("metric", ["euclidean", "cityblock", "chebyshev", "seuclidean",
                                    "minkowski", "mahalanobis"])
def test_points_a_hair_apart_keep_their_distances(metric):
    """Two points 1e-170 and 3e-170 from a third are that far apart, in order, not both 0
    (their squares underflow): the pair is recomputed on its difference scaled by a power of
    two, which gives the value float64 would with no exponent limit."""
    from drfidelity.metrics import distances

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    X[0] = 0.0
    X[1] = 2.0 ** -560 * np.array([1.0, 2.0, 0.0])
    X[2] = 2.0 ** -560 * np.array([3.0, 6.0, 0.5])
    options = distances.metric_options(X, metric)
    exact = [np.ldexp(cdist(2.0 ** 560 * (X[j] - X[0])[None], np.zeros((1, 3)), metric,
                            **options)[0, 0], -560) for j in (1, 2)]
    d = squareform(distances.condensed_distances(X, metric))
    assert d[0, 1] == exact[0] > 0 and d[0, 2] == exact[1] > d[0, 1]
    rows = distances.FeatureRows(X, metric)(np.array([0, 1]))
    assert np.array_equal(rows, d[[0, 1]])
    plain = squareform(pdist(X, metric))
    plain[[0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1]] = d[[0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1]]
    assert np.array_equal(d, plain)  # every other pair: pdist's bytes


def test_points_closer_than_float64_can_tell_are_refused():
    X = np.random.default_rng(6).normal(size=(30, 3))
    X[0], X[1] = 0.0, 0.0  # the same point twice: allowed
    Y = X[:, :2] + np.arange(30)[:, None]
    trustworthiness(X, Y, 5)
    X[1, 2] = 2.0 ** -1070  # a subnormal apart: no float64 tells its rank
    with pytest.raises(ValueError, match="points 0 and 1 are closer than float64 can tell"):
        trustworthiness(X, Y, 5)
    X[1, 2] = 2.0 ** -560  # squared: 2**-1120
    trustworthiness(X, Y, 5)
    with pytest.raises(ValueError, match="points 0 and 1 .* sqeuclidean distance is below"):
        trustworthiness(X, Y, 5, metric="sqeuclidean")


def test_cosine_ignores_a_rows_length():
    """A row 2**-600 (1, ..., 1) scores bit for bit as (1, ..., 1) under cosine and correlation
    (its squared norm underflows to 0 unless the row is rescaled first); 1e-170 (1, ..., 1) as
    3 (1, ..., 1) does: the same ranks, values within rounding."""
    X, Y, _ = _realistic()
    X = np.abs(X)
    X[0, ::2] = 2.0
    for metric in ("cosine", "correlation"):
        rows = {}
        for factor in (1.0, 2.0 ** -600, 2.0 ** 600, 1e-170, 3.0):
            Xf = X.copy()
            Xf[0] *= factor
            rows[factor] = Reference(Xf, metric=metric).score(Y)
            assert neighbourhood_scores(Xf, Y, metric=metric) == \
                neighbourhood_scores(X, Y, metric=metric)
        assert _same(rows[2.0 ** -600], rows[1.0]) and _same(rows[2.0 ** 600], rows[1.0])
        for factor in (1e-170, 3.0):
            assert _same(_rank_columns(rows[factor]), _rank_columns(rows[1.0]))
            for key, value in rows[1.0].items():
                assert rows[factor][key] == pytest.approx(value, rel=1e-12, nan_ok=True), key


def test_a_distance_matrix_passed_as_features_warns():
    X, Y = _data()
    D = squareform(pdist(X))
    with pytest.warns(UserWarning, match="looks like a distance matrix.*metric='precomputed'"):
        score(D, Y)
    with pytest.warns(UserWarning, match="looks like a distance matrix"):
        trustworthiness(D, Y, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _same(score(D, Y, metric="precomputed"), score(X, Y))
        score(np.abs(np.random.default_rng(1).normal(size=(80, 80))), Y)  # not symmetric


# ------------------------------------------------------------------ scikit-learn-shaped API

def test_n_neighbors_is_k():
    X, Y = _data()
    for function in (trustworthiness, continuity, recall_at_k):
        assert function(X, Y, n_neighbors=7) == function(X, Y, 7) == function(X, Y, k=7)
        assert function(X, Y) == function(X, Y, 5)  # scikit-learn's default
        with pytest.raises(ValueError, match="give k or n_neighbors"):
            function(X, Y, 5, n_neighbors=7)
    assert neighbourhood_scores(X, Y, n_neighbors=(3, 9)) == neighbourhood_scores(X, Y, k=(3, 9))


@pytest.mark.parametrize("dims", [1, 3])
def test_maps_of_any_dimension_score(dims):
    from sklearn.manifold import trustworthiness as sklearn_trustworthiness

    X, _ = _data(dims=8)
    Y = X[:, :dims] + np.random.default_rng(3).normal(scale=0.2, size=(X.shape[0], dims))
    row = score(X, Y)
    assert np.isfinite(row["full_shepard"]) and np.isfinite(row["trust_k15"])
    assert row["trust_k5"] == pytest.approx(sklearn_trustworthiness(X, Y, n_neighbors=5),
                                            abs=1e-12)
    assert neighbourhood_scores(X, Y)["trust_k15"] == row["trust_k15"]
    assert coranking_matrix(X, Y).sum() == X.shape[0] * (X.shape[0] - 1)


def test_labels_of_any_hashable_type():
    X, _, inputs = _realistic()
    labels = inputs["labels"]
    names = np.array(["north", "south", "east", "west"])[labels % 4]  # every point labelled
    as_codes = Reference(X, labels=np.unique(names, return_inverse=True)[1])
    Y = X[:, :2]
    assert _same(Reference(X, labels=names).score(Y), as_codes.score(Y))
    assert _same(Reference(X, labels=list(names)).score(Y), as_codes.score(Y))
    tuples = [(int(label % 2), int(label // 2)) for label in labels % 4]
    assert np.isfinite(score(X, Y, labels=tuples)["tight_ratio_2d"])
    with pytest.raises(ValueError, match="labels must have one label per point"):
        score(X, Y, labels=names[:-1])


# -------------------------------------------------------------------------- the command line

def _save(tmp_path, X, Y, name="data.npz", **arrays):
    np.savez(tmp_path / name, X=X, **arrays)
    np.save(tmp_path / "map.npy", Y)


def test_cli_metric_precomputed_equals_raw_x(tmp_path, capsys):
    X, Y = _data()
    _save(tmp_path, X, Y[:, :1].repeat(3, axis=1) + Y[:, 1:], labels=np.repeat([0, 1], 40))
    np.savez(tmp_path / "D.npz", X=squareform(pdist(X)), labels=np.repeat([0, 1], 40))
    assert run(tmp_path / "data.npz", tmp_path / "map.npy", tmp_path / "raw.json") == 0
    assert run(tmp_path / "D.npz", tmp_path / "map.npy", tmp_path / "pre.json",
               metric="precomputed") == 0
    assert (tmp_path / "raw.json").read_bytes() == (tmp_path / "pre.json").read_bytes()
    assert run(tmp_path / "D.npz", tmp_path / "map.npy", None) == 0  # scored as features: warns
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("drfidelity score: warning: X is square")
    assert "--metric precomputed" in err[0]
    assert run(tmp_path / "data.npz", tmp_path / "map.npy", None, metric="cosin") == 2
    assert "(did you mean 'cosine'?)" in capsys.readouterr().err


def test_cli_metric_option(tmp_path):
    import subprocess
    import sys

    X, Y = _data()
    _save(tmp_path, X, Y)
    np.savez(tmp_path / "D.npz", X=squareform(pdist(X, "cityblock")))
    rows = [subprocess.run([sys.executable, "-m", "drfidelity", "score", *args],
                           capture_output=True, text=True, timeout=300, check=True).stdout
            for args in ([tmp_path / "data.npz", tmp_path / "map.npy", "--metric", "cityblock"],
                         ["--metric", "precomputed", tmp_path / "D.npz", tmp_path / "map.npy"])]
    assert rows[0] == rows[1] and json.loads(rows[0])["trust_k5"] is not None


def _forged_npy(path, shape, payload=b"\0" * 128):
    from numpy.lib import format as npy

    with open(path, "wb") as handle:
        npy.write_array_header_1_0(handle, {"descr": "<f8", "fortran_order": False,
                                            "shape": shape})
        handle.write(payload)


def test_oversized_headers_are_refused_naming_the_file(tmp_path, capsys):
    import zipfile

    X, Y = _data()
    _save(tmp_path, X, Y)
    big = tmp_path / "big.npy"
    _forged_npy(big, (200_000_000_000,))
    assert run(tmp_path / "data.npz", big, None) == 2
    err = capsys.readouterr().err
    assert str(big) in err and "shape (200000000000,)" in err and "1.49e+03 GiB" in err
    forged_member = tmp_path / "member.npy"
    _forged_npy(forged_member, (100_000, 100_000))
    archive = tmp_path / "forged.npz"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.write(forged_member, "X.npy")
    assert run(archive, tmp_path / "map.npy", None) == 2
    err = capsys.readouterr().err
    assert f"{archive} member X.npy: its header announces" in err and "74.5 GiB" in err


def test_json_is_written_atomically_and_a_failure_names_the_path(tmp_path, capsys, monkeypatch):
    from drfidelity.core import storage

    X, Y = _data()
    _save(tmp_path, X, Y)
    out = tmp_path / "out" / "row.json"
    out.parent.mkdir()

    def full_disk(_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage.os, "fsync", full_disk)
    assert run(tmp_path / "data.npz", tmp_path / "map.npy", out) == 2
    err = capsys.readouterr().err
    assert f"--json {out}: cannot write it (No space left on device)" in err
    assert list(out.parent.iterdir()) == []  # no 0-byte file, no temporary left


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    from drfidelity import cli

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_main", interrupted)
    assert cli.main(["env"]) == 130
    assert capsys.readouterr().err == "drfidelity: interrupted\n"


# ------------------------------------------------------------------------ past one machine

@pytest.mark.parametrize("metric", ["euclidean", "cityblock", "cosine", "seuclidean",
                                    "mahalanobis"])
def test_row_blocks_give_the_all_pairs_values(metric, monkeypatch):
    """Rows computed block by block in column tiles equal pdist's (seuclidean's variances and
    mahalanobis' covariance come from all of X, not from each block)."""
    from drfidelity.metrics import distances

    monkeypatch.setattr(distances, "COLUMN_TILE", 37)
    monkeypatch.setattr(distances, "ROW_BLOCK_ENTRIES", 120 * 9)
    X, Y = _data(n=120, dims=6)
    rows = np.array([0, 5, 119])
    tiled = distances.FeatureRows(X, metric)(rows)
    assert np.array_equal(tiled, squareform(pdist(X, metric))[rows])
    row = score(X, Y, metric=metric)
    values = neighbourhood_scores(X, Y, metric=metric)
    assert _same(values, {key: row[key] for key in values})


def test_threads_give_the_same_bytes():
    X, Y = _data(n=700, dims=20)
    one = neighbourhood_scores(X, Y, k=(5, 15, 30, 100))
    assert _same(neighbourhood_scores(X, Y, k=(5, 15, 30, 100), n_jobs=2), one)
    assert _same(neighbourhood_scores(X, Y, k=(5, 15, 30, 100), n_jobs=-1), one)
    with pytest.raises(ValueError, match="n_jobs must be a non-zero integer"):
        neighbourhood_scores(X, Y, n_jobs=0)


def test_row_blocks_on_a_dask_cluster_give_the_same_bytes(monkeypatch):
    """N = 2000 in 14 row blocks (made small here) on two in-process workers: the blocks'
    results do not depend on how the rows are split or where they run."""
    from distributed import Client, LocalCluster

    from drfidelity.metrics import distances

    X, Y = _data(n=2000, dims=10)
    local = neighbourhood_scores(X, Y)  # one block per pass
    monkeypatch.setattr(distances, "ROW_BLOCK_ENTRIES", 2000 * 150)  # 14 blocks per pass
    assert _same(neighbourhood_scores(X, Y), local)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        assert _same(neighbourhood_scores(X, Y, scheduler=client), local)
        assert _same(neighbourhood_scores(X, Y, scheduler=cluster.scheduler_address), local)
