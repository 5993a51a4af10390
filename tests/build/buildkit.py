"""Helpers of the build tests: a test-only bundle (slow and failing components), flows, event readers.

The bundle is registered in-process as a ``(name, plugin)`` pair, and in
worker / server subprocesses through an entry point in a temporary
dist-info (see :func:`bundle_site`), the way a real bundle is installed.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

from core import hookimpl
from core.engine import Component, Message, Output, Registry
from core.engine.inputs import FloatInput, MessageTextInput
from core.engine.types import to_text
from tests import flowkit
from tests.flowkit import edge
from tests.flowkit import load_reference as reference_flow

__all__ = ["edge", "reference_flow"]  # re-exported for the build tests

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = ("chat-echo.json", "data-operations-uppercase.json", "webhook-parser-chat.json")
#: the input each reference fixture is built with in the tests
FIXTURE_INPUT = {
    "chat-echo.json": "hello",
    "data-operations-uppercase.json": "hello there",
    "webhook-parser-chat.json": None,
}
PLUGINS = ["accounts", "flows", "build", "monitor", "standard"]  # monitor: /api/v1/monitor/job_queue


class SlowPass(Component):
    """Waits ``seconds`` (checking for cancel every 10 ms), then forwards its input."""

    key = "SlowPass"
    display_name = "Slow Pass"
    description = "Test only: waits, then forwards the message."
    category = "testing"
    inputs = [MessageTextInput("input_value", "Input", ""), FloatInput("seconds", "Seconds", 1.0)]
    outputs = [Output("message", "Message", "run", ["Message"])]

    def run(self) -> Message:
        end = time.monotonic() + float(self.seconds or 0)
        while time.monotonic() < end:
            self.context.check()
            time.sleep(0.01)
        return Message(text=f"{to_text(self.input_value)}|pid={os.getpid()}")


class Boom(Component):
    key = "Boom"
    display_name = "Boom"
    description = "Test only: always fails."
    category = "testing"
    inputs = [MessageTextInput("input_value", "Input", "")]
    outputs = [Output("message", "Message", "run", ["Message"])]

    def run(self) -> Message:
        raise ValueError("boom: this component always fails")


class AskApproval(Component):
    """Pauses the run with a question; resumed, it answers with the decision it was given."""

    key = "AskApproval"
    display_name = "Ask Approval"
    description = "Test only: suspends the run until someone answers."
    category = "testing"
    inputs = [MessageTextInput("input_value", "Input", "")]
    outputs = [Output("message", "Message", "run", ["Message"])]

    def run(self) -> Message:
        resumed = self.resumed()
        if resumed is None:
            text = to_text(self.input_value)
            self.suspend({"question": f"May I say {text!r}?", "pid": os.getpid()}, state={"text": text})
        return Message(text=f"{resumed['state']['text']}:{resumed['answer']}|pid={os.getpid()}")


class FailOnce(Component):
    """Fails the first time it runs (it leaves the file ``marker``), then forwards its input."""

    key = "FailOnce"
    display_name = "Fail Once"
    description = "Test only: fails on its first run, passes afterwards."
    category = "testing"
    inputs = [MessageTextInput("input_value", "Input", ""), MessageTextInput("marker", "Marker file", "")]
    outputs = [Output("message", "Message", "run", ["Message"])]

    def run(self) -> Message:
        marker = Path(to_text(self.marker))
        if not marker.exists():
            marker.write_text("failed once")
            raise ValueError("the upstream service was not ready (first attempt)")
        return Message(text=f"done: {to_text(self.input_value)}")


TEST_COMPONENTS = [SlowPass, Boom, AskApproval, FailOnce]


class SlowBundle:
    @hookimpl
    def register_components(self):
        return TEST_COMPONENTS


@hookimpl
def register_components():  # the module itself is the bundle when loaded through its entry point
    return TEST_COMPONENTS


def bundle_site(tmp: Path) -> Path:
    """A directory with a dist-info whose entry point registers this module as bundle ``slowtest``."""
    site = tmp / "site"
    info = site / "svc_build_slowtest-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: svc-build-slowtest\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[service.bundles]\nslowtest = buildkit\n")
    return site


def child_env(tmp: Path, **extra: str) -> dict[str, str]:
    """Environment of a worker or server subprocess: no SERVICE_* of ours, the test bundle importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(
        SERVICE_ENV_FILE=os.devnull,
        SERVICE_LOG_LEVEL="warning",
        SERVICE_CONFIG_DIR=str(tmp),
        PYTHONPATH=os.pathsep.join(filter(None, [str(bundle_site(tmp)), str(HERE), str(REPO), env.get("PYTHONPATH")])),
    )
    env.update(extra)
    return env


def app_plugins() -> list[Any]:
    return [*PLUGINS, ("slowtest", SlowBundle())]


# --- flows ---------------------------------------------------------------------------------------
_registry: Registry | None = None


def registry() -> Registry:
    global _registry
    if _registry is None:
        from service_bundle_standard.bundle import all_components

        _registry = Registry.from_classes([*all_components(), *TEST_COMPONENTS])
    return _registry


def node(key: str, node_id: str, **values: Any) -> dict[str, Any]:
    """A catalog node of the standard bundle or of this test bundle (SlowPass, Boom)."""
    return flowkit.node(key, node_id, registry=registry(), **values)


def chain(*middle: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """Chat Input -> middle components (key, id, values) -> Chat Output."""
    nodes = [node("ChatInput", "ChatInput-AAAAA")]
    for key, nid, values in middle:
        nodes.append(node(key, nid, **values))
    nodes.append(node("ChatOutput", "ChatOutput-BBBBB"))
    fields = {"ChatOutput": "input_value"}
    edges = []
    for a, b in itertools.pairwise(nodes):
        out = a["data"]["node"]["outputs"][0]["name"]
        edges.append(edge(a, out, b, fields.get(b["data"]["type"], "input_value")))
    return {"nodes": nodes, "edges": edges, "viewport": {"x": 0, "y": 0, "zoom": 1}}


#: the events of a build of :func:`slow_flow` (chat input, Slow Pass, chat output)
SLOW_FLOW_EVENTS = [
    "vertices_sorted",
    "build_start",
    "add_message",
    "end_vertex",
    "end_vertex",
    "add_message",
    "end_vertex",
    "end",
]
#: the members of a vertex's build data (``end_vertex`` events, ``/build/{flow}/vertices/{id}``)
VERTEX_BUILD_KEYS = {
    "id",
    "inactivated_vertices",
    "next_vertices_ids",
    "top_level_vertices",
    "valid",
    "params",
    "data",
    "timestamp",
}
#: the events of a build of the chat echo flow
CHAT_ECHO = ["vertices_sorted", "build_start", "add_message", "end_vertex", "add_message", "end_vertex", "end"]


def slow_flow(seconds: float = 1.0) -> dict[str, Any]:
    return chain(("SlowPass", "SlowPass-SSSSS", {"seconds": seconds}))


def failing_flow() -> dict[str, Any]:
    return chain(("Boom", "Boom-XXXXX", {}))


# --- HTTP helpers --------------------------------------------------------------------------------
def create_flow(client: Any, caller: Any, data: dict[str, Any], name: str = "flow", **extra: Any) -> str:
    response = client.post("/api/v1/flows/", json={"name": name, "data": data, **extra}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return str(response.get_json()["id"])


def parse(body: str) -> list[dict[str, Any]]:
    """Events of an NDJSON body (stream or poll)."""
    return [json.loads(chunk) for chunk in body.split("\n\n") if chunk.strip()]


def names(events: list[dict[str, Any]]) -> list[str]:
    return [e["event"] for e in events]


def poll_all(
    client: Any,
    job_id: str,
    headers: dict[str, str] | None = None,
    *,
    prefix: str = "/api/v1/build",
    timeout: float = 30.0,
) -> list[dict[str, Any]]:
    """Poll until ``end``/``error``; every event once."""
    events: list[dict[str, Any]] = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        response = client.get(f"{prefix}/{job_id}/events?event_delivery=polling", headers=headers or {})
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.mimetype == "application/x-ndjson"
        batch = parse(response.get_data(as_text=True))
        events += batch
        if batch and batch[-1]["event"] in ("end", "error"):
            return events
    raise AssertionError(f"no end after {timeout} s: {names(events)}")


def stream_all(
    client: Any, job_id: str, headers: dict[str, str] | None = None, *, prefix: str = "/api/v1/build"
) -> list[dict[str, Any]]:
    response = client.get(f"{prefix}/{job_id}/events", headers=headers or {})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/x-ndjson"
    return parse(response.get_data(as_text=True))


def wait_for(predicate: Any, timeout: float = 10.0, interval: float = 0.02) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")
