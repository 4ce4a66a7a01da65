"""The stages refuse what would otherwise fail late or silently: study values out of range
or missing, a data.n too large to score, hand-edited data, a vanished caller; a missing extra
and a leaked API key are one safe line."""

from __future__ import annotations

import base64
import html
import json
import os
import shutil
import subprocess
import sys
import urllib.parse

import numpy as np
import pytest

from drfidelity.core.params import ParamsError
from pipeline_helpers import REPO
from test_params import DELETE, parse_params, with_change


@pytest.mark.parametrize("path, value, message", [
    ("studies.random_walk.n_steps", 0, r"studies.random_walk.n_steps must be >= 1"),
    ("studies.random_walk.step", -0.1, r"studies.random_walk.step must be > 0"),
    ("studies.random_walk.lag", 0, r"studies.random_walk.lag must be >= 1"),
    ("studies.noise_dims.dims", [0, 2], r"studies.noise_dims.dims\[0\] must be >= 1"),
    ("studies.noise_dims.dims", [2, 6], r"studies.noise_dims.dims\[0\] must be >= "
                                            r"n_principal = 3, got 2"),
    ("studies.noise_dims.cluster_std", -0.5, "studies.noise_dims.cluster_std must be >= 0"),
    ("studies.sweep_outlier_factor.values", [2.0, -1.0],
     r"studies.sweep_outlier_factor.values\[1\] must be > 0"),
    ("studies.sweep_minority_frac.values", [0.25, 0.7],
     r"studies.sweep_minority_frac.values\[1\] must be <= 0.5"),
    ("studies.addplot.deviation", 0, r"studies.addplot.deviation must be > 0"),
    ("studies.addplot.extra_dims", 0, r"studies.addplot.extra_dims must be >= 1"),
])
def test_study_ranges_are_checked_where_the_study_loads(path, value, message):
    """A study's section is checked by its own schema when a stage loads the study (before
    anything is generated), so validating params never imports a study module."""
    from drfidelity.studies import study

    params = parse_params(with_change(path, value))
    with pytest.raises(ParamsError, match=message):
        study(path.split(".")[1]).configs(params)


@pytest.mark.parametrize("path, value, message", [
    ("studies.random_walkk", {},
     r"unknown key studies.random_walkk \(did you mean 'random_walk'\?\)"),
    ("studies.addplot.n_add_bulkk", 5,
     r"unknown key studies.addplot.n_add_bulkk \(did you mean 'n_add_bulk'\?\)"),
    ("studies.hyperparams.datasets", ["densty"],
     r"studies.hyperparams.datasets: unknown dataset 'densty'.*density"),
])
def test_unknown_study_or_key_is_named_with_the_closest(path, value, message):
    """An unknown study is refused at params load; an unknown key of a study's section (or a
    name it lists) where the study loads; each with the closest known name."""
    from drfidelity.studies import study

    with pytest.raises(ParamsError, match=message):
        params = parse_params(with_change(path, value))
        study(path.split(".")[1]).configs(params)


def test_a_missing_studies_section_is_one_params_error():
    params = parse_params(with_change("studies", DELETE))
    with pytest.raises(ParamsError, match="params.yaml has no studies.random_walk section"):
        params.studies["random_walk"]
    params = parse_params(with_change("studies.addplot", DELETE))
    assert "random_walk" in params.studies
    with pytest.raises(ParamsError, match="no studies.addplot section"):
        params.studies["addplot"]


def test_study_stage_without_its_section_is_one_line(tmp_path):
    import yaml

    from test_params import COMMITTED

    raw = {key: value for key, value in COMMITTED.items() if key != "studies"}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    done = subprocess.run([sys.executable, "-m", "drfidelity", "stage", "study_embed",
                           "addplot/PCA"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no studies.addplot section" in lines[0], done.stderr


def test_study_maps_without_their_inputs_is_one_line(tmp_path):
    """The inputs are a stage of their own (so stored maps outlive regenerating them): the map
    stage names the one to run first."""
    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    done = subprocess.run([sys.executable, "-m", "drfidelity", "stage", "study_embed",
                           "addplot/PCA"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "drfidelity stage study_embed: error: data/studies/addplot/meta.json is missing: run the "
        "study_inputs stage of addplot first"]
    assert not (tmp_path / "embeddings").exists()


def test_a_data_n_too_large_to_score_is_refused_before_generating(tmp_path, monkeypatch):
    from drfidelity.core import validation
    from drfidelity.pipeline import generate

    from test_params import COMMITTED

    params = parse_params(with_change("data.n", 200_000))
    monkeypatch.setattr(validation, "available_memory", lambda: 24 * 2**30)
    monkeypatch.setattr(generate, "generate", lambda *a, **k: pytest.fail("generated"))
    with pytest.raises(MemoryError, match=r"data.n: scoring the maps of density for "
                                          r"N = 200,000 points needs about .* GiB"):
        generate.run(params, "density", tmp_path)
    assert COMMITTED["data"]["n"] == 1000


def test_every_stage_dies_with_its_caller(monkeypatch, tmp_path):
    """`drfidelity stage score` (no pool) asks for the death signal too, after its params."""
    from drfidelity import cli, pipeline
    from drfidelity.core import runtime

    asked = []
    monkeypatch.setattr(runtime, "die_with_parent", lambda parent: asked.append(parent))
    monkeypatch.setattr(pipeline, "run_stage", lambda *a, **k: None)
    params = tmp_path / "params.yaml"
    from test_params import REPO

    params.write_text((REPO / "params.yaml").read_text())
    for name, target in (("score", "density"), ("aggregate", None), ("report", None)):
        asked.clear()
        assert cli.main(["stage", name, *([target] if target else []), "--params",
                         str(params)]) == 0
        assert asked == [os.getppid()], name


def test_hand_edited_data_is_refused(tmp_path):
    from drfidelity.core.files import dumps_json, write_array_dir
    from drfidelity.core.layout import data_dir, data_identity, load_data
    from drfidelity.core.storage import fingerprint
    from test_params import REPO
    from test_params import load_params

    params = load_params(REPO / "params.yaml")
    arrays = {"X": np.arange(12.0).reshape(4, 3), "labels": np.arange(4)}
    meta = {**data_identity(params, "density"), "fingerprint": fingerprint(arrays["X"]),
            "arrays": {k: {"sha256": fingerprint(v)} for k, v in arrays.items()}}
    write_array_dir(data_dir(tmp_path, "density"), arrays, {"meta.json": dumps_json(meta)})
    _, loaded = load_data(params, "density", tmp_path)
    assert np.array_equal(loaded["X"], arrays["X"])
    edited = arrays["X"].copy()
    edited[0, 0] = 0.5
    np.save(data_dir(tmp_path, "density") / "X.npy", edited)
    with pytest.raises(ValueError, match=r"data/density/X.npy is not the array the generate "
                                         r"stage wrote"):
        load_data(params, "density", tmp_path)
    (data_dir(tmp_path, "density") / "X.npy").unlink()
    with pytest.raises(ValueError, match="data/density/X.npy is missing"):
        load_data(params, "density", tmp_path)


def test_a_missing_extra_is_named_in_one_line(capsys):
    from drfidelity.core.console import user_error

    error = ModuleNotFoundError("No module named 'yaml'", name="yaml")
    assert user_error("drfidelity stage report", error, debug=False) == 2
    assert capsys.readouterr().err == (
        "drfidelity stage report: error: the Python package 'yaml' is not installed; it comes "
        "with the [pipeline] extra: pip install 'drfidelity[pipeline]'\n")
    with pytest.raises(ModuleNotFoundError):  # not an optional dependency of ours: a bug
        user_error("drfidelity stage report", ModuleNotFoundError("x", name="nonesuch"), False)


def test_stage_report_without_yaml_is_one_line(tmp_path):
    """A bare install: yaml made unimportable in a fresh interpreter."""
    code = ("import sys; sys.modules['yaml'] = None; from drfidelity import cli; "
            "sys.exit(cli.main(['stage', 'report']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "drfidelity stage report: error: the Python package 'yaml' is not installed; it comes "
        "with the [pipeline] extra: pip install 'drfidelity[pipeline]'"]


@pytest.mark.parametrize("echo", [
    lambda key: key,
    lambda key: urllib.parse.quote(key, safe=""),
    lambda key: urllib.parse.quote_plus(key),
    lambda key: urllib.parse.quote(key, safe="").replace("%2F", "%2f"),
    lambda key: key[:6] + "\n    " + key[6:],
    lambda key: json.dumps({"key": urllib.parse.quote(key[:4]) + "\r\n" + key[4:]}),
    lambda key: json.dumps(key),  # ensure_ascii: é as \u00e9
    lambda key: "".join(json.dumps(c)[1:-1].upper().replace("\\U", "\\u") if ord(c) > 127
                        else f"\\u{ord(c):04X}" for c in key),  # 😀 as a surrogate pair
    lambda key: repr(key.encode()),  # \xc3\xa9 for é
    lambda key: urllib.parse.quote(urllib.parse.quote(key, safe=""), safe=""),
    lambda key: html.escape(key),
    lambda key: "".join(f"&#{ord(c)};" if i % 2 else f"&#x{ord(c):X};" for i, c in enumerate(key)),
    lambda key: key.encode().hex(),
    lambda key: base64.b64encode(key.encode()).decode(),
    lambda key: base64.urlsafe_b64encode(key.encode()).decode().rstrip("="),
    lambda key: "Basic " + base64.b64encode(b"user:" + key.encode()).decode(),
])
def test_the_api_key_is_scrubbed_however_it_is_echoed(monkeypatch, echo):
    from drfidelity.methods import toorpia

    key = "tp-Ab3/xY+9 z=Q&é😀"
    monkeypatch.setenv(toorpia.KEY_VARIABLE, key)
    text = toorpia._scrub(f"401 Unauthorized: invalid key {echo(key)} (see docs)")
    assert "<TOORPIA_API_KEY>" in text
    for piece in (key, key[:6], key[6:], urllib.parse.quote(key, safe=""), echo(key)):
        assert piece not in text, text


def test_base64_that_holds_no_key_is_left_alone(monkeypatch):
    from drfidelity.methods import toorpia

    monkeypatch.setenv(toorpia.KEY_VARIABLE, "tp-Ab3/xY+9 z=Q&é")
    other = base64.b64encode(b"request id 8f2c: try again later").decode()
    assert toorpia._scrub(f"503 {other}") == f"503 {other}"


@pytest.mark.parametrize("argv, words", [
    (["stage", "embed", "density/PCA", "--jobs", "0"], "argument --jobs: must be 1 or more, got 0"),
    (["stage", "embed", "density/PCA", "--jobs", "-3"],
     "argument --jobs: must be 1 or more, got -3"),
    (["stage", "embed", "density/PCA", "--jobs", "two"],
     "argument --jobs: must be a whole number, got 'two'"),
    (["worker", "tcp://127.0.0.1:8786", "--nworkers", "0"],
     "argument --nworkers: must be 1 or more, got 0"),
])
def test_a_count_of_processes_below_one_is_refused(argv, words, capsys):
    from drfidelity import cli

    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 2 and words in capsys.readouterr().err


def test_a_worker_without_a_scheduler_says_so_in_one_line_at_once():
    import socket

    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    for address, words in ((f"tcp://127.0.0.1:{port}", "no Dask scheduler answers at"),
                           ("localhost:8786", "must look like tcp://HOST:PORT")):
        done = subprocess.run([sys.executable, "-m", "drfidelity.cli", "worker", address],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        assert done.stderr.splitlines() == [done.stderr.strip()] and words in done.stderr


def test_a_worker_pointed_at_a_server_that_is_no_scheduler_is_refused():
    """A port that answers, but not in Dask's protocol (here a plain HTTP server)."""
    import http.server
    import threading

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        address = f"tcp://127.0.0.1:{server.server_address[1]}"
        done = subprocess.run([sys.executable, "-m", "drfidelity.cli", "worker", address],
                              capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 2
    assert done.stderr.strip() == (f"drfidelity worker: error: {address} accepts connections "
                                   "but is not a Dask scheduler")
