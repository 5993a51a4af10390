"""``python -m bench.otlp_sink PORT``: a local OTLP/HTTP receiver for the bench, in its own process.

It decodes each ``POST /v1/traces`` with the real protobuf messages (``opentelemetry-proto``, installed with
the exporter) and counts the spans, answers ``POST /v1/metrics`` and anything else with an empty success, and
tells ``GET /count`` ``{"spans", "requests", "flow_execute"}``: the bench checks that export happened.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

counts = {"spans": 0, "requests": 0, "flow_execute": 0}
lock = threading.Lock()
EMPTY = ExportTraceServiceResponse().SerializeToString()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/v1/traces":
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
            with lock:
                counts["requests"] += 1
                counts["spans"] += len(spans)
                counts["flow_execute"] += sum(1 for span in spans if span.name == "flow.execute")
        self._answer(EMPTY, "application/x-protobuf")

    def do_GET(self) -> None:
        with lock:
            self._answer(json.dumps(counts).encode(), "application/json")

    def _answer(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
