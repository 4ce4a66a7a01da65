"""toorPIA wrapper: cache first, and its HTTP contract against a fake server on 127.0.0.1.

Each case checks that the API key never leaves the login request: not in logs, captured
output, exception text, cache files or provenance.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time

import numpy as np
import pytest
import toorpia.client
from fake_toorpia import MAP_NO, FakeToorpia

from drfidelity.registry import METHODS
from drfidelity.methods import EmbedContext, SkipMethod
from drfidelity.methods.external import cache_path, store
from drfidelity.methods.toorpia import ToorpiaUnavailable, extend_toorpia, fit_toorpia
from drfidelity.core.storage import fingerprint

KEY = "sk-live-DO-NOT-LEAK-4242"
#: the benchmark's toorPIA settings (the wrappers take every one), and quicker retries
SETTINGS = dict(METHODS["toorPIA"].defaults)
FAST = {**SETTINGS, "deadline_s": 10.0, "max_attempts": 2, "backoff_s": 0.0}


@pytest.fixture
def X():
    return np.random.default_rng(1).normal(size=(20, 5))


@pytest.fixture
def context(tmp_path):
    return EmbedContext(tmp_path, "clusters", "n20_d5_snr1")


@pytest.fixture
def keyed(monkeypatch, caplog):
    monkeypatch.setenv("TOORPIA_API_KEY", KEY)
    caplog.set_level(logging.INFO, logger="drfidelity")


def serve(monkeypatch, behaviour: str) -> FakeToorpia:
    server = FakeToorpia(behaviour)
    monkeypatch.setattr(toorpia.client, "API_URL", server.url)
    return server


@pytest.fixture
def assert_no_leak(tmp_path, caplog, capsys):
    """Call with any exception texts once the case has run."""
    def check(*texts: str) -> None:
        captured = capsys.readouterr()
        for text in (caplog.text, captured.out, captured.err, *texts):
            assert KEY not in text
        for path in tmp_path.rglob("*"):
            if path.is_file():
                assert KEY.encode() not in path.read_bytes(), path
    return check


def endpoints(server: FakeToorpia) -> list[str]:
    return [path for path, _ in server.requests]


def test_no_cache_no_key_skips_with_reason(monkeypatch, X, context):
    monkeypatch.delenv("TOORPIA_API_KEY", raising=False)
    with pytest.raises(SkipMethod) as skip:
        fit_toorpia(X, 0, context, **SETTINGS)
    path = cache_path(context, "toorpia", "embedding", 0)
    pointer = path.parents[1].with_suffix(".dvc")
    assert str(skip.value) == (f"no map at {path} (`dvc pull {pointer}` brings the previous "
                               "release's maps) and TOORPIA_API_KEY unset")


def test_no_context_skips(X):
    with pytest.raises(SkipMethod, match="needs a context"):
        fit_toorpia(X, 0, None, **SETTINGS)


def test_legacy_mode_without_cache_is_not_refilled(keyed, monkeypatch, X, context):
    with serve(monkeypatch, "ok") as server:
        with pytest.raises(SkipMethod, match="'fit' cannot be refilled"):
            fit_toorpia(X, 1, context, **{**SETTINGS, "mode": "fit"})
    assert server.requests == []


def test_cache_present_means_no_api_call(keyed, monkeypatch, X, context):
    Y = np.random.default_rng(2).normal(size=(20, 2))
    store(Y, X, context, "toorpia", "embedding", 0, {"endpoint": "test"})
    with serve(monkeypatch, "ok") as server:
        np.testing.assert_array_equal(fit_toorpia(X, 0, context, **FAST), Y)
    assert server.requests == []


def test_happy_basemap_writes_cache_with_provenance(keyed, monkeypatch, X, context,
                                                   assert_no_leak):
    with serve(monkeypatch, "ok") as server:
        Y = fit_toorpia(X, 0, context, **FAST)
        again = fit_toorpia(X, 0, context, **FAST)
    assert endpoints(server) == ["/auth/login", "/data/basemap_embedding"]
    assert server.requests[0][1] == {"apiKey": KEY}
    fields = server.requests[1][1]
    assert fields["files"][0].endswith(".csv.gz")
    assert fields["l2_normalization"][1] == b"false"
    np.testing.assert_allclose(Y, X[:, :2], rtol=1e-6)  # the fake maps rows to 2 columns
    np.testing.assert_array_equal(again, Y)
    record = json.loads(cache_path(context, "toorpia", "embedding", 0)
                        .with_suffix(".json").read_text())
    assert record["endpoint"] == "basemap_embedding"
    assert record["api_url"] == server.url
    assert record["params"] == {"l2_normalization": False}
    assert record["client"] == "toorpia 1.4.0"
    assert record["map_no"] == MAP_NO
    assert record["input_sha256"] == fingerprint(X)
    assert record["created_utc"].endswith("+00:00")
    assert_no_leak()


def test_happy_addplot_one_call_per_row(keyed, monkeypatch, X, context, assert_no_leak):
    X_add = np.random.default_rng(3).normal(size=(4, 5))
    with serve(monkeypatch, "ok") as server:
        Y_fit, Y_add = extend_toorpia(X, X_add, 0, context, **FAST)
        cached = extend_toorpia(X, X_add, 0, context, **FAST)
    assert endpoints(server) == (["/auth/login", "/data/basemap_embedding"]
                                 + ["/data/addplot_embedding"] * 4)
    assert all(fields["mapNo"][1] == str(MAP_NO).encode() for _, fields in server.requests[2:])
    np.testing.assert_allclose(Y_fit, X[:, :2], rtol=1e-6)
    np.testing.assert_allclose(Y_add, X_add[:, :2], rtol=1e-6)
    np.testing.assert_array_equal(cached[1], Y_add)
    for mode, endpoint in (("embedding_basemap", "basemap_embedding"),
                           ("embedding_addplot", "addplot_embedding")):
        record = json.loads(cache_path(context, "toorpia", mode, 0)
                            .with_suffix(".json").read_text())
        assert (record["endpoint"], record["map_no"]) == (endpoint, MAP_NO)
    assert_no_leak()


def test_login_401_fails_at_once_without_the_key(keyed, monkeypatch, X, context,
                                                 assert_no_leak):
    with serve(monkeypatch, "login_401") as server:
        with pytest.raises(ToorpiaUnavailable, match="login rejected") as error:
            fit_toorpia(X, 0, context, **FAST)
    assert endpoints(server) == ["/auth/login"]  # a rejected key is not retried
    assert "401" in str(error.value) and "<TOORPIA_API_KEY>" in str(error.value)
    assert not cache_path(context, "toorpia", "embedding", 0).exists()
    assert_no_leak(str(error.value))


def test_415_on_gzip_retries_plain_csv(keyed, monkeypatch, X, context, caplog,
                                       assert_no_leak):
    with serve(monkeypatch, "gzip_415") as server:
        Y = fit_toorpia(X, 0, context, **FAST)
    uploads = [fields["files"][0] for _, fields in server.requests[1:]]
    assert len(uploads) == 2
    assert uploads[0].endswith(".csv.gz") and uploads[1].endswith(".csv")
    np.testing.assert_allclose(Y, X[:, :2], rtol=1e-6)
    assert "retrying with uncompressed upload" in caplog.text
    assert_no_leak()


@pytest.mark.parametrize("behaviour, reason", [
    ("error_500_json", "engine crashed"),
    ("error_502_html", "HTTP 502: <html><body>Bad Gateway</body></html>"),
    ("wrong_rows", "the returned map has shape (19, 2), expected (20, 2)"),
])
def test_failures_are_retried_then_reported(keyed, monkeypatch, X, context, assert_no_leak,
                                            behaviour, reason):
    with serve(monkeypatch, behaviour) as server:
        with pytest.raises(ToorpiaUnavailable) as error:
            fit_toorpia(X, 0, context, **FAST)
    message = str(error.value)
    assert "attempt 1:" in message and "attempt 2:" in message
    assert message.count(reason) == 2
    assert endpoints(server).count("/auth/login") == 2
    assert not cache_path(context, "toorpia", "embedding", 0).exists()
    assert_no_leak(message)


def test_wrong_rows_in_addplot_is_an_error(keyed, monkeypatch, X, context):
    with serve(monkeypatch, "wrong_rows"):
        with pytest.raises(ToorpiaUnavailable, match=r"returned map has shape \(19, 2\), expected \(20, 2\)"):
            extend_toorpia(X, X[:2], 0, context, **{**FAST, "max_attempts": 1})


def test_server_that_never_answers_fails_within_the_deadline(keyed, monkeypatch, X, context,
                                                              assert_no_leak):
    deadline = 1.0
    scratch_root = context.root / "tmp"
    scratch_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_root))  # where the upload goes
    with serve(monkeypatch, "hang") as server:
        start = time.monotonic()
        with pytest.raises(ToorpiaUnavailable, match="no answer within 1 s") as error:
            fit_toorpia(X, 0, context, **{**SETTINGS, "deadline_s": deadline,
                                          "max_attempts": 1})
        elapsed = time.monotonic() - start
    assert elapsed < deadline + 1.0
    assert endpoints(server) == ["/auth/login", "/data/basemap_embedding"]
    assert list(scratch_root.iterdir()) == []  # the killed worker's upload file is gone
    assert_no_leak(str(error.value))


def test_backoff_grows_linearly(keyed, monkeypatch, X, context):
    sleeps = []
    monkeypatch.setattr("drfidelity.methods.toorpia.time.sleep", sleeps.append)
    with serve(monkeypatch, "error_500_json"):
        with pytest.raises(ToorpiaUnavailable):
            fit_toorpia(X, 0, context, **{**SETTINGS, "deadline_s": 10.0, "max_attempts": 3,
                                          "backoff_s": 2.5})
    assert sleeps == [2.5, 5.0]


@pytest.mark.parametrize("kwargs, name", [({"deadline_s": 0}, "deadline_s"),
                                          ({"max_attempts": 0}, "max_attempts"),
                                          ({"backoff_s": -1}, "backoff_s"),
                                          ({"wait_budget_s": 0}, "wait_budget_s")])
def test_bad_settings_are_rejected(keyed, X, context, kwargs, name):
    with pytest.raises(ValueError, match=name):
        fit_toorpia(X, 0, context, **{**SETTINGS, **kwargs})


def test_bad_inputs_are_rejected_before_any_call(keyed, monkeypatch, X, context):
    with serve(monkeypatch, "ok") as server:
        with pytest.raises(ValueError, match=r"X must be an \(N, D\) matrix with N >= 1"):
            fit_toorpia(X[0], 0, context, **SETTINGS)
        with pytest.raises(ValueError, match="X_add must have the 5 columns"):
            extend_toorpia(X, X[:, :3], 0, context, **SETTINGS)
    assert server.requests == []


def test_unreachable_server_is_retried_then_reported(keyed, monkeypatch, X, context):
    with serve(monkeypatch, "ok"):
        pass  # the port is closed again: nothing listens there now
    with pytest.raises(ToorpiaUnavailable) as error:
        fit_toorpia(X, 0, context, **FAST)
    assert str(error.value).count("login: ConnectionError") == 2


def test_server_error_at_login_is_transient_and_reported_on_one_short_line(
        keyed, monkeypatch, X, context, assert_no_leak):
    from drfidelity.methods.toorpia import SERVER_TEXT_LIMIT

    with serve(monkeypatch, "login_503") as server:
        with pytest.raises(ToorpiaUnavailable) as error:
            fit_toorpia(X, 0, context, **FAST)
    message = str(error.value)
    assert endpoints(server) == ["/auth/login", "/auth/login"]  # retried, not "rejected"
    assert "rejected" not in message
    assert message.count("login: server error (Authentication failed. Status code: 503") == 2
    assert "\n" not in message
    assert len(message) < 2 * SERVER_TEXT_LIMIT + 200
    assert_no_leak(message)


def test_the_whole_wait_is_bounded_by_the_budget(keyed, monkeypatch, X, context):
    with serve(monkeypatch, "hang") as server:
        start = time.monotonic()
        with pytest.raises(ToorpiaUnavailable, match="before the wait budget ran out"):
            fit_toorpia(X, 0, context, mode="embedding", deadline_s=30.0, max_attempts=4,
                        backoff_s=0.0, wait_budget_s=1.5)
        elapsed = time.monotonic() - start
    assert elapsed < 3.0
    assert endpoints(server).count("/auth/login") == 1  # no second attempt: the budget is spent


def test_no_retry_whose_pause_would_outlast_the_budget(keyed, monkeypatch, X, context):
    sleeps = []
    monkeypatch.setattr("drfidelity.methods.toorpia.time.sleep", sleeps.append)
    with serve(monkeypatch, "error_500_json"):
        with pytest.raises(ToorpiaUnavailable, match="no attempt 2: the wait budget of 5 s"):
            fit_toorpia(X, 0, context, mode="embedding", deadline_s=5.0, max_attempts=3,
                        backoff_s=60.0, wait_budget_s=5.0)
    assert sleeps == []
