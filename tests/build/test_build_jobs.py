"""Build jobs: ownership, cancel on both backends, direct-stream disconnect, the polling watchdog, metrics."""

from __future__ import annotations

import dataclasses
import logging
import time

import pytest

from core import hookimpl
from core.app import state
from core.jobs import JobState
from tests.build.buildkit import app_plugins, create_flow, names, parse, poll_all, reference_flow, slow_flow, wait_for
from tests.conftest import make_user, superuser

CANCELLED = {"success": True, "message": "Flow build cancelled successfully"}


class Recorder:
    def __init__(self) -> None:
        self.vertices: list[dict] = []

    @hookimpl
    def on_vertex_built(self, record):
        self.vertices.append(dataclasses.asdict(record))


def start(client, caller, flow_id, body=None, query="", prefix="/api/v1/build"):
    response = client.post(f"{prefix}/{flow_id}/flow{query}", json=body or {}, headers=caller.bearer)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["job_id"]


def poll_until(client, job_id, headers, event):
    """Poll until ``event`` was seen; returns the events so far."""
    seen = []
    wait_for(
        lambda: (
            seen.extend(
                parse(
                    client.get(f"/api/v1/build/{job_id}/events?event_delivery=polling", headers=headers).get_data(
                        as_text=True
                    )
                )
            )
            or event in names(seen)
        ),
        timeout=15,
    )
    return seen


# --- ownership ----------------------------------------------------------------------------------------
def test_events_and_cancel_of_another_users_job_are_404(app, client, admin, alice, bob):
    flow_id = create_flow(client, alice, slow_flow(0.5))
    job_id = start(client, alice, flow_id)
    not_found = {"detail": f"Job not found: {job_id}"}
    for delivery in ("streaming", "polling"):
        response = client.get(f"/api/v1/build/{job_id}/events?event_delivery={delivery}", headers=bob.bearer)
        assert response.status_code == 404 and response.get_json() == not_found
    assert client.get(f"/api/v1/build/{job_id}/events", headers=admin.bearer).status_code == 404  # superuser too
    response = client.post(f"/api/v1/build/{job_id}/cancel", headers=bob.key)
    assert response.status_code == 404 and response.get_json() == not_found
    # bob's attempts changed nothing: alice's build ends normally, and her poll cursor is intact
    events = poll_all(client, job_id, alice.bearer)
    assert names(events)[0] == "vertices_sorted" and names(events)[-1] == "end"
    assert client.get(f"/api/v1/build/{job_id}/events").status_code == 403  # no credentials at all
    unknown = "00000000-0000-0000-0000-000000000000"
    assert client.get(f"/api/v1/build/{unknown}/events", headers=alice.bearer).get_json() == {
        "detail": f"Job not found: {unknown}"
    }
    assert client.post(f"/api/v1/build/{unknown}/cancel", headers=alice.bearer).status_code == 404


def test_build_needs_the_callers_own_flow(client, alice, bob):
    flow_id = create_flow(client, alice, reference_flow("chat-echo.json")["data"])
    response = client.post(f"/api/v1/build/{flow_id}/flow", json={}, headers=bob.bearer)
    assert response.status_code == 404 and response.get_json() == {"detail": f"Flow with id {flow_id} not found"}
    missing = "11111111-1111-1111-1111-111111111111"
    response = client.post(f"/api/v1/build/{missing}/flow", json={}, headers=bob.bearer)
    assert response.get_json() == {"detail": f"Flow with id {missing} not found"}
    assert client.post(f"/api/v1/build/{flow_id}/flow", json={}).status_code == 403


def test_other_job_kinds_are_not_readable_as_builds(app, client, alice):
    job_id = state(app).jobs.enqueue("core.countdown", owner=alice.id, kwargs={"n": 1, "delay": 0})
    assert client.get(f"/api/v1/build/{job_id}/events", headers=alice.bearer).status_code == 404
    assert client.post(f"/api/v1/build/{job_id}/cancel", headers=alice.bearer).status_code == 404


def test_every_job_has_its_owner_and_delivery_recorded(app, client, alice):
    flow_id = create_flow(client, alice, reference_flow("chat-echo.json")["data"])
    job_id = start(client, alice, flow_id, {"inputs": {"session": "s1"}}, "?event_delivery=streaming")
    info = state(app).jobs.info(job_id)
    assert info.owner == alice.id and info.name == "build.flow"
    assert info.meta == {
        "flow_id": flow_id,
        "run_flow_id": flow_id,
        "session_id": "s1",
        "delivery": "streaming",
        "public": False,
    }
    events = parse(client.get(f"/api/v1/build/{job_id}/events", headers=alice.bearer).get_data(as_text=True))
    assert {e["data"]["session_id"] for e in events if e["event"] == "add_message"} == {"s1"}


# --- cancel -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["inprocess", "rq-simple", "rq-fork"])
def test_cancel_stops_the_build_with_a_final_event(backend, make_app, request):
    if backend == "inprocess":
        app = make_app(plugins=app_plugins())
    else:
        app = request.getfixturevalue("make_rq_app")(backend.split("-")[1])
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, slow_flow(20))
    job_id = start(client, admin, flow_id, {"inputs": {"input_value": "x"}})
    seen = poll_until(client, job_id, admin.bearer, "end_vertex")  # Chat Input done, Slow Pass running
    response = client.post(f"/api/v1/build/{job_id}/cancel", headers=admin.bearer)
    assert response.status_code == 200 and response.get_json() == CANCELLED
    rest = poll_all(client, job_id, admin.bearer)
    # stopped mid-run (no end_vertex of the 20 s Slow Pass), not after it: wall time proves nothing under load
    assert names(seen + rest).count("end_vertex") == 1
    assert "end" not in names(seen + rest)
    final = rest[-1]
    assert final["event"] == "error" and final["data"]["text"] == "Flow build cancelled"
    assert final["data"]["cancelled"] is True and final["data"]["category"] == "error"
    info = wait_for(lambda: (i := state(app).jobs.info(job_id)) is not None and i.state.terminal and i)
    assert info.state is JobState.CANCELLED
    # cancelling an ended job still answers like the reference; polls keep saying it ended
    assert client.post(f"/api/v1/build/{job_id}/cancel", headers=admin.bearer).get_json() == CANCELLED
    assert names(poll_all(client, job_id, admin.bearer)) == ["end"]
    streamed = parse(client.get(f"/api/v1/build/{job_id}/events", headers=admin.bearer).get_data(as_text=True))
    assert streamed[-1]["event"] == "error" and streamed[-1]["data"]["text"] == "Flow build cancelled"


def test_closing_a_direct_stream_cancels_its_build(app, client, admin):
    flow_id = create_flow(client, admin, slow_flow(20))
    response = client.post(
        f"/api/v1/build/{flow_id}/flow?event_delivery=direct", json={}, headers=admin.bearer, buffered=False
    )
    assert response.status_code == 200 and response.mimetype == "application/x-ndjson"
    chunks = iter(response.response)
    first = next(chunks)
    assert parse(first if isinstance(first, str) else first.decode())[0]["event"] == "vertices_sorted"
    response.close()  # the client went away
    jobs = state(app).jobs
    records = [r for r in jobs.store.jobs.values() if r.info.name == "build.flow"]
    info = wait_for(lambda: all(r.info.state.terminal for r in records) and records[-1].info)
    assert info.state is JobState.CANCELLED


# --- the polling watchdog -----------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["inprocess", "rq"])
def test_abandoned_polling_build_is_cancelled_with_an_error(backend, make_app, request, monkeypatch):
    # the timeout leaves room for the gaps between one client's polls on a loaded machine
    monkeypatch.setenv("SERVICE_BUILD_POLLING_TIMEOUT_SECONDS", "2")
    monkeypatch.setenv("SERVICE_BUILD_POLL_WAIT_SECONDS", "0.1")
    app = make_app(plugins=app_plugins()) if backend == "inprocess" else request.getfixturevalue("make_rq_app")()
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, slow_flow(20))
    kept = create_flow(client, admin, slow_flow(3), name="kept")
    before = client.get("/api/v1/monitor/job_queue", headers=admin.bearer).get_json()["polling_watchdog_kills"]
    abandoned = start(client, admin, flow_id)
    polled = start(client, admin, kept)
    client.get(f"/api/v1/build/{abandoned}/events?event_delivery=polling", headers=admin.bearer)  # then silence
    events = poll_all(client, polled, admin.bearer)  # 3 s of steady polling outlives the 2 s timeout
    assert names(events)[-1] == "end"
    info = wait_for(lambda: (i := state(app).jobs.info(abandoned)) is not None and i.state.terminal and i)
    assert info.state is JobState.CANCELLED
    late = poll_all(client, abandoned, admin.bearer)  # the client comes back: its final event is waiting
    assert late[-1]["event"] == "error" and late[-1]["data"]["text"] == "Build abandoned: no poll for 2 s"
    assert "Flow build cancelled" not in [e["data"].get("text") for e in late if e["event"] == "error"]
    metrics = client.get("/api/v1/monitor/job_queue", headers=admin.bearer).get_json()
    assert metrics["polling_watchdog_kills"] >= before + 1


def test_streaming_builds_are_not_watched(make_app, monkeypatch):
    monkeypatch.setenv("SERVICE_BUILD_POLLING_TIMEOUT_SECONDS", "0.3")
    app = make_app(plugins=app_plugins())
    client = app.test_client()
    admin = superuser(client)
    job_id = start(client, admin, create_flow(client, admin, slow_flow(1.2)), query="?event_delivery=streaming")
    time.sleep(1.0)  # nobody reads: a streaming build is not "abandoned"
    events = parse(client.get(f"/api/v1/build/{job_id}/events", headers=admin.bearer).get_data(as_text=True))
    assert names(events)[-1] == "end"


# --- records and metrics ------------------------------------------------------------------------------
def test_log_builds_controls_vertex_build_records(make_app):
    recorder = Recorder()
    app = make_app(plugins=[*app_plugins(), ("recorder", recorder)])
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"])
    job_id = start(client, admin, flow_id, {"inputs": {"input_value": "hi"}})
    poll_all(client, job_id, admin.bearer)
    assert [r["vertex_id"] for r in recorder.vertices] == ["ChatInput-AAAAA", "ChatOutput-BBBBB"]
    assert {(r["job_id"], r["user_id"], r["flow_id"], r["valid"], r["build"]) for r in recorder.vertices} == {
        (job_id, admin.id, flow_id, True, True)
    }
    recorder.vertices.clear()
    # as the reference: without build logging a build still records its transactions, not its vertex builds
    job_id = start(client, admin, flow_id, {"inputs": {"input_value": "hi"}}, "?log_builds=false")
    assert names(poll_all(client, job_id, admin.bearer))[-1] == "end"
    assert [(r["vertex_id"], r["build"]) for r in recorder.vertices] == [
        ("ChatInput-AAAAA", False),
        ("ChatOutput-BBBBB", False),
    ]


def test_job_queue_metrics_for_superusers_only(client, admin, alice):
    assert client.get("/api/v1/monitor/job_queue", headers=alice.bearer).status_code == 403
    assert client.get("/api/v1/monitor/job_queue").status_code == 403
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"])
    before = client.get("/api/v1/monitor/job_queue", headers=admin.bearer).get_json()
    job_id = start(client, admin, flow_id)
    poll_all(client, job_id, admin.bearer)
    # the build's "end" event comes before its job returns (it still stores its records): wait for the job
    wait_for(lambda: (i := state(client.application).jobs.info(job_id)) is not None and i.state.terminal)
    after = client.get("/api/v1/monitor/job_queue", headers=admin.bearer).get_json()
    assert after["backend"] == "inprocess" and after["active_jobs"] == 0
    assert after["builds_started"] == before["builds_started"] + 1
    assert after["finished"] == before["finished"] + 1
    assert "polling_watchdog_kills" in after


def test_job_queue_metrics_on_rq(make_rq_app, rq_env):
    app = make_rq_app()
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"])
    poll_all(client, start(client, admin, flow_id), admin.bearer)
    metrics = client.get("/api/v1/monitor/job_queue", headers=admin.bearer).get_json()
    assert metrics["backend"] == "redis" and metrics["job_backend"] == "rq"
    assert metrics["queue"] == rq_env.queues["simple"] and metrics["workers"] == 1
    assert metrics["builds_started"] >= 1 and metrics["finished"] >= 1
    for counter in ("cancel_published", "cancel_marker_hit", "watchdog_ended", "polling_watchdog_kills"):
        assert isinstance(metrics[counter], int)


def test_many_users_builds_do_not_mix(client, admin):
    users = [make_user(client, admin) for _ in range(3)]
    jobs = {}
    for i, user in enumerate(users):
        flow_id = create_flow(client, user, reference_flow("chat-echo.json")["data"])
        jobs[user.id] = (user, start(client, user, flow_id, {"inputs": {"input_value": f"text {i}"}}))
    for i, (user, job_id) in enumerate(jobs.values()):
        events = poll_all(client, job_id, user.bearer)
        assert [e["data"]["text"] for e in events if e["event"] == "add_message"] == [f"text {i}"] * 2


def test_the_watchdog_says_once_that_redis_is_away_and_once_that_it_is_back(caplog):
    """A job queue whose Redis is unreachable for three ticks: one warning, then one line when it is back (a
    line per tick filled the logs of every process whose Redis went away)."""
    from service_build.watchdog import Watchdog

    from core.jobs import JobBackendUnavailable

    class Store:  # the watchdog's view of the activity set: nothing stale
        ns = "watchdog-outage-test"

        def stale(self, _before: float) -> list[str]:
            return []

    class Queue:  # a queue whose backend is away for three reaps
        reaps = 0

        def reap(self) -> None:
            self.reaps += 1
            if self.reaps <= 3:
                raise JobBackendUnavailable("the job queue is unavailable")

    class Config:
        watchdog_interval = 0.01
        polling_timeout_seconds = 60

    caplog.set_level(logging.INFO, logger="service_build.watchdog")
    dog, queue = Watchdog(), Queue()
    dog.ensure(queue, Store(), Config())
    deadline = time.monotonic() + 10
    while queue.reaps < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    dog.stop.set()
    said = [r.getMessage() for r in caplog.records if r.name == "service_build.watchdog"]
    assert queue.reaps >= 6
    assert said == [
        "build watchdog: the job queue or the shared store is unavailable; retrying",
        "build watchdog: the job queue and the shared store are available again",
    ]
