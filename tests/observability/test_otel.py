"""OpenTelemetry: spans of runs reach a real OTLP/HTTP receiver, continuing the caller's trace."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.run.runkit import chat_echo, create_flow, reference, upload, wait_jobs

SERVER, INTERNAL = 2, 1  # the protobuf SpanKind numbers
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
