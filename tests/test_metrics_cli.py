"""The ``score`` command's backend: JSON out, NaN as null, exit code 2 and no file on bad input."""

from __future__ import annotations

import json

import numpy as np

from drfidelity.metrics import score
from drfidelity.metrics.cli import run


def _write(tmp_path, n=38):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 5))
    labels = np.repeat([0, 1], n // 2)
    np.savez(tmp_path / "data.npz", X=X, labels=labels, outlier_idx=np.array([0, 1]))
    np.save(tmp_path / "emb.npy", X[:, :2])
    return X, labels


def test_writes_every_column_in_order(tmp_path):
    X, labels = _write(tmp_path)
    out = tmp_path / "row.json"
    assert run(tmp_path / "data.npz", tmp_path / "emb.npy", out) == 0
    text = out.read_text()
    assert text.endswith("}\n")
    row = json.loads(text)
    expected = score(X, X[:, :2], labels=labels, outlier_idx=[0, 1])
    assert list(row) == list(expected)
    assert row["tight_cluster"] is None  # no cluster reaches 20 members -> NaN -> null
    assert row["full_shepard"] == expected["full_shepard"]


def test_prints_without_json_path(tmp_path, capsys):
    _write(tmp_path)
    assert run(tmp_path / "data.npz", tmp_path / "emb.npy", None) == 0
    assert "recall_k5" in json.loads(capsys.readouterr().out)


def test_bad_input_exit_code_2(tmp_path, capsys):
    _write(tmp_path)
    np.save(tmp_path / "bad.npy", np.zeros((37, 2)))
    out = tmp_path / "row.json"
    assert run(tmp_path / "data.npz", tmp_path / "bad.npy", out) == 2
    assert "Y has 37 rows" in capsys.readouterr().err
    assert not out.exists()
    np.savez(tmp_path / "nox.npz", Z=np.zeros(3))
    assert run(tmp_path / "nox.npz", tmp_path / "emb.npy", out) == 2
    assert "no array 'X'" in capsys.readouterr().err
    assert run(tmp_path / "missing.npz", tmp_path / "emb.npy", out) == 2
    assert not out.exists()
