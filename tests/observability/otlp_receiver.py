"""A local OTLP/HTTP receiver: decodes each ``POST /v1/traces`` and ``/v1/metrics`` body with the real
protobuf messages.

Spans are kept as plain dicts: ``name``, ``trace_id``/``span_id``/``parent_id`` (hex), ``kind``, ``status``
(code number), ``attributes`` (decoded values), ``service`` and ``instance`` (the resource's ``service.name`` and
``service.instance.id``). Histogram
points are kept as ``{name, unit, attributes, count, sum}``, sums (counters, up-down counters) as
``{name, attributes, value}``.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class Receiver:
    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.points: list[dict[str, Any]] = []
        self.sums: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/v1/traces":
                    receiver._take(body)
                    answer = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    receiver._take_metrics(body)
                    answer = ExportMetricsServiceResponse().SerializeToString()
                else:
                    receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                    answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _take(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for rs in request.resource_spans:
            resource = {a.key: _value(a.value) for a in rs.resource.attributes}
            for ss in rs.scope_spans:
                for span in ss.spans:
                    self.spans.append(
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_id": span.parent_span_id.hex(),
                            "kind": span.kind,
                            "status": span.status.code,
                            "status_message": span.status.message,
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                            "service": resource.get("service.name"),
                            "instance": resource.get("service.instance.id"),
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                        }
                    )

    def _take_metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest()
        request.ParseFromString(body)
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    if metric.WhichOneof("data") == "sum":  # counters and up-down counters
                        for number in metric.sum.data_points:
                            self.sums.append(
                                {
                                    "name": metric.name,
                                    "attributes": {a.key: _value(a.value) for a in number.attributes},
                                    "value": number.as_int if number.HasField("as_int") else number.as_double,
                                }
                            )
                    if metric.WhichOneof("data") != "histogram":
                        continue
                    for point in metric.histogram.data_points:
                        attributes = {a.key: _value(a.value) for a in point.attributes}
                        self.points.append(
                            {
                                "name": metric.name,
                                "unit": metric.unit,
                                "attributes": attributes,
                                "count": point.count,
                                "sum": point.sum,
                            }
                        )

    def histogram(self, name: str, **attributes: Any) -> list[dict[str, Any]]:
        return [
            p
            for p in self.points
            if p["name"] == name and all(p["attributes"].get(k) == v for k, v in attributes.items())
        ]

    def named(self, name: str) -> list[dict[str, Any]]:
        return [s for s in self.spans if s["name"] == name]

    def wait_for(self, name: str, count: int = 1, timeout: float = 15.0, **attributes: Any) -> list[dict[str, Any]]:
        end = time.monotonic() + timeout
        while True:
            found = [s for s in self.named(name) if all(s["attributes"].get(k) == v for k, v in attributes.items())]
            if len(found) >= count or time.monotonic() > end:
                return found
            time.sleep(0.05)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class GrpcReceiver(Receiver):
    """The same receiver served over OTLP/gRPC (``grpcio``'s server and the proto package's service stubs)."""

    def __init__(self) -> None:
        from concurrent import futures

        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        self.spans = []
        self.points = []
        self.sums = []
        self.headers = []
        receiver = self

        class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> ExportTraceServiceResponse:
                receiver.headers.append(dict(context.invocation_metadata()))
                receiver._take(request.SerializeToString())
                return ExportTraceServiceResponse()

        self.grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(), self.grpc_server)
        port = self.grpc_server.add_insecure_port("127.0.0.1:0")
        self.grpc_server.start()
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self.grpc_server.stop(grace=None)
