"""A fake toorPIA HTTP server on 127.0.0.1 (stdlib, one thread) for contract tests.

It speaks the part of the API that ``drfidelity.methods.toorpia`` uses (methods.md, "toorPIA
client"): ``POST /auth/login`` (JSON ``{"apiKey"}`` -> ``{"sessionKey"}``), and multipart
``POST /data/basemap_embedding`` / ``/data/addplot_embedding`` whose ``files`` field is a
headerless CSV (gzip'd unless the client fell back to plain). The map it returns is the first two
columns of the uploaded rows, so tests can check that rows come back in order.

``behaviour`` selects a failure: ``ok``, ``login_401`` (the 401 body echoes the key, as a
careless server might), ``login_503`` (a multi-line HTML error page at login), ``gzip_415``
(rejects ``.csv.gz`` uploads), ``error_500_json``, ``error_502_html``, ``hang`` (never answers
the basemap call), ``wrong_rows`` (one row short).
Every request is recorded in ``requests`` as ``(path, fields)``.
"""

from __future__ import annotations

import email.parser
import email.policy
import gzip
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

SESSION = "fake-session-1"
MAP_NO = 17
BEHAVIOURS = ("ok", "login_401", "login_503", "gzip_415", "error_500_json", "error_502_html",
              "hang", "wrong_rows")
ERROR_PAGE = ("<html>\n<head><title>503 Service Temporarily Unavailable</title></head>\n<body>\n"
              + "<p>The server is down for maintenance.</p>\n" * 40 + "</body>\n</html>\n")


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Field name -> (file name, bytes) of a multipart/form-data body."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    return {part.get_param("name", header="content-disposition"):
            (part.get_filename(), part.get_payload(decode=True))
            for part in message.iter_parts()}


class FakeToorpia:
    """Start with ``with FakeToorpia(behaviour) as server:``; ``server.url`` is the base URL."""

    def __init__(self, behaviour: str = "ok") -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour must be one of {BEHAVIOURS}, got {behaviour!r}")
        self.behaviour = behaviour
        self.requests: list[tuple[str, dict]] = []
        self.release = threading.Event()  # set on exit, so a hanging handler can finish
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)

    def __enter__(self) -> "FakeToorpia":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def respond(self, path: str, headers, body: bytes) -> tuple[int, str, bytes]:
        """(status, content type, body) for one request."""
        if path == "/auth/login":
            key = json.loads(body)["apiKey"]
            self.requests.append((path, {"apiKey": key}))
            if self.behaviour == "login_401":
                return 401, "application/json", json.dumps(
                    {"message": f"invalid apiKey {key}"}).encode()
            if self.behaviour == "login_503":
                return 503, "text/html", ERROR_PAGE.encode()
            return 200, "application/json", json.dumps({"sessionKey": SESSION}).encode()
        fields = _multipart(headers["Content-Type"], body)
        self.requests.append((path, fields))
        if headers.get("session-key") != SESSION:
            return 401, "application/json", b'{"message": "no session"}'
        filename, upload = fields["files"]
        if filename.endswith(".gz"):
            if self.behaviour == "gzip_415":
                return 415, "application/json", b'{"message": "UNSUPPORTED_FILE_TYPE"}'
            upload = gzip.decompress(upload)
        if path == "/data/basemap_embedding":
            if self.behaviour == "hang":
                self.release.wait()
                return 503, "text/plain", b"released"
            if self.behaviour == "error_500_json":
                return 500, "application/json", b'{"message": "engine crashed"}'
            if self.behaviour == "error_502_html":
                return 502, "text/html", b"<html><body>Bad Gateway</body></html>"
        xy = np.loadtxt(io.BytesIO(upload), delimiter=",", ndmin=2)[:, :2]
        if self.behaviour == "wrong_rows":
            xy = xy[:-1]
        if path == "/data/basemap_embedding":
            reply = {"resdata": {"baseXyData": xy.tolist(), "mapNo": MAP_NO},
                     "shareUrl": f"{self.url}/share/{MAP_NO}"}
        else:
            reply = {"resdata": xy.tolist(), "addPlotNo": len(self.requests),
                     "abnormalityStatus": "normal"}
        return 200, "application/json", json.dumps(reply).encode()

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, content_type, reply = fake.respond(self.path.split("?")[0],
                                                           self.headers, body)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args) -> None:  # keep test output clean
                pass

        return Handler
