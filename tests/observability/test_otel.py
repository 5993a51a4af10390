"""OpenTelemetry: spans of runs reach a real OTLP/HTTP receiver, continuing the caller's trace."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.run.runkit import chat_echo, create_flow, reference, upload, wait_jobs

SERVER, INTERNAL, CLIENT = 2, 1, 3  # the protobuf SpanKind numbers
OK, ERROR = 1, 2
INBOUND_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
INBOUND_SPAN = "00f067aa0ba902b7"


def _flush() -> None:
    from service_observability import otel

    assert otel.flush()


def test_a_sync_run_continues_the_inbound_traceparent(client, alice, receiver):
    flow = create_flow(client, alice, chat_echo())
    headers = {**alice.key, "traceparent": f"00-{INBOUND_TRACE}-{INBOUND_SPAN}-01"}
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi", "session_id": "s1"}, headers=headers)
    assert response.status_code == 200
    _flush()
    [server] = receiver.wait_for("POST /api/v1/run/<flow_id_or_name>")
    [run] = receiver.wait_for("flow.execute", flow_id=flow["id"])
    assert server["trace_id"] == INBOUND_TRACE and server["parent_id"] == INBOUND_SPAN and server["kind"] == SERVER
    assert server["attributes"]["http.response.status_code"] == 200
    assert run["trace_id"] == INBOUND_TRACE and run["parent_id"] == server["span_id"] and run["kind"] == INTERNAL
    attrs = run["attributes"]
    assert attrs["protocol"] == "run" and attrs["status"] == "ok" and attrs["session_id"] == "s1"
    assert attrs["flow_name"] == flow["name"] and len(attrs["run_id"]) == 36 and run["status"] == OK
    assert run["service"] == "service-under-test"


def test_a_failed_run_span_has_error_status_and_the_user_facing_text(client, alice, receiver):
    from tests.run.runkit import edge, flow_data, node

    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    data = flow_data([memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])
    flow = create_flow(client, alice, data)
    assert client.post(f"/api/v1/run/{flow['id']}", json={}, headers=alice.key).status_code == 500
    _flush()
    [run] = receiver.wait_for("flow.execute", flow_id=flow["id"])
    assert run["attributes"]["status"] == "error" and run["status"] == ERROR
    assert "Number of messages must be non-negative" in run["status_message"]


def test_a_streamed_run_span_is_a_child_of_its_request(client, alice, receiver):
    flow = create_flow(client, alice, chat_echo())
    response = client.post(f"/api/v1/run/{flow['id']}?stream=true", json={"input_value": "hi"}, headers=alice.key)
    assert response.status_code == 200 and b"end" in response.get_data()
    _flush()
    [server] = receiver.wait_for("POST /api/v1/run/<flow_id_or_name>")
    [run] = receiver.wait_for("flow.execute", flow_id=flow["id"])
    assert run["trace_id"] == server["trace_id"] and run["parent_id"] == server["span_id"]


def test_a_webhook_run_continues_its_request_trace_through_the_job_queue(app, client, alice, receiver):
    flow = upload(client, alice, reference("webhook-parser-chat.json"))
    headers = {**alice.key, "traceparent": f"00-{INBOUND_TRACE}-{INBOUND_SPAN}-01"}
    response = client.post(f"/api/v1/webhook/{flow['id']}", data='{"name": "Ada"}', headers=headers)
    assert response.status_code == 202
    wait_jobs(app)
    _flush()
    [server] = receiver.wait_for("POST /api/v1/webhook/<flow_id_or_name>")
    [run] = receiver.wait_for("flow.execute", flow_id=flow["id"])
    assert server["trace_id"] == INBOUND_TRACE
    assert run["trace_id"] == INBOUND_TRACE and run["parent_id"] == server["span_id"]
    assert run["attributes"]["protocol"] == "webhook" and run["attributes"]["job_id"]


def test_outbound_http_through_egress_carries_the_current_traceparent(app, receiver):
    from opentelemetry import trace
    from service_observability import otel

    from core.engine import egress

    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append({k.lower(): v for k, v in self.headers.items()})
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/x"
        policy = egress.EgressPolicy(allowed_hosts=("127.0.0.1",))
        tracer = otel.tracer()
        assert tracer is not None
        with tracer.start_as_current_span("outer") as span:
            egress.request("GET", url, policy=policy)
            egress.request("GET", url, policy=policy, headers={"traceparent": "mine"})
            ids = span.get_span_context()
        egress.request("GET", url, policy=policy)  # no span current: nothing added
    finally:
        server.shutdown()
        server.server_close()
    expected = f"00-{ids.trace_id:032x}-{ids.span_id:016x}-{int(ids.trace_flags):02x}"
    assert seen[0]["traceparent"] == expected
    assert seen[1]["traceparent"] == "mine"  # the caller's own header wins
    assert "traceparent" not in seen[2]
    assert not trace.get_current_span().get_span_context().is_valid


def test_log_records_carry_the_trace_and_span_ids(app, receiver, caplog):
    import logging

    from service_observability import otel

    tracer = otel.tracer()
    assert tracer is not None
    with tracer.start_as_current_span("logged") as span, caplog.at_level(logging.INFO):
        logging.getLogger("tests.observability").info("inside")
        ids = span.get_span_context()
    logging.getLogger("tests.observability").warning("outside")
    inside, outside = caplog.records[-2:]
    assert inside.trace_id == f"{ids.trace_id:032x}" and inside.span_id == f"{ids.span_id:016x}"
    assert outside.trace_id == "" and outside.span_id == ""


def test_nothing_is_traced_until_an_endpoint_is_set(make_app, recorder, monkeypatch):
    from service_observability import otel

    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    make_app(plugins=["accounts", "observability"])
    assert otel.tracer() is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    make_app(plugins=["accounts", "observability"])
    assert otel.tracer() is None


def test_http_and_database_spans_and_the_request_duration_histogram_come_from_the_instrumentations(
    client, alice, receiver
):
    flow = create_flow(client, alice, chat_echo())
    headers = {**alice.key, "traceparent": f"00-{INBOUND_TRACE}-{INBOUND_SPAN}-01"}
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi"}, headers=headers)
    assert response.status_code == 200
    _flush()
    [server] = receiver.wait_for("POST /api/v1/run/<flow_id_or_name>")
    attrs = server["attributes"]
    assert attrs["http.request.method"] == "POST" and attrs["http.route"] == "/api/v1/run/<flow_id_or_name>"
    assert attrs["http.response.status_code"] == 200 and attrs["url.path"] == f"/api/v1/run/{flow['id']}"
    [run] = receiver.wait_for("flow.execute", flow_id=flow["id"])
    assert run["parent_id"] == server["span_id"]
    database = [s for s in receiver.spans if s["trace_id"] == INBOUND_TRACE and "db.system.name" in s["attributes"]]
    assert database and all(s["kind"] == CLIENT for s in database)
    in_trace = {s["span_id"] for s in receiver.spans if s["trace_id"] == INBOUND_TRACE}
    assert all(s["parent_id"] in in_trace for s in database)  # under the request's or the run's span
    assert any(s["attributes"]["db.query.text"].startswith("SELECT") for s in database)
    [point] = receiver.histogram(
        "http.server.request.duration",
        **{"http.route": "/api/v1/run/<flow_id_or_name>", "http.request.method": "POST"},
    )
    assert point["unit"] == "s" and point["count"] == 1 and 0 < point["sum"] < 60
    assert point["attributes"]["http.response.status_code"] == 200 and point["attributes"]["url.scheme"] == "http"
    # the database client's connection usage, observed from the pool as the metrics are collected: the
    # pool's connections, used (another thread's, on a shared engine) or idle (the request's, given back)
    usage = {p["attributes"]["state"]: p["value"] for p in receiver.sums if p["name"] == "db.client.connections.usage"}
    assert set(usage) == {"used", "idle"} and min(usage.values()) >= 0 and usage["idle"] >= 1, usage
    # a statement outside a traced request, run or job (the batched writers' group commit, in a thread of
    # its own) makes no span: no single-statement trace of its own
    _flush()
    statements = [s for s in receiver.spans if "db.system.name" in s["attributes"]]
    assert statements and all(s["parent_id"] for s in statements), [s for s in statements if not s["parent_id"]]


def test_no_instrumentation_is_installed_while_nothing_is_exported(make_app, recorder, monkeypatch):
    from opentelemetry.instrumentation.wsgi import OpenTelemetryMiddleware
    from service_observability import instrument, otel

    from core import appstate

    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    app = make_app(plugins=["accounts", "observability"])
    assert otel.meter_provider() is None and otel.tracer_provider() is None
    assert not isinstance(app.wsgi_app, OpenTelemetryMiddleware)
    assert not instrument.tracing(appstate.engine(app))


def test_an_unsupported_protocol_or_grpc_without_its_extra_stops_start_up(make_app, monkeypatch):
    import sys

    import pytest
    from service_observability import otel

    from core.errors import StartupError

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    with pytest.raises(StartupError, match="'http/json' is not supported"):
        make_app(plugins=["accounts", "observability"])
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc.trace_exporter", None)
    with pytest.raises(StartupError, match=r"pip install 'service-observability\[grpc\]'"):
        make_app(plugins=["accounts", "observability"])
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    otel.configure()


def test_spans_are_exported_over_otlp_grpc(make_app, recorder, monkeypatch):
    from service_observability import otel

    from tests.conftest import make_user, superuser
    from tests.observability.conftest import OBS_PLUGINS, ClosingClient
    from tests.observability.otlp_receiver import GrpcReceiver

    grpc_receiver = GrpcReceiver()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", grpc_receiver.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=acme")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    try:
        app = make_app(plugins=[*OBS_PLUGINS, ("recorder", recorder)])
        app.test_client_class = ClosingClient
        client = app.test_client()
        alice = make_user(client, superuser(client))
        flow = create_flow(client, alice, chat_echo())
        headers = {**alice.key, "traceparent": f"00-{INBOUND_TRACE}-{INBOUND_SPAN}-01"}
        assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi"}, headers=headers).status_code == 200
        _flush()
        [run] = grpc_receiver.wait_for("flow.execute", flow_id=flow["id"])
        [server] = grpc_receiver.wait_for("POST /api/v1/run/<flow_id_or_name>")
        assert run["trace_id"] == INBOUND_TRACE and run["parent_id"] == server["span_id"]
        assert run["attributes"]["protocol"] == "run" and run["service"] == "service"  # the default name
        assert any(h.get("x-tenant") == "acme" for h in grpc_receiver.headers)
    finally:
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
        otel.configure()
        grpc_receiver.close()
