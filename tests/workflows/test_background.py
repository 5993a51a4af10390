"""Background v2 runs (in-process backend): status, events with Last-Event-ID replay, stop,
idempotency, ownership, a second web process, and suspend/resume through pending + resume."""

from __future__ import annotations

import time
from typing import Any

from ag_ui.core import CustomEvent, RunFinishedEvent, RunStartedEvent, TextMessageContentEvent

from core.app import state
from tests.build.buildkit import AskApproval  # noqa: F401  (the suspending test component, in SlowBundle)
from tests.conftest import make_user
from tests.workflows.wfkit import agui_events, chain, flow_with, plugins, service_frames, slow_flow, types

URL = "/api/v2/workflows"


def _start(client: Any, caller: Any, flow_id: str, **extra: Any) -> dict[str, Any]:
    r = client.post(
        URL, json={"flow_id": flow_id, "mode": "background", "input_value": "bg", **extra}, headers=caller.key
    )
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def _wait(client: Any, caller: Any, job_id: str, timeout: float = 20.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        body = client.get(f"{URL}?job_id={job_id}", headers=caller.key).get_json()
        if body["status"] not in ("queued", "in_progress"):
            return body
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end: {body}")


def test_background_job_links_status_and_result(client, alice, admin):
    flow_id = flow_with(client, alice)
    job = _start(client, alice, flow_id)
    assert job["object"] == "job" and job["status"] == "queued" and job["flow_id"] == flow_id
    job_id = job["job_id"]
    assert job["links"] == {
        "status": f"/api/v2/workflows?job_id={job_id}",
        "events": f"/api/v2/workflows/{job_id}/events",
        "stop": "/api/v2/workflows/stop",
    }
    done = _wait(client, alice, job_id)
    assert done["status"] == "completed" and done["object"] == "response" and done["job_id"] == job_id
    assert done["output"] == {"reason": "single", "text": "bg", "source": "ChatOutput-BBBBB"}
    bob = make_user(client, admin, username="bob3")
    r = client.get(f"{URL}?job_id={job_id}", headers=bob.key)
    assert r.status_code == 404 and r.get_json()["detail"]["code"] == "JOB_NOT_FOUND"
    assert client.get(f"{URL}/{job_id}/events", headers=bob.key).status_code == 404
    assert client.post(f"{URL}/stop", json={"job_id": job_id}, headers=bob.key).status_code == 404
    assert client.get(URL, headers=alice.key).status_code == 422


def test_events_replay_from_last_event_id(client, alice):
    flow_id = flow_with(client, alice)
    job_id = _start(client, alice, flow_id)["job_id"]
    _wait(client, alice, job_id)
    full = service_frames(client.get(f"{URL}/{job_id}/events", headers=alice.key).get_data())
    names = [f["event"] for f in full]
    assert names[0] == "vertices_sorted" and names[-2:] == ["output", "end"], names
    middle = full[len(full) // 2]
    rest = service_frames(
        client.get(f"{URL}/{job_id}/events", headers={**alice.key, "Last-Event-ID": middle["id"]}).get_data()
    )
    assert rest == full[len(full) // 2 + 1 :]
    # the same stored events as AG-UI, parsed back with the official models
    events = agui_events(client.get(f"{URL}/{job_id}/events?stream_protocol=agui", headers=alice.key).get_data())
    assert isinstance(events[0], RunStartedEvent) and isinstance(events[-1], RunFinishedEvent)
    assert [e.delta for e in events if isinstance(e, TextMessageContentEvent)] == ["bg"]
    r = client.get(f"{URL}/{job_id}/events?stream_protocol=nope", headers=alice.key)
    assert r.status_code == 422 and r.get_json()["detail"]["code"] == "UNKNOWN_STREAM_PROTOCOL"


def test_background_agui_protocol_is_remembered(client, alice):
    flow_id = flow_with(client, alice)
    job_id = _start(client, alice, flow_id, stream_protocol="agui")["job_id"]
    _wait(client, alice, job_id)
    assert "RUN_FINISHED" in types(agui_events(client.get(f"{URL}/{job_id}/events", headers=alice.key).get_data()))


def test_stop_cancels_a_running_job(client, alice):
    flow_id = flow_with(client, alice, slow_flow(5.0))
    job_id = _start(client, alice, flow_id)["job_id"]
    time.sleep(0.3)
    r = client.post(f"{URL}/stop", json={"job_id": job_id}, headers=alice.key)
    assert r.status_code == 200 and r.get_json()["status"] == "cancelled", r.get_json()
    done = _wait(client, alice, job_id)
    assert done["status"] == "cancelled"
    frames = service_frames(client.get(f"{URL}/{job_id}/events", headers=alice.key).get_data())
    assert frames[-1]["event"] == "cancelled"
    again = client.post(f"{URL}/stop", json={"job_id": job_id}, headers=alice.key).get_json()
    assert again["status"] == "cancelled" and again["message"] == "Workflow already ended"
    assert client.post(f"{URL}/stop", json={}, headers=alice.key).status_code == 422


def test_idempotency_key_returns_the_first_job(client, alice, admin):
    flow_id = flow_with(client, alice)
    first = _start(client, alice, flow_id, idempotency_key="order-42")["job_id"]
    second = _start(client, alice, flow_id, idempotency_key="order-42")["job_id"]
    assert first == second
    other_key = _start(client, alice, flow_id, idempotency_key="order-43")["job_id"]
    assert other_key != first
    bob = make_user(client, admin, username="bob4")
    bob_flow = flow_with(client, bob)
    bobs = _start(client, bob, bob_flow, idempotency_key="order-42")["job_id"]
    assert bobs != first  # keys are per owner
    _wait(client, alice, first)
    _wait(client, alice, other_key)
    _wait(client, bob, bobs)


def test_job_polled_from_a_second_web_process(make_app, app, client, alice):
    flow_id = flow_with(client, alice)
    job_id = _start(client, alice, flow_id)["job_id"]
    second = make_app(plugins=plugins())  # another app on the same database and config directory
    other = second.test_client()
    done = _wait(other, alice, job_id)
    assert done["status"] == "completed" and done["output"]["text"] == "bg"
    frames = service_frames(other.get(f"{URL}/{job_id}/events", headers=alice.key).get_data())
    assert frames[-1]["event"] == "end"


def test_suspend_pending_and_resume(client, alice, admin):
    flow_id = flow_with(client, alice, chain(("AskApproval", "AskApproval-CCCCC", {})))
    job_id = _start(client, alice, flow_id, input_value="ship it")["job_id"]
    paused = _wait(client, alice, job_id)
    assert paused["status"] == "suspended"
    request_id = paused["human_request"]["request_id"]
    assert paused["human_request"]["request"]["question"] == "May I say 'ship it'?"
    pending = client.get(f"{URL}/pending?flow_id={flow_id}", headers=alice.key).get_json()["pending"]
    assert [p["request_id"] for p in pending] == [request_id] and pending[0]["job_id"] == job_id
    bob = make_user(client, admin, username="bob5")
    assert client.get(f"{URL}/pending?flow_id={flow_id}", headers=bob.key).get_json()["pending"] == []
    r = client.post(f"{URL}/{job_id}/resume", json={"request_id": request_id, "decision": "yes"}, headers=bob.key)
    assert r.status_code == 404
    events = agui_events(client.get(f"{URL}/{job_id}/events?stream_protocol=agui", headers=alice.key).get_data())
    custom = [e for e in events if isinstance(e, CustomEvent)]
    assert custom[0].name == "service.human_input_required" and custom[0].value["request_id"] == request_id
    r = client.post(f"{URL}/{job_id}/resume", json={"request_id": request_id, "decision": "yes"}, headers=alice.key)
    assert r.status_code == 200, r.get_json()
    resumed = r.get_json()["job_id"]
    done = _wait(client, alice, resumed)
    assert done["status"] == "completed" and done["output"]["text"].startswith("ship it:yes")
    r = client.post(f"{URL}/{job_id}/resume", json={"request_id": request_id, "decision": "no"}, headers=alice.key)
    assert r.status_code == 409
    # issue 27: the paused job's status follows the run it was resumed as (a client polls the id it paused)
    followed = _wait(client, alice, job_id)
    assert followed["status"] == "completed" and followed["output"]["text"].startswith("ship it:yes")
    assert client.get(f"{URL}?job_id={job_id}", headers=bob.key).status_code == 404
    assert client.get(f"{URL}/pending?flow_id={flow_id}", headers=alice.key).get_json()["pending"] == []


def test_jobs_have_owners(app, client, alice):
    flow_id = flow_with(client, alice)
    job_id = _start(client, alice, flow_id)["job_id"]
    info = state(app).jobs.info(job_id)
    assert info.owner == alice.id and info.name == "workflows.run"
    _wait(client, alice, job_id)


def test_an_odd_job_id_is_a_404_not_a_crash(client, alice):
    """The paused-id lookup (issue 27) must not turn a job id with any characters into a shared-store key."""
    for job_id in ("\x7f\U000f4a6f/..", "a:b c", "x" * 300):
        response = client.get(URL, query_string={"job_id": job_id}, headers=alice.key)
        assert response.status_code == 404, (job_id, response.get_json())
