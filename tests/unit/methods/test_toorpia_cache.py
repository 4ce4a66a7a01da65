"""``methods.external``: the cache path, provenance sidecars and every refusal."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from drfidelity.methods import EmbedContext
from drfidelity.methods.external import cache_path, load_cached, store
from drfidelity.core.storage import atomic_write, fingerprint


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(30, 6)), rng.normal(size=(30, 2))


@pytest.fixture
def context(tmp_path):
    return EmbedContext(tmp_path, "clusters", "n30_d6_snr1")


def test_fingerprint_is_sha256_of_c_order_bytes():
    X = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert fingerprint(X, np.float64) == hashlib.sha256(
        np.arange(6.0).reshape(2, 3).tobytes()).hexdigest()
    assert fingerprint(X) == hashlib.sha256(X.tobytes()).hexdigest()
    assert fingerprint(np.asfortranarray(X)) == fingerprint(X)
    assert fingerprint(X.T) != fingerprint(X)


def test_store_records_the_float64_fingerprint_of_the_input(context, data):
    X, Y = data
    path = store(Y, X.astype(np.float32), context, "umap", "embedding", 0, {})
    record = json.loads(path.with_suffix(".json").read_text())
    assert record["input_sha256"] == fingerprint(X.astype(np.float32), np.float64)


def test_atomic_write_leaves_nothing_behind_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "out" / "file.txt"
    atomic_write(target, b"first")
    assert target.read_bytes() == b"first" and oct(target.stat().st_mode & 0o777) == "0o644"

    def broken(*args):
        raise OSError("disk full")

    monkeypatch.setattr("drfidelity.core.storage.os.replace", broken)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, b"second")
    assert target.read_bytes() == b"first"
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.txt"]


def test_path_layout(context):
    assert cache_path(context, "umap", "embedding", 2) == (
        context.root / "external_embeddings/clusters/umap/embedding/n30_d6_snr1/seed2.npy")


@pytest.mark.parametrize("kwargs, name", [
    ({"method": ""}, "method"), ({"mode": "a/b"}, "mode"), ({"seed": -1}, "seed"),
    ({"seed": 1.0}, "seed")])
def test_path_rejects_bad_components(context, kwargs, name):
    args = {"method": "toorpia", "mode": "embedding", "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=name):
        cache_path(context, **args)


def test_missing_file_is_none(context, data):
    assert load_cached(context, "toorpia", "embedding", 0, data[0]) is None


def test_store_then_load_round_trips_with_provenance(context, data):
    X, Y = data
    path = store(Y, X, context, "umap", "embedding", 0, {"endpoint": "local"})
    np.testing.assert_array_equal(load_cached(context, "umap", "embedding", 0, X), Y)
    record = json.loads(path.with_suffix(".json").read_text())
    assert record["input_sha256"] == fingerprint(X)
    assert record["input_shape"] == [30, 6] and record["shape"] == [30, 2]
    assert record["endpoint"] == "local"
    assert sorted(p.name for p in path.parent.iterdir()) == ["seed0.json", "seed0.npy"]


def test_other_input_is_rejected(context, data):
    X, Y = data
    path = store(Y, X, context, "umap", "embedding", 0, {})
    X_other = X.copy()
    X_other[0, 0] += 1e-12
    with pytest.raises(ValueError) as error:
        load_cached(context, "umap", "embedding", 0, X_other)
    assert str(path) in str(error.value)
    assert fingerprint(X) in str(error.value) and fingerprint(X_other) in str(error.value)


def test_file_without_provenance_is_refused(context, data):
    X, Y = data
    path = cache_path(context, "umap", "embedding", 0)
    path.parent.mkdir(parents=True)
    np.save(path, Y)
    with pytest.raises(ValueError, match="no provenance sidecar"):
        load_cached(context, "umap", "embedding", 0, X)


def test_replaced_file_is_refused(context, data):
    X, Y = data
    path = store(Y, X, context, "umap", "embedding", 0, {})
    np.save(path, Y + 1.0)
    with pytest.raises(ValueError, match="differs from"):
        load_cached(context, "umap", "embedding", 0, X)


@pytest.mark.parametrize("Y_bad", [np.zeros((29, 2)), np.full((30, 2), np.inf)])
def test_recorded_file_of_wrong_shape_or_values_is_refused(context, data, Y_bad):
    X = data[0]
    path = cache_path(context, "umap", "embedding", 0)
    path.parent.mkdir(parents=True)
    np.save(path, Y_bad)
    path.with_suffix(".json").write_text(json.dumps(
        {"input_sha256": fingerprint(X), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))
    with pytest.raises(ValueError, match=str(path)):
        load_cached(context, "umap", "embedding", 0, X)


@pytest.mark.parametrize("Y_bad", [np.zeros((29, 2)), np.zeros((30, 3)),
                                   np.full((30, 2), np.nan)])
def test_store_validates(context, data, Y_bad):
    with pytest.raises(ValueError, match="Y (has shape|contains non-finite)"):
        store(Y_bad, data[0], context, "umap", "embedding", 0, {})
