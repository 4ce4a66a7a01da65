"""The ``score`` command's backend: JSON out, NaN as null, exit code 2 and no file on bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from drfidelity.metrics import score
from drfidelity.metrics.cli import read_npz, run


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
    assert "Y has shape (37, 2), expected (38, d)" in capsys.readouterr().err
    assert not out.exists()
    np.savez(tmp_path / "nox.npz", Z=np.zeros(3))
    assert run(tmp_path / "nox.npz", tmp_path / "emb.npy", out) == 2
    assert "no array 'X'" in capsys.readouterr().err
    assert run(tmp_path / "missing.npz", tmp_path / "emb.npy", out) == 2
    assert not out.exists()


def _cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "drfidelity", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def _one_error_line(err: str, *names) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("drfidelity score: error: "), err
    for name in names:
        assert str(name) in lines[0]
    return lines[0]


def test_unreadable_inputs_are_one_line_naming_the_file(tmp_path, capsys):
    _write(tmp_path)
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes((tmp_path / "data.npz").read_bytes()[:200])  # zip magic, no directory
    as_data = tmp_path / "emb.npy"
    truncated = tmp_path / "truncated.npy"
    truncated.write_bytes(as_data.read_bytes()[:-40])
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not numpy at all")
    cases = [(corrupt, as_data, corrupt, "not a readable .npz archive"),
             (as_data, as_data, as_data, "single .npy array, not an .npz archive"),
             (garbage, as_data, garbage, "not a readable .npz archive"),
             (tmp_path / "data.npz", truncated, truncated, "(damaged or truncated)"),
             (tmp_path / "data.npz", tmp_path / "data.npz", tmp_path / "data.npz",
              "is an .npz archive, not one .npy array")]
    for data, emb, named, what in cases:
        assert run(data, emb, None) == 2
        _one_error_line(capsys.readouterr().err, named, what)


def test_cli_exit_2_one_line_and_debug_traceback(tmp_path):
    _write(tmp_path)
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK\x03\x04" + b"\0" * 50)
    done = _cli("score", corrupt, tmp_path / "emb.npy")
    assert done.returncode == 2 and done.stdout == ""
    _one_error_line(done.stderr, corrupt)
    debug = _cli("score", corrupt, tmp_path / "emb.npy", "--debug")
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr


def test_too_large_input_is_refused_before_allocating(tmp_path, capsys, monkeypatch):
    from drfidelity.core import validation
    from drfidelity.metrics import inputs

    n = 200_000
    np.savez(tmp_path / "big.npz", X=np.random.default_rng(0).normal(size=(n, 3)))
    np.save(tmp_path / "big.npy", np.zeros((n, 2)))
    monkeypatch.setattr(validation, "available_memory", lambda: 16 * 2**30)
    assert run(tmp_path / "big.npz", tmp_path / "big.npy", None) == 2
    line = _one_error_line(capsys.readouterr().err, "N = 200,000", "GiB", "16.0 GiB")
    per_pair = inputs.BYTES_PER_PAIR_SPACE + inputs.BYTES_PER_PAIR_SCORE  # X only: one space
    assert f"needs about {per_pair * n * (n - 1) / 2 / 2**30:.1f} GiB" in line
    done = _cli("score", tmp_path / "big.npz", tmp_path / "big.npy")  # this machine's memory
    assert done.returncode == 2
    _one_error_line(done.stderr, "N = 200,000", "GiB of memory is available")


def test_cli_configures_logging_for_our_records_and_the_toorpia_clients():
    import subprocess
    import sys

    code = ("from drfidelity.cli import configure_logging; import logging; configure_logging(); "
            "logging.getLogger('drfidelity.methods.toorpia').info('attempt 1/4 failed'); "
            "logging.getLogger('toorpia.client').info('client record'); "
            "logging.getLogger('urllib3').info('not shown')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stderr.splitlines() == ["INFO drfidelity.methods.toorpia: attempt 1/4 failed",
                                        "INFO toorpia.client: client record"]


def test_one_line_folds_multi_line_messages():
    from drfidelity.core.console import one_line

    assert one_line(ValueError("first\n\n  second  \nthird")) == "first | second | third"


REFUSALS = [  # (what the case changes, words of the one error line)
    ({"Y": "rows"}, "Y has shape (37, 2), expected (38, d)"),
    ({"Y": "columns"}, "Y has shape (38, 0), expected (38, d) with d >= 1"),
    ({"Y": "complex"}, "Y must hold real numbers"),
    ({"X": "complex"}, "X must hold real numbers, got complex values"),
    ({"Y": "nan"}, "Y contains non-finite coordinates"),
    ({"Y": "inf"}, "Y contains non-finite coordinates"),
    ({"labels": "short"}, "labels must have shape (38,)"),
    ({"labels": "fractions"}, "labels must hold integers"),
    ({"outlier_idx": "outside"}, "outlier_idx must index points 0..37"),
    ({"outlier_dir": "alone"}, "outlier_dir needs a non-empty outlier_idx"),
    ({"population": "three"}, "population must hold 0"),
    ({"X_truth": "rows"}, "truth has 37 rows but X has 38 points"),
    ({"json": "missing folder"}, "does not exist"),
    ({"json": "a folder"}, "is a folder"),
    ({"json": "the map"}, "would replace it"),
    ({"json": "the data"}, "would replace it"),
]


def _bad_case(tmp_path, case: dict, index: int):
    """(data, embedding, json_out) files for one refusal case of :data:`REFUSALS`."""
    rng = np.random.default_rng(index)
    n = 38
    X = rng.normal(size=(n, 5))
    arrays = {"X": X, "labels": np.repeat([0, 1], n // 2), "outlier_idx": np.array([0, 1]),
              "population": (np.arange(n) < 5).astype(int)}
    Y = X[:, :2].copy()
    kind = next(iter(case))
    change = case[kind]
    if kind == "Y":
        Y = {"rows": Y[:-1], "columns": X[:, :0], "complex": Y + 1j, "nan": np.where(np.eye(n, 2) > 0, np.nan, Y),
             "inf": np.where(np.eye(n, 2) > 0, np.inf, Y)}[change]
    elif kind == "X":
        arrays["X"] = X + 1j
    elif kind == "labels":
        arrays["labels"] = {"short": np.zeros(n - 1, int),
                            "fractions": np.linspace(0, 1, n)}[change]
    elif kind == "outlier_idx":
        arrays["outlier_idx"] = np.array([3, n])
    elif kind == "outlier_dir":
        arrays["outlier_dir"] = np.array([0])
        arrays["outlier_idx"] = np.array([], dtype=int)
    elif kind == "population":
        arrays["population"] = np.full(n, 3)
    elif kind == "X_truth":
        arrays["X_truth"] = X[:-1]
    folder = tmp_path / f"case{index}"
    folder.mkdir()
    np.savez(folder / "data.npz", **arrays)
    np.save(folder / "emb.npy", Y)
    out = None
    if kind == "json":
        out = {"missing folder": folder / "no-such-folder" / "row.json", "a folder": folder,
               "the map": folder / "." / "emb.npy", "the data": folder / "data.npz"}[change]
    return folder / "data.npz", folder / "emb.npy", out


def test_bad_input_is_refused_before_the_engine_is_imported(tmp_path):
    """Every refusal happens before numba, the engine or its kernels are imported (so nothing
    is compiled and no N^2 array is allocated): checked in a fresh interpreter per case."""
    import subprocess
    import sys

    code = ("import sys; from drfidelity.core import runtime; runtime.configure('fast'); "
            "from drfidelity.metrics.cli import run; "
            "code = run(sys.argv[1], sys.argv[2], None if sys.argv[3] == '-' else sys.argv[3]); "
            "print(code, sorted(m for m in ('numba', 'scipy', 'drfidelity.metrics.engine', "
            "'drfidelity.metrics.pair_kernels', 'drfidelity.metrics.rank_kernels', "
            "'drfidelity.metrics.distances') if m in sys.modules))")
    for index, (case, words) in enumerate(REFUSALS):
        data, emb, out = _bad_case(tmp_path, case, index)
        done = subprocess.run([sys.executable, "-c", code, data, emb, out or "-"],
                              capture_output=True, text=True, timeout=120)
        assert done.stdout.split() == ["2", "[]"], (case, done.stdout, done.stderr)
        _one_error_line(done.stderr, words)


def test_the_cli_refuses_a_wrong_shape_map_without_compiling(tmp_path):
    """``drfidelity score`` itself, with an empty numba cache: the refusal writes no kernel."""
    import os
    import subprocess
    import sys

    data, emb, _ = _bad_case(tmp_path, {"Y": "rows"}, 0)
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    done = subprocess.run([sys.executable, "-m", "drfidelity", "score", data, emb],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(cache)})
    assert done.returncode == 2 and done.stdout == ""
    _one_error_line(done.stderr, "Y has shape (37, 2), expected (38, d)")
    assert list(cache.iterdir()) == []


def test_json_into_a_folder_the_user_cannot_write_is_refused_before_the_engine(tmp_path):
    """Run as an unprivileged uid (root may write anywhere): one line naming the folder, before
    numba is imported, and the inputs untouched."""
    import shutil
    import subprocess
    import sys

    import tempfile
    from pathlib import Path

    data, emb, _ = _bad_case(tmp_path, {"json": "a folder"}, 0)
    # pytest's tmp_path lies below a folder only its owner may enter
    shared = Path(tempfile.mkdtemp(prefix="drfidelity-readonly-"))
    shared.chmod(0o755)
    data, emb = Path(shutil.copy(data, shared)), Path(shutil.copy(emb, shared))
    locked = shared / "locked"
    locked.mkdir(mode=0o555)
    code = ("import sys; from drfidelity.metrics.cli import run; "
            "code = run(sys.argv[1], sys.argv[2], sys.argv[3]); print(code, 'numba' in sys.modules)")
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to run as an unprivileged uid"
    done = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                           sys.executable, "-c", code, data, emb, locked / "row.json"],
                          capture_output=True, text=True, timeout=120)
    try:
        assert done.stdout.split() == ["2", "False"], done.stdout + done.stderr
        _one_error_line(done.stderr, locked, "is not writable")
    finally:
        shutil.rmtree(shared)


def test_a_compressed_archive_too_large_to_score_is_refused_before_it_inflates(tmp_path,
                                                                               monkeypatch):
    """X's header gives N, and with it the pairs' memory, before a byte of X is inflated (a
    few kB of zeros can announce gigabytes)."""
    from drfidelity.core import validation
    from drfidelity.metrics import cli

    monkeypatch.setattr(validation, "available_memory", lambda: 16 * 2**30)
    n = 50_000
    np.savez_compressed(tmp_path / "zeros.npz", X=np.zeros((n, 40)))
    np.save(tmp_path / "map.npy", np.zeros((n, 2)))
    monkeypatch.setattr(cli, "read_npz", lambda path: pytest.fail(f"{path} was inflated"))
    with pytest.raises(MemoryError, match="N = 50,000"):
        cli._load(tmp_path / "zeros.npz", tmp_path / "map.npy", "euclidean")


def test_arrays_larger_than_memory_are_refused_before_they_are_read(tmp_path, monkeypatch):
    from drfidelity.core import validation

    np.savez_compressed(tmp_path / "zeros.npz", X=np.zeros((1000, 2000)))  # 16 MB inflated
    monkeypatch.setattr(validation, "available_memory", lambda: 2**20)
    with pytest.raises(MemoryError, match="zeros.npz holds 15 MiB of arrays once read, but "
                                          "only 1 MiB"):
        read_npz(tmp_path / "zeros.npz")
