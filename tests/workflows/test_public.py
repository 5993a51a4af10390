"""Anonymous public sharing: the shares API, the grant matrix (share, legacy, both, revoked, authz on/off),
sanitized reads, anonymous v2 runs (stream only, client_id, no overrides, no owner variables, sanitized
errors), revocation of starts and resumes, the rate limit across two workers, the cleanup job."""

from __future__ import annotations

import time
from typing import Any

import pytest

from core import hookimpl
from core.app import state
from core.jobs import JobState
from core.runs import checkpoints
from core.runs import public as public_runs
from core.runs.jobs import resume
from tests.conftest import make_user, superuser
from tests.workflows.wfkit import agui_events, chain, failing_flow, flow_with, plugins, service_frames, types

PUBLIC = "/api/v2/workflows/public"


def _share(client: Any, caller: Any, flow_id: str, **body: Any) -> Any:
    return client.post(f"/api/v1/flows/{flow_id}/shares", json=body, headers=caller.bearer)


def _run_public(client: Any, flow_id: str, text: str = "hi", cookie: str | None = "visitor-1", **body: Any) -> Any:
    if cookie:
        client.set_cookie("client_id", cookie)
    else:
        client.delete_cookie("client_id")
    payload = {"flow_id": flow_id, "input_value": text, "mode": "stream", **body}
    return client.post(PUBLIC, json=payload)


def _reachable(client: Any, flow_id: str) -> int:
    """Status of the anonymous read; the anonymous v2 run and public build must agree with it."""
    read = client.get(f"/api/v1/flows/public_flow/{flow_id}").status_code
    run = _run_public(client, flow_id).status_code
    client.set_cookie("client_id", "visitor-1")
    build = client.post(f"/api/v1/build_public_tmp/{flow_id}/flow", json={}).status_code
    assert read == run == build, (read, run, build)
    return read


@pytest.fixture
def app(make_app):
    return make_app(plugins=plugins("build"))


def test_shares_api(client, alice, bob):
    flow_id = flow_with(client, alice)
    for level in ("read", "write", "admin"):
        r = _share(client, alice, flow_id, permission_level=level)
        assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", "permission_level"]
    r = _share(client, alice, flow_id, scope="USER")
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", "scope"]
    assert _share(client, bob, flow_id).status_code == 404  # another user's flow
    created = _share(client, alice, flow_id, permission_level="execute", scope="PUBLIC")
    assert created.status_code == 201
    share = created.get_json()
    assert share["permission_level"] == "execute" and share["scope"] == "PUBLIC" and share["flow_id"] == flow_id
    again = _share(client, alice, flow_id)
    assert again.status_code == 200 and again.get_json()["id"] == share["id"]  # one canonical share
    listed = client.get(f"/api/v1/flows/{flow_id}/shares", headers=alice.bearer).get_json()
    assert listed["effective_grant"] == "share" and [s["id"] for s in listed["shares"]] == [share["id"]]
    assert listed["public_url"] == f"/playground/{flow_id}"
    assert client.get(f"/api/v1/flows/{flow_id}/shares", headers=bob.bearer).status_code == 404
    # a public link is a capability, not a discovery grant
    bobs = client.get("/api/v1/flows/?get_all=true&remove_example_flows=true", headers=bob.bearer).get_json()
    assert flow_id not in [f["id"] for f in bobs]
    assert client.delete(f"/api/v1/flows/{flow_id}/shares/{share['id']}", headers=bob.bearer).status_code == 404
    assert client.delete(f"/api/v1/flows/{flow_id}/shares/{share['id']}", headers=alice.bearer).status_code == 204
    assert client.delete(f"/api/v1/flows/{flow_id}/shares/{share['id']}", headers=alice.bearer).status_code == 404
    assert client.get(f"/api/v1/flows/{flow_id}/shares", headers=alice.bearer).get_json()["effective_grant"] is None


def test_grant_matrix(client, alice):
    flow_id = flow_with(client, alice)
    grant = lambda: client.get(f"/api/v1/flows/{flow_id}/shares", headers=alice.bearer).get_json()["effective_grant"]  # noqa: E731
    assert _reachable(client, flow_id) == 404 and grant() is None  # private
    share_id = _share(client, alice, flow_id).get_json()["id"]
    assert _reachable(client, flow_id) == 200 and grant() == "share"  # canonical share
    client.patch(f"/api/v1/flows/{flow_id}", json={"access_type": "PUBLIC"}, headers=alice.bearer)
    assert _reachable(client, flow_id) == 200 and grant() == "share"  # both: the share wins
    client.delete(f"/api/v1/flows/{flow_id}/shares/{share_id}", headers=alice.bearer)
    assert _reachable(client, flow_id) == 200 and grant() == "access_type"  # falls back to the legacy grant
    client.patch(f"/api/v1/flows/{flow_id}", json={"access_type": "PRIVATE"}, headers=alice.bearer)
    assert _reachable(client, flow_id) == 404 and grant() is None  # fully revoked
    # legacy A2A grant: an A2A-enabled flow in a project whose auth_type is none
    project = client.post(
        "/api/v1/projects/", json={"name": "agents", "auth_settings": {"auth_type": "none"}}, headers=alice.bearer
    ).get_json()
    a2a = flow_with(client, alice, name="agent", folder_id=project["id"], a2a_enabled=True)
    assert _reachable(client, a2a) == 200
    assert client.get(f"/api/v1/flows/{a2a}/shares", headers=alice.bearer).get_json()["effective_grant"] == "a2a_folder"
    client.patch(
        f"/api/v1/projects/{project['id']}", json={"auth_settings": {"auth_type": "apikey"}}, headers=alice.bearer
    )
    assert _reachable(client, a2a) == 404


def test_sanitized_read(client, alice):
    data = chain()
    data["nodes"][1]["data"]["node"]["template"]["api_key"] = {
        "type": "str",
        "password": True,
        "value": "sk-owner-secret",
        "show": True,
        "name": "api_key",
    }
    flow_id = flow_with(client, alice, data)
    _share(client, alice, flow_id)
    r = client.get(f"/api/v1/flows/public_flow/{flow_id}")
    assert r.status_code == 200
    body = r.get_json()
    assert "sk-owner-secret" not in r.get_data(as_text=True)
    assert body["user_id"] is None and body["public_access"] == {"can_read": True, "can_execute": True}


def test_public_v2_run_rules(client, alice):
    flow_id = flow_with(client, alice)
    _share(client, alice, flow_id)
    r = _run_public(client, flow_id, cookie=None)
    assert r.status_code == 400 and r.get_json() == {"detail": "No client_id cookie found"}
    r = _run_public(client, flow_id, mode="sync")
    assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", "mode"]
    for member, value in (("tweaks", {"ChatOutput-BBBBB": {"sender_name": "x"}}), ("data", {"nodes": []})):
        r = _run_public(client, flow_id, **{member: value})
        assert r.status_code == 422 and r.get_json()["detail"][0]["loc"] == ["body", member]
    r = _run_public(client, flow_id, "hello")
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    frames = service_frames(r.get_data())
    assert frames[-2]["event"] == "output" and frames[-2]["data"]["content"] == "hello"
    events = agui_events(_run_public(client, flow_id, "hey", stream_protocol="agui").get_data())
    assert types(events)[0] == "RUN_STARTED" and types(events)[-1] == "RUN_FINISHED"
    # sessions are namespaced by client and flow
    virtual = public_runs.virtual_flow_id("visitor-1", flow_id)
    assert events[0].thread_id == virtual
    events = agui_events(_run_public(client, flow_id, "hey", stream_protocol="agui", session_id="mine").get_data())
    assert events[0].thread_id == f"{virtual}:mine"


def test_public_errors_are_sanitized(client, alice):
    flow_id = flow_with(client, alice, failing_flow())
    _share(client, alice, flow_id)
    raw = _run_public(client, flow_id).get_data(as_text=True)
    # component ids are in the (public) flow itself; the error's message, type and stack are not shown
    assert "always fails" not in raw and "ValueError" not in raw and "Traceback" not in raw
    frames = service_frames(raw)
    assert frames[-1]["event"] == "error" and frames[-1]["data"]["error"] == "Flow execution failed"
    events = agui_events(_run_public(client, flow_id, stream_protocol="agui").get_data())
    assert events[-1].message == "Flow execution failed"


class VariableSpy:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    @hookimpl(tryfirst=True)
    def get_variable(self, user_id, name):
        self.asked.append((user_id, name))


def test_anonymous_runs_never_see_the_owners_variables(make_app):
    spy = VariableSpy()
    app = make_app(plugins=plugins(("spy", spy)))
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    created = client.post(
        "/api/v1/variables/",
        json={"name": "BOT_NAME", "value": "Owner Secret Bot", "type": "Credential", "default_fields": []},
        headers=alice.bearer,
    )
    assert created.status_code == 201, created.get_json()
    data = chain()
    data["nodes"][1]["data"]["node"]["template"]["sender_name"].update(load_from_db=True, value="BOT_NAME")
    flow_id = flow_with(client, alice, data)
    # the owner's own run resolves it
    owner = client.post("/api/v2/workflows", json={"flow_id": flow_id, "mode": "stream"}, headers=alice.key)
    assert "Owner Secret Bot" in owner.get_data(as_text=True)
    _share(client, alice, flow_id)
    spy.asked.clear()
    raw = _run_public(client, flow_id).get_data(as_text=True)
    assert "Owner Secret Bot" not in raw
    assert service_frames(raw)[-1]["data"]["error"] == "Flow execution failed"
    assert spy.asked and all(user != alice.id for user, _ in spy.asked)
    assert {user for user, _ in spy.asked} == {public_runs.principal("visitor-1")}


def test_revocation_blocks_new_starts_but_not_running_ones(client, alice):
    from tests.workflows.wfkit import slow_flow

    flow_id = flow_with(client, alice, slow_flow(1.0))
    share_id = _share(client, alice, flow_id).get_json()["id"]
    client.set_cookie("client_id", "visitor-9")
    running = client.post(PUBLIC, json={"flow_id": flow_id, "input_value": "x", "mode": "stream"}, buffered=False)
    chunks = iter(running.response)
    first = next(chunks)
    assert b"vertices_sorted" in first
    assert client.delete(f"/api/v1/flows/{flow_id}/shares/{share_id}", headers=alice.bearer).status_code == 204
    assert _run_public(client, flow_id).status_code == 404  # later starts: refused at once
    rest = b"".join(chunks)
    running.close()
    assert b'"event": "end"' in rest  # the run already going finished


def test_revocation_blocks_resumes(client, alice, app):
    flow_id = flow_with(client, alice, chain(("AskApproval", "AskApproval-CCCCC", {})))
    share_id = _share(client, alice, flow_id).get_json()["id"]
    frames = service_frames(_run_public(client, flow_id, "go", cookie="visitor-5").get_data())
    paused = [f for f in frames if f["event"] == "suspended"]
    assert paused, [f["event"] for f in frames]
    request_id = paused[0]["data"]["request_id"]
    owner = public_runs.job_owner("visitor-5")
    with app.app_context():
        assert [c.id for c in checkpoints.pending(owner)] == [request_id]
    client.delete(f"/api/v1/flows/{flow_id}/shares/{share_id}", headers=alice.bearer)
    with app.app_context():
        job_id = resume(request_id, owner, "yes")
    jobs = state(app).jobs
    end = time.monotonic() + 10
    while not (info := jobs.info(job_id)).state.terminal and time.monotonic() < end:
        time.sleep(0.02)
    assert info.state is JobState.FAILED and "not found" in info.error


def test_authz_default_plugin_denies(make_app):
    app = make_app(plugins=plugins("build", "authz"), authz_enabled=True)
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    flow_id = flow_with(client, alice)
    _share(client, alice, flow_id)
    assert client.get(f"/api/v1/flows/public_flow/{flow_id}").status_code == 403
    assert _run_public(client, flow_id).status_code == 403
    client.set_cookie("client_id", "v")
    assert client.post(f"/api/v1/build_public_tmp/{flow_id}/flow", json={}).status_code == 403
    # authorization off: the same share works
    off = make_app(plugins=plugins("build", "authz"), authz_enabled=False)
    assert off.test_client().get(f"/api/v1/flows/public_flow/{flow_id}").status_code == 200


def test_rate_limit_across_two_workers(make_app):
    first = make_app(plugins=plugins(), public_flow_rate_limit_per_minute=3)
    second = make_app(plugins=plugins(), public_flow_rate_limit_per_minute=3)  # same config dir: one server
    c1, c2 = first.test_client(), second.test_client()
    admin = superuser(c1)
    alice = make_user(c1, admin, username="alice")
    flow_id = flow_with(c1, alice)
    _share(c1, alice, flow_id)
    codes = [_run_public(c, flow_id).status_code for c in (c1, c2, c1, c2)]
    assert codes == [200, 200, 200, 429]
    r = _run_public(c1, flow_id)
    assert r.status_code == 429 and r.headers["Retry-After"] == "60"
    assert r.get_json() == {"detail": "Too many requests. Please try again later.", "retry_after": "60"}


def test_cleanup_job_deletes_expired_anonymous_sessions(client, alice, app):
    from service_flows.cleanup import CLEANUP_JOB, tick

    flow_id = flow_with(client, alice)
    _share(client, alice, flow_id)
    answered = _run_public(client, flow_id, "remember me", cookie="visitor-7")
    assert answered.status_code == 200 and b'"event": "end"' in answered.get_data()
    principal = public_runs.principal("visitor-7")

    def stored() -> int:
        import uuid

        import sqlalchemy as sa
        from service_monitor.models import Message

        with app.app_context():
            from core import db

            query = sa.select(sa.func.count()).where(Message.user_id == uuid.UUID(principal))
            return int(db.session().scalar(query) or 0)

    assert stored() == 2  # the visitor's question and the answer
    with app.app_context():
        assert public_runs.expire(app) == []  # not expired yet
        assert stored() == 2
        job_id = tick(app)
        assert job_id is not None and tick(app) is None  # one job per interval, across processes
    jobs = state(app).jobs
    end = time.monotonic() + 10
    while not (info := jobs.info(job_id)).state.terminal and time.monotonic() < end:
        time.sleep(0.02)
    assert info.name == CLEANUP_JOB and info.state is JobState.FINISHED and info.result == {"expired_principals": 0}
    with app.app_context():
        assert public_runs.expire(app, now=time.time() + 86400 + 1) == [principal]
    assert stored() == 0
    assert client.get(f"/api/v1/flows/{flow_id}", headers=alice.bearer).status_code == 200  # the owner's flow stays


def test_signed_in_visitor_keeps_the_conversation_in_shared_messages(client, alice, bob):
    flow_id = flow_with(client, alice)
    _share(client, alice, flow_id)
    client.set_cookie("client_id", "bob-browser")
    r = client.post(
        PUBLIC, json={"flow_id": flow_id, "input_value": "hi from bob", "mode": "stream"}, headers=bob.bearer
    )
    assert r.status_code == 200 and b'"event": "end"' in r.get_data()
    shared = client.get(f"/api/v1/monitor/messages/shared?source_flow_id={flow_id}", headers=bob.bearer)
    assert shared.status_code == 200, shared.get_json()
    texts = [m["text"] for m in shared.get_json()]
    assert texts == ["hi from bob", "hi from bob"]  # the question and the echoed answer
    # the owner does not see bob's conversation among their own shared messages
    mine = client.get(f"/api/v1/monitor/messages/shared?source_flow_id={flow_id}", headers=alice.bearer).get_json()
    assert mine == []
