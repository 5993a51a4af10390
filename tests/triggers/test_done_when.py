"""Issue 32's "Done when", as an automation user would try it through the API: a flow on a schedule of a few
seconds fails once, its execution says why, a retry succeeds, the error flow posted the failure to a webhook
(a local HTTP receiver), and a signed delivery from a sender with the wrong secret is refused with 404."""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest
from service_triggers.ticker import tick

from tests.build.buildkit import SlowBundle, edge, node
from tests.run.runkit import create_flow
from tests.triggers.conftest import TRIGGERS
from tests.triggers.test_executions import executions, settle
from tests.triggers.test_webhooks import deliver, make_trigger, webhook_flow


@pytest.fixture
def receiver():
    """A local HTTP server that keeps the bodies posted to it: its URL and the list."""
    posted: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            posted.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/alerts", posted
    server.shutdown()
    server.server_close()


@pytest.fixture
def app(make_app, recorder):
    return make_app(
        plugins=[*TRIGGERS, ("recorder", recorder), ("slowtest", SlowBundle())],
        triggers_tick_s=0,
        ssrf_allowed_hosts=("127.0.0.1",),  # the error flow posts to the local receiver
    )


def flaky_flow(marker: str) -> dict:
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    flaky = node("FailOnce", "FailOnce-FFFFF", marker=marker)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    edges = [edge(chat_in, "message", flaky, "input_value"), edge(flaky, "message", chat_out, "input_value")]
    return {"nodes": [chat_in, flaky, chat_out], "edges": edges, "viewport": {"x": 0, "y": 0, "zoom": 1}}


def alert_flow(url: str) -> dict:
    """Chat Input (the failure's details, JSON) -> Type Convert (to JSON) -> API Request POST to ``url``."""
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    convert = node("TypeConverterComponent", "TypeConverterComponent-CCCCC", output_type="JSON")
    post = node("APIRequest", "APIRequest-PPPPP", url_input=url, method="POST")
    edges = [edge(chat_in, "message", convert, "input_data"), edge(convert, "data_output", post, "body")]
    return {"nodes": [chat_in, convert, post], "edges": edges, "viewport": {"x": 0, "y": 0, "zoom": 1}}


def test_a_scheduled_flow_fails_once_says_why_is_retried_and_the_error_flow_posts_the_failure(
    app, client, alice, receiver, tmp_path
):
    url, posted = receiver
    flow = create_flow(client, alice, flaky_flow(str(tmp_path / "marker")), name="every few seconds")
    alerts = create_flow(client, alice, alert_flow(url), name="alerts")
    policy = {"attempts": 1, "error_flow_id": alerts["id"]}
    assert client.put(f"/api/v1/executions/policies/{flow['id']}", json=policy, headers=alice.key).status_code == 200
    made = client.post(
        "/api/v1/schedules", json={"flow_id": flow["id"], "interval_s": 2, "input_value": "report"}, headers=alice.key
    )
    assert made.status_code == 201, made.get_json()
    schedule = made.get_json()
    assert len(schedule["next_fire_times"]) == 5

    deadline = time.monotonic() + 30
    while not executions(client, alice, flow_id=flow["id"]):  # the ticker's work, on the real clock
        assert time.monotonic() < deadline, "the schedule never fired"
        tick(app)
        time.sleep(0.2)
    paused = client.patch(f"/api/v1/schedules/{schedule['id']}", json={"enabled": False}, headers=alice.key)
    assert paused.status_code == 200
    settle(app)

    # the run's last row rides a group commit another thread may lead: give it a moment (a row that stays
    # queued still fails below)
    deadline = time.monotonic() + 10
    while executions(client, alice, flow_id=flow["id"])[0]["status"] in ("queued", "running"):
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    [failed] = executions(client, alice, flow_id=flow["id"])
    assert failed["trigger"] == "schedule" and failed["status"] == "error" and failed["source_id"] == schedule["id"]
    assert failed["error"] == (
        "Error running component Fail Once (FailOnce-FFFFF): the upstream service was not ready (first attempt)"
    )
    assert failed["input"] == "report"

    [alerted] = executions(client, alice, flow_id=alerts["id"])
    assert alerted["trigger"] == "error_flow" and alerted["status"] == "ok" and alerted["source_id"] == failed["id"]
    [sent] = posted
    assert failed["id"] in sent.decode() and "not ready" in sent.decode()

    retried = client.post(f"/api/v1/executions/{failed['id']}/retry", headers=alice.key)
    assert retried.status_code == 202
    settle(app)
    done = client.get(f"/api/v1/executions/{retried.get_json()['id']}", headers=alice.key).get_json()
    assert done["status"] == "ok" and done["output"] == "done: report" and done["retry_of"] == failed["id"]
    assert len(posted) == 1  # a success alerts nobody

    hooked = create_flow(client, alice, webhook_flow(), name="hooked")
    trigger = make_trigger(client, alice, hooked["id"])
    refused = deliver(client, trigger, json.dumps({"event": "x"}).encode(), secret="whsec_not-the-right-one")
    assert refused.status_code == 404 and refused.get_json() == {"detail": "Not found"}
    assert executions(client, alice, flow_id=hooked["id"]) == []
