"""toorPIA: cache first; the remote API only with a key, under a deadline and bounded retries.

The coordinates of the reference release are DVC data (``external``); the service has no seed
and its maps jitter between calls, so a cache, once written, *is* the method's output.

Without a cache, and with ``TOORPIA_API_KEY`` set, the ``toorpia`` client is driven in a forked
worker process: the client sets no timeout on any request, prints its errors and returns None,
so the worker captures that output and the parent waits at most ``deadline_s`` for each call
(login, basemap, every addplot) before killing the worker (its upload files live in a scratch
directory that the parent removes). A failed session is retried after
``backoff_s * attempt`` seconds, up to ``max_attempts`` sessions, and the whole wait for one
map (every attempt, call and pause) is bounded by ``wait_budget_s``. A login the server refuses
(HTTP 4xx) is final; a 5xx or 429 at login is transient and retried like any other failure.
All of these are ``method_params.toorPIA`` settings. The key reaches the client only through the
environment of the worker; every text that leaves the worker is scrubbed of it and cut to one
short line before it is logged or raised.
"""

from __future__ import annotations

import base64
import binascii
import io
import logging
import multiprocessing
import os
import re
import shutil
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from . import external
from drfidelity.core import runtime
from drfidelity.core.validation import check_map, check_matrix, integer, real

from .base import SkipMethod
from .external import EmbedContext

#: nothing preloaded (drfidelity.jobs.fresh): its jobs read the cache; the client loads only
#: for a call to the service
PRELOAD = ()

log = logging.getLogger(__name__)

METHOD_DIR = "toorpia"
KEY_VARIABLE = "TOORPIA_API_KEY"
# The benchmark's only request setting: the input norms carry information.
BASEMAP_PARAMS = {"l2_normalization": False}
# Cache modes that the API can refill; ``fit`` holds legacy fit_transform maps (read only).
API_MODES = {"embedding": "basemap_embedding"}
SERVER_TEXT_LIMIT = 300  # characters of a server's reply kept in a message


class ToorpiaUnavailable(SkipMethod):
    """The API could not produce a valid map (login rejected, or every attempt failed)."""


class _CallFailed(Exception):
    """One session failed in a way that a later attempt may not repeat."""


class _LoginRejected(Exception):
    """The server refused the key; retrying cannot help."""


class _WaitBudgetSpent(_CallFailed):
    """The whole wait allowed for this map is used up: no further attempt."""


#: named HTML entities a server may write for the characters it must escape
_HTML_NAMES = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos"}
#: a run of base64 (standard or URL-safe alphabet) long enough to hide a key
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")


def _any_case(pattern: str) -> str:
    """``pattern`` with each hex letter (and the x of ``&#x`` or ``\\x``) matched in either case."""
    return re.sub(r"[A-Fa-fXx]", lambda m: f"[{m.group().upper()}{m.group().lower()}]", pattern)


def _key_pattern(key: str) -> re.Pattern:
    """The key as a server may echo it, one character at a time: as itself (JSON may escape it
    with a backslash), its UTF-8 bytes percent-encoded once or twice (a space also as '+'), as
    hex or as ``\\xXX`` escapes, its UTF-16 units as ``\\uXXXX`` escapes, or as an HTML character
    reference (decimal, hex or named).
    Line breaks are allowed between any two characters: whitespace (a wrapped line, an HTML
    page's newlines) or their JSON escapes (\\n, \\r, \\t)."""
    def forms(character: str) -> str:
        utf8 = character.encode("utf-8")
        utf16 = character.encode("utf-16-be")  # JSON's \u escapes: surrogate pairs above BMP
        code = ord(character)
        options = ["\\\\?" + re.escape(character),
                   *(_any_case("".join(f"{prefix}{byte:02x}" for byte in utf8))
                     for prefix in ("%", "%25", "", "\\\\x")),
                   _any_case("".join(f"\\\\u{utf16[i]:02x}{utf16[i + 1]:02x}"
                                     for i in range(0, len(utf16), 2))),
                   _any_case(f"&#x0*{code:x};"), f"&#0*{code};"]
        if 0x80 <= code < 0x100:  # a str's repr: \xe9, where bytes give \xc3\xa9
            options.append(_any_case(f"\\\\x{code:02x}"))
        if character in _HTML_NAMES:
            options.append(f"&{_HTML_NAMES[character]};")
        if character == " ":
            options.append("\\+")
        return "(?:" + "|".join(options) + ")"
    return re.compile(r"(?:\s|\\[nrt])*".join(forms(character) for character in key))


def _hides_key(run: str, key: bytes) -> bool:
    """Whether the base64 ``run`` decodes, at any of its four alignments and in either
    alphabet, to bytes that hold ``key`` (an ``Authorization: Basic`` echo, a token)."""
    for start in range(4):
        body = run[start:].rstrip("=")
        if len(body) % 4 == 1:  # a lone last character encodes no whole byte
            body = body[:-1]
        padded = body + "=" * (-len(body) % 4)
        for alphabet in (None, b"-_"):
            try:
                if key in base64.b64decode(padded, altchars=alphabet, validate=True):
                    return True
            except binascii.Error:
                continue
    return False


def _scrub(text: str) -> str:
    """``text`` with the API key replaced (however a server may encode or split it, base64
    included) and whitespace runs folded, on one line of at most SERVER_TEXT_LIMIT characters:
    safe and short enough to log or raise."""
    key = os.environ.get(KEY_VARIABLE)
    if key:
        text = _key_pattern(key).sub("<TOORPIA_API_KEY>", text)
        encoded = key.encode("utf-8")
        text = _BASE64_RUN.sub(lambda m: "<TOORPIA_API_KEY>" if _hides_key(m.group(), encoded)
                               else m.group(), text)
    text = " ".join(text.split())
    return text if len(text) <= SERVER_TEXT_LIMIT else text[:SERVER_TEXT_LIMIT - 1] + "…"


def _login_status(output: str) -> int | None:
    """The HTTP status the client printed for a failed login, if any."""
    found = re.search(r"Status code: (\d{3})", output)
    return int(found.group(1)) if found else None


def _worker(conn, steps: list[tuple[str, np.ndarray]], scratch: str, parent: int) -> None:
    """Forked child: log in, run ``steps`` in one session, send one message per call.

    Messages are ``(status, payload, output)``: status ``ok`` (payload: coordinates and map
    number), ``none`` (the client returned None), ``login`` (key rejected) or ``error``
    (an exception); ``output`` is what the client printed during that call. The client's
    upload files go to ``scratch``, which the parent removes even if it kills this process.
    """
    import toorpia

    runtime.die_with_parent(parent)
    tempfile.tempdir = scratch
    out = io.StringIO()

    def send(status: str, payload: Any = None) -> None:
        conn.send((status, payload, out.getvalue()))
        out.seek(0)
        out.truncate()

    with redirect_stdout(out), redirect_stderr(out):
        try:
            client = toorpia.toorPIA()
            client.session_key = client.authenticate()
            if not client.session_key:
                send("login")
                return
            send("ok")
            map_no = None
            for endpoint, data in steps:
                if endpoint == "basemap_embedding":
                    result = client.basemap_embedding(data, **BASEMAP_PARAMS)
                else:
                    result = client.addplot_embedding(data, mapNo=map_no)
                if result is None:
                    send("none")
                    return
                map_no = result.get("mapNo", map_no)
                send("ok", (np.asarray(result["xyData"], dtype=np.float64), map_no))
        except Exception as exc:  # reported to the parent, which decides about retries
            send("error", f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()


def _session(steps: list[tuple[str, np.ndarray]], deadline_s: float,
             give_up_at: float) -> list[tuple]:
    """Run ``steps`` in one worker; return ``(coordinates, map number)`` per step, validated.

    Each call gets ``deadline_s``, cut short at ``give_up_at`` (``time.monotonic``)."""
    forking = multiprocessing.get_context("fork")
    receiver, sender = forking.Pipe(duplex=False)
    scratch = tempfile.mkdtemp(prefix="drfidelity-toorpia-")
    worker = forking.Process(target=_worker, args=(sender, steps, scratch, os.getpid()),
                             daemon=True)
    worker.start()
    sender.close()
    results = []
    try:
        for call, (endpoint, data) in enumerate([("login", None), *steps]):
            wait = min(deadline_s, give_up_at - time.monotonic())
            if not receiver.poll(max(wait, 0.0)):
                if wait < deadline_s:
                    raise _WaitBudgetSpent(f"{endpoint}: no answer before the wait budget ran "
                                           "out")
                raise _CallFailed(f"{endpoint}: no answer within {deadline_s:g} s")
            try:
                status, payload, output = receiver.recv()
            except EOFError:
                raise _CallFailed(f"{endpoint}: worker exited without an answer") from None
            output = _scrub(output)
            if status == "login":
                code = _login_status(output)
                if code is not None and (code >= 500 or code == 429):
                    raise _CallFailed(f"login: server error ({output})")
                raise _LoginRejected(output)
            if status != "ok":
                detail = _scrub(payload) if status == "error" else "client returned None"
                raise _CallFailed(f"{endpoint}: {detail}" + (f" ({output})" if output else ""))
            if output:
                log.info("toorPIA client said during %s: %s", endpoint, output)
            if call:
                results.append((_validated(payload[0], data.shape[0], endpoint), payload[1]))
        return results
    finally:
        if worker.is_alive():
            worker.kill()
        worker.join()
        receiver.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _validated(Y: np.ndarray, n_rows: int, endpoint: str) -> np.ndarray:
    try:
        return check_map(f"{endpoint}: the returned map", Y, n_rows)
    except ValueError as exc:
        raise _CallFailed(str(exc)) from None


def _call(steps: list[tuple[str, np.ndarray]], *, deadline_s: float, max_attempts: int,
          backoff_s: float, wait_budget_s: float) -> list[tuple]:
    """:func:`_session` with bounded retries inside ``wait_budget_s`` seconds in all;
    ToorpiaUnavailable lists every failure."""
    real("deadline_s", deadline_s, low=0.0, low_open=True)
    integer("max_attempts", max_attempts, 1)
    real("backoff_s", backoff_s, low=0.0)
    real("wait_budget_s", wait_budget_s, low=0.0, low_open=True)
    give_up_at = time.monotonic() + wait_budget_s
    failures = []
    for attempt in range(1, max_attempts + 1):
        try:
            return _session(steps, deadline_s, give_up_at)
        except _LoginRejected as exc:
            raise ToorpiaUnavailable(f"toorPIA login rejected the API key: {exc}") from None
        except _CallFailed as exc:
            failures.append(f"attempt {attempt}: {exc}")
            log.warning("toorPIA attempt %d/%d failed: %s", attempt, max_attempts, exc)
            if isinstance(exc, _WaitBudgetSpent):
                break
        pause = backoff_s * attempt
        if attempt < max_attempts:
            if time.monotonic() + pause >= give_up_at:
                failures.append(f"no attempt {attempt + 1}: the wait budget of "
                                f"{wait_budget_s:g} s would run out")
                break
            time.sleep(pause)
    raise ToorpiaUnavailable("toorPIA API failed: " + "; ".join(failures))


def _provenance(endpoint: str, params: dict, map_no: Any) -> dict[str, Any]:
    import toorpia.client

    return {"endpoint": endpoint, "api_url": toorpia.client.API_URL, "params": params,
            "client": f"toorpia {version('toorpia')}", "map_no": map_no,
            "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _matrix(name: str, X: np.ndarray) -> np.ndarray:
    return np.asarray(check_matrix(name, X), dtype=np.float64)


def _require_context(context: EmbedContext | None) -> EmbedContext:
    if context is None:
        raise SkipMethod("toorPIA needs a context (root, dataset, tag) to find its cache")
    return context


def _no_key_reason(paths: list[Path]) -> str | None:
    """Why the maps cannot be had, naming the import pointers that bring them
    (``{mode}.dvc`` beside each ``{mode}/{tag}/seed{s}.npy``)."""
    if os.environ.get(KEY_VARIABLE):
        return None
    pointers = sorted({str(path.parent.parent.with_suffix(".dvc")) for path in paths})
    return (f"no map at {' and '.join(map(str, paths))} (`dvc pull {' '.join(pointers)}` "
            f"brings the previous release's maps) and {KEY_VARIABLE} unset")


def fit_toorpia(X: np.ndarray, seed: int, context: EmbedContext | None = None, *,
                mode: str, deadline_s: float, max_attempts: int,
                backoff_s: float, wait_budget_s: float) -> np.ndarray:
    """toorPIA map of ``X``: the validated cache if present, else one ``basemap_embedding``
    call (``l2_normalization=False``) whose result is cached with its provenance.

    Raises SkipMethod when there is no cache and no ``TOORPIA_API_KEY`` (or ``mode`` cannot be
    refilled), ToorpiaUnavailable when the API fails, ValueError for a cache of other data.
    """
    context = _require_context(context)
    X = _matrix("X", X)
    Y = external.load_cached(context, METHOD_DIR, mode, seed, X)
    if Y is not None:
        return Y
    path = external.cache_path(context, METHOD_DIR, mode, seed)
    if mode not in API_MODES:
        raise SkipMethod(f"no cache at {path}; mode {mode!r} cannot be refilled through the API "
                         f"(API modes: {sorted(API_MODES)})")
    reason = _no_key_reason([path])
    if reason:
        raise SkipMethod(reason)
    [(Y, map_no)] = _call([(API_MODES[mode], X)], deadline_s=deadline_s,
                          max_attempts=max_attempts, backoff_s=backoff_s,
                          wait_budget_s=wait_budget_s)
    external.store(Y, X, context, METHOD_DIR, mode, seed,
                   _provenance(API_MODES[mode], BASEMAP_PARAMS, map_no))
    return Y


def extend_toorpia(X_fit: np.ndarray, X_add: np.ndarray, seed: int,
                   context: EmbedContext | None = None, *, mode: str,
                   deadline_s: float, max_attempts: int, backoff_s: float,
                   wait_budget_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Basemap of ``X_fit`` and the add-plot of ``X_add`` on it.

    Cache pair: modes ``{mode}_basemap`` / ``{mode}_addplot``. Without both, and with a key
    (``mode`` "embedding" only): one ``basemap_embedding`` call, then one ``addplot_embedding``
    call per added row against that map (one row per call, so no added row influences
    another), all in one session; both files are then (re)written together.
    """
    context = _require_context(context)
    X_fit, X_add = _matrix("X_fit", X_fit), _matrix("X_add", X_add)
    if X_add.shape[1] != X_fit.shape[1]:
        raise ValueError(f"X_add must have the {X_fit.shape[1]} columns of X_fit, "
                         f"got shape {X_add.shape}")
    modes = (f"{mode}_basemap", f"{mode}_addplot")
    cached = [external.load_cached(context, METHOD_DIR, cache_mode, seed, X)
              for cache_mode, X in zip(modes, (X_fit, X_add))]
    if all(Y is not None for Y in cached):
        return cached[0], cached[1]
    paths = [external.cache_path(context, METHOD_DIR, cache_mode, seed) for cache_mode in modes]
    if mode not in API_MODES:
        raise SkipMethod(f"no cache at {' and '.join(map(str, paths))}; mode {mode!r} cannot "
                         f"be refilled through the API (API modes: {sorted(API_MODES)})")
    reason = _no_key_reason(paths)
    if reason:
        raise SkipMethod(reason)
    steps = [("basemap_embedding", X_fit)] + [("addplot_embedding", X_add[i:i + 1])
                                             for i in range(X_add.shape[0])]
    results = _call(steps, deadline_s=deadline_s, max_attempts=max_attempts,
                    backoff_s=backoff_s, wait_budget_s=wait_budget_s)
    (Y_fit, map_no), added = results[0], results[1:]
    Y_add = np.vstack([Y for Y, _ in added])
    external.store(Y_fit, X_fit, context, METHOD_DIR, modes[0], seed,
                   _provenance("basemap_embedding", BASEMAP_PARAMS, map_no))
    external.store(Y_add, X_add, context, METHOD_DIR, modes[1], seed,
                   _provenance("addplot_embedding", {"rows_per_call": 1}, map_no))
    return Y_fit, Y_add
