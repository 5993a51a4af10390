"""A loopback HTTP server that answers recorded-shape responses of the real APIs and records the requests."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

from core.engine import RunContext
from core.engine.egress import EgressPolicy


class Recorded:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], tuple[int, str, bytes]] = {}
        self.requests: list[dict[str, Any]] = []
        self.port = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def route(self, method: str, path: str, body: Any, *, status: int = 200, ctype: str = "application/json") -> None:
        raw = (
            body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
        )
        self.routes[(method, path)] = (status, ctype, raw)

    def last(self) -> dict[str, Any]:
        return self.requests[-1]


def _handler(rec: Recorded) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            rec.requests.append(
                {
                    "method": method,
                    "path": parts.path,
                    "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                    "headers": dict(self.headers),
                    "body": json.loads(body) if body else None,
                }
            )
            status, ctype, raw = rec.routes.get((method, parts.path), (404, "application/json", b'{"error": "nope"}'))
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def recorded_api() -> Iterator[Recorded]:
    rec = Recorded()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(rec))
    rec.port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield rec
    finally:
        srv.shutdown()
        srv.server_close()


def allowlisted() -> RunContext:
    """A run context whose SSRF allowlist admits the loopback test server (as a deployment would)."""
    return RunContext(egress=EgressPolicy(allowed_hosts=("127.0.0.1",), timeout=5))
