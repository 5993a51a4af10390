"""A layer of two slow I/O-bound components (issue 27 #1): both run at once on the runner's pool, and both are
recorded (transactions, vertex builds) although the pool threads have no request or application context of
their own; through the HTTP run API and the editor's build stream, on the in-process job backend."""

from __future__ import annotations

import time

from core import hookimpl
from core.engine import Message, Registry
from tests import flowkit
from tests.build.buildkit import (
    PLUGINS,
    TEST_COMPONENTS,
    SlowPass,
    create_flow,
    edge,
    names,
    node,
    stream_all,
    wait_for,
)
from tests.conftest import superuser

SECONDS = 1.0
#: vertex id -> (start, end) on the monotonic clock, of each Slow I/O Pass run of the current test
SPANS: dict[str, tuple[float, float]] = {}


class SlowIOPass(SlowPass):
    """SlowPass marked I/O-bound (two in one layer share the runner's thread pool) that reads a global
    variable of its user first (a database read from a pool thread: with the embedded SQLite database's
    one connection held by the run's request, a second connection would wait for ever)."""

    key = "SlowIOPass"
    display_name = "Slow I/O Pass"
    io_bound = True

    def run(self) -> Message:
        started = time.monotonic()
        found = self.context.variable("SLOW_PREFIX")
        text = f"{found}{super().run().text}"
        SPANS[self.vertex.id] = (started, time.monotonic())
        return Message(text=text)


class VarPass(SlowPass):
    """Reads the same variable on the run's own thread (its database session then holds the connection)."""

    key = "VarPass"
    display_name = "Var Pass"

    def run(self) -> Message:
        return Message(text=f"{self.context.variable('SLOW_PREFIX')}{self.input_value}")


class _Bundle:
    @hookimpl
    def register_components(self):
        return [SlowIOPass, VarPass]


def _registry() -> Registry:
    from service_bundle_standard.bundle import all_components

    return Registry.from_classes([*all_components(), *TEST_COMPONENTS, SlowIOPass, VarPass])


def _flow() -> dict:
    """Chat Input -> Var Pass -> two Slow I/O (one layer) -> a Chat Output each."""
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    first = flowkit.node("VarPass", "VarPass-VVVVV", registry=_registry(), seconds=0)
    nodes, edges = [chat_in, first], [edge(chat_in, "message", first, "input_value")]
    for tag in ("A", "B"):
        slow = flowkit.node("SlowIOPass", f"SlowIOPass-{tag * 5}", registry=_registry(), seconds=SECONDS)
        out = node("ChatOutput", f"ChatOutput-{tag * 5}")
        nodes += [slow, out]
        edges += [edge(first, "message", slow, "input_value"), edge(slow, "message", out, "input_value")]
    return {"nodes": nodes, "edges": edges, "viewport": {"x": 0, "y": 0, "zoom": 1}}


SLOW_IDS = {"SlowIOPass-AAAAA", "SlowIOPass-BBBBB"}


def assert_ran_at_once() -> None:
    """The two slow components' runs overlapped: each started before the other ended (run one after the
    other, the second starts after the first ends). Wall time proves nothing on a loaded machine."""
    assert set(SPANS) == SLOW_IDS, SPANS
    (start_a, end_a), (start_b, end_b) = SPANS.values()
    assert start_a < end_b and start_b < end_a, f"not concurrent: {SPANS}"
    assert all(end - start >= SECONDS for start, end in SPANS.values()), SPANS  # each really waited


def _client_with_flow(make_app, name: str):
    """A client, its superuser, and the two-slow flow stored under ``name`` (its variable set)."""
    SPANS.clear()
    client = make_app(plugins=[*PLUGINS, "run", "variables", ("slowio", _Bundle())]).test_client()
    admin = superuser(client)
    made = client.post(
        "/api/v1/variables/",
        json={"name": "SLOW_PREFIX", "value": "v:", "type": "Generic", "default_fields": []},
        headers=admin.bearer,
    )
    assert made.status_code == 201, made.get_json()
    return client, admin, create_flow(client, admin, _flow(), name=name)


def test_run_api_runs_the_layer_concurrently_and_records_both(make_app):
    client, admin, flow_id = _client_with_flow(make_app, "two-slow")
    response = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "hi"}, headers=admin.key)
    assert response.status_code == 200, response.get_json()
    [run] = response.get_json()["outputs"]
    assert [o["results"]["message"]["text"].split("|")[0] for o in run["outputs"]] == ["v:v:hi", "v:v:hi"]
    assert_ran_at_once()

    def recorded():
        page = client.get(f"/api/v1/monitor/transactions?flow_id={flow_id}", headers=admin.key).get_json()
        return {t["vertex_id"] for t in page["items"] if t["status"] == "success"} >= SLOW_IDS and page

    page = wait_for(recorded)
    assert len(page["items"]) == 6  # chat input, var pass, the two slow ones, two chat outputs


def test_build_stream_runs_the_layer_concurrently_and_records_both(make_app):
    client, admin, flow_id = _client_with_flow(make_app, "two-slow-build")
    response = client.post(
        f"/api/v1/build/{flow_id}/flow", json={"inputs": {"input_value": "hi"}}, headers=admin.bearer
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    events = stream_all(client, response.get_json()["job_id"], admin.bearer)
    assert names(events)[-1] == "end", events[-1]
    built = {e["data"]["build_data"]["id"] for e in events if e["event"] == "end_vertex"}
    assert built >= SLOW_IDS
    assert_ran_at_once()

    def recorded():
        builds = client.get(f"/api/v1/monitor/builds?flow_id={flow_id}", headers=admin.bearer).get_json()
        return set(builds["vertex_builds"]) >= SLOW_IDS and builds

    builds = wait_for(recorded)
    assert all(rows[-1]["valid"] for rows in builds["vertex_builds"].values())
