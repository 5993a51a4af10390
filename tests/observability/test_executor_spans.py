"""The executor's runs are ``flow.execute`` spans too, continuing the caller's trace into the executor process.

``service-exec serve`` runs in a child process exporting to the local OTLP/HTTP receiver; each request carries
a W3C ``traceparent``, so the trace goes caller -> the executor's ``SERVER`` span -> ``flow.execute`` ->
components -> the model call (to the local OpenAI-protocol server). ``service-exec run`` continues the
``TRACEPARENT`` environment variable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.jobkit import stop_processes
from tests.models.conftest import llm  # noqa: F401 - the fixture
from tests.models.test_observe_model_calls import model_flow
from tests.observability.otlp_receiver import Receiver
from tests.run.runkit import chat_echo
from tests.serverkit import free_port, spawn, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
KEY = "exec-key-0123456789"
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
OK, ERROR = 1, 2  # protobuf status codes
SERVER, CLIENT = 2, 3  # protobuf span kinds
RUN_ATTRIBUTES = {"flow_id", "flow_name", "run_id", "session_id", "protocol", "status", "duration_ms"}


def _traceparent(span: str = CALLER_SPAN) -> str:
    return f"00-{TRACE}-{span}-01"


@pytest.fixture
def receiver():
    found = Receiver()
    yield found
    found.close()


@pytest.fixture
def flows(tmp_path) -> dict[str, Path]:
    out = {}
    for name, data in {"echo": chat_echo(), "model": model_flow(False)}.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"id": f"{name}-flow", "name": name, "data": data}))
        out[name] = path
    return out


def _env(receiver: Receiver, llm: Any, **extra: str) -> dict[str, str]:  # noqa: F811
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SERVICE_", "TRACEPARENT"))}
    env.update(
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        OTEL_BSP_SCHEDULE_DELAY="50",
        SERVICE_EXEC_API_KEY=KEY,
        SERVICE_SSRF_ALLOWED_HOSTS="127.0.0.1",
        OPENAI_COMPATIBLE_BASE_URL=llm.url,
        OPENAI_COMPATIBLE_API_KEY="sk-test",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "executor"), str(ROOT), env.get("PYTHONPATH")])),
        **extra,
    )
    return env


@pytest.fixture
def served(receiver, llm, flows, tmp_path):  # noqa: F811
    port = free_port()
    log = tmp_path / "serve.log"
    args = [sys.executable, "-m", "service_exec.cli", "serve", str(flows["echo"]), str(flows["model"])]
    proc = spawn([*args, "--port", str(port), "--workers", "1"], _env(receiver, llm), log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, lambda: log.read_text()[-3000:])
        yield base
    finally:
        stop_processes([proc])


def _post(base: str, path: str, body: dict[str, Any], span: str = CALLER_SPAN, **params: str) -> requests.Response:
    headers = {"x-api-key": KEY, "traceparent": _traceparent(span)}
    return requests.post(f"{base}{path}", json=body, headers=headers, params=params, timeout=60)


def _run_span(receiver: Receiver, caller_span: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The executor's server span for the request made as ``caller_span``, and its one ``flow.execute`` child."""
    end = time.monotonic() + 30  # the span processor exports within 50 ms; a loaded machine may take longer
    while True:
        servers = [s for s in receiver.spans if s["kind"] == SERVER and s["parent_id"] == caller_span]
        runs = [s for s in receiver.named("flow.execute") if servers and s["parent_id"] == servers[0]["span_id"]]
        if runs or time.monotonic() > end:
            break
        time.sleep(0.05)
    [server] = servers
    assert server["trace_id"] == TRACE and server["service"] == "service-executor"
    [run] = runs
    assert run["trace_id"] == TRACE
    return server, run


def test_served_runs_continue_the_callers_trace_down_to_the_model_call(served, receiver, llm):  # noqa: F811
    llm.reply("one two three", usage={"prompt_tokens": 17, "completion_tokens": 3})
    answer = _post(served, "/api/v1/run/model-flow", {"input_value": "count", "session_id": "s-1"}, "00000000000000a1")
    assert answer.status_code == 200, answer.text
    server, run = _run_span(receiver, "00000000000000a1")
    assert server["name"] == "POST /api/v1/run/<flow_id_or_name>"
    attrs = run["attributes"]
    assert set(attrs) >= RUN_ATTRIBUTES
    assert attrs["protocol"] == "executor" and attrs["executor.api"] == "run" and attrs["status"] == "ok"
    assert attrs["flow_id"] == "model-flow" and attrs["session_id"] == "s-1" and run["status"] == OK
    components = {s["attributes"]["component.id"]: s for s in receiver.spans if s["parent_id"] == run["span_id"]}
    assert set(components) == {"ChatInput-AAAAA", "LanguageModelComponent-MMMMM", "ChatOutput-BBBBB"}
    [call] = receiver.wait_for("chat test-model")
    assert call["kind"] == CLIENT and call["parent_id"] == components["LanguageModelComponent-MMMMM"]["span_id"]
    assert call["attributes"]["gen_ai.usage.input_tokens"] == 17 and call["trace_id"] == TRACE
    # the provider request carried the trace on (the engine's egress helper)
    [sent] = [r for r in llm.requests if r["path"].endswith("/chat/completions")]
    traceparent = {k.lower(): v for k, v in sent["headers"].items()}["traceparent"]
    assert traceparent.split("-")[1:3] == [TRACE, components["LanguageModelComponent-MMMMM"]["span_id"]]


def test_v2_sync_and_stream_and_a_failed_run(served, receiver, llm):  # noqa: F811
    sync = _post(served, "/api/v2/workflows", {"flow_id": "echo-flow", "input_value": "hi"}, "00000000000000b1")
    assert sync.status_code == 200 and sync.json()["status"] == "completed"
    stream = _post(
        served, "/api/v2/workflows", {"flow_id": "echo-flow", "input_value": "hi", "mode": "stream"}, "00000000000000b2"
    )
    assert stream.status_code == 200 and '"event": "end"' in stream.text
    llm.reply("", status=400)  # not retried
    failed = _post(served, "/api/v1/run/model", {"input_value": "x"}, "00000000000000b3")
    assert failed.status_code == 500
    for caller, api in (("00000000000000b1", "workflows"), ("00000000000000b2", "workflows")):
        _server, run = _run_span(receiver, caller)
        assert run["attributes"]["executor.api"] == api and run["attributes"]["status"] == "ok"
        assert {s["attributes"]["component.id"] for s in receiver.spans if s["parent_id"] == run["span_id"]} == {
            "ChatInput-AAAAA",
            "ChatOutput-BBBBB",
        }
    _server, run = _run_span(receiver, "00000000000000b3")
    assert run["attributes"]["status"] == "error" and run["status"] == ERROR
    assert run["status_message"] == failed.json()["detail"]  # the user-facing failure text


def test_service_exec_run_continues_traceparent(receiver, llm, flows, tmp_path):  # noqa: F811
    env = _env(receiver, llm, TRACEPARENT=_traceparent())
    done = subprocess.run(
        [sys.executable, "-m", "service_exec.cli", "run", str(flows["echo"]), "--input", "hello"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    [run] = receiver.wait_for("flow.execute")  # exported before the process ended
    assert run["trace_id"] == TRACE and run["parent_id"] == CALLER_SPAN
    assert run["attributes"]["executor.api"] == "cli" and run["attributes"]["status"] == "ok"


def test_an_endpoint_this_install_cannot_export_to_stops_start_up(receiver, llm, flows):  # noqa: F811
    env = _env(receiver, llm, OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
    done = subprocess.run(
        [sys.executable, "-m", "service_exec.cli", "serve", str(flows["echo"]), "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 2 and "exports http/protobuf only" in done.stderr
    assert receiver.spans == []
