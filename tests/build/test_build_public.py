"""Public builds: PUBLIC flows only, per ``client_id`` principal, stored definition, namespaced sessions, limits."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from core import hookimpl
from core.app import state
from tests.build.buildkit import CHAT_ECHO, app_plugins, create_flow, names, parse, poll_all, reference_flow, slow_flow
from tests.conftest import superuser

PREFIX = "/api/v1/build_public_tmp"


def visitor(client, client_id: str):
    """A test client whose browser holds the ``client_id`` cookie (the test client's jar replaces Cookie headers)."""
    other = client.application.test_client()
    other.set_cookie("client_id", client_id)
    return other


def virtual(client_id: str, flow_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{client_id}_{flow_id}"))


class OwnerVariables:
    """Answers ``get_variable`` for the flow owner only, and remembers who asked."""

    def __init__(self) -> None:
        self.owner: str | None = None
        self.asked: list[str] = []
        self.records: list[dict] = []

    @hookimpl
    def get_variable(self, user_id, name):
        self.asked.append(user_id)
        return "Owner Secret" if user_id == self.owner and name == "OWNER_NAME" else None

    @hookimpl
    def on_vertex_built(self, record):
        self.records.append(dataclasses.asdict(record))


@pytest.fixture
def spy():
    return OwnerVariables()


@pytest.fixture
def app(make_app, spy):
    return make_app(plugins=[*app_plugins(), ("spy", spy)], public_flow_rate_limit_per_minute=8)


@pytest.fixture
def public_flow(client, alice):
    return create_flow(client, alice, reference_flow("chat-echo.json")["data"], access_type="PUBLIC")


def start(client, flow_id, client_id, body=None, query="", **kw):
    return visitor(client, client_id).post(f"{PREFIX}/{flow_id}/flow{query}", json=body or {}, **kw)


def test_public_build_runs_as_the_visitor_under_a_virtual_flow(client, alice, public_flow, spy):
    response = start(client, public_flow, "visitor-1", {"inputs": {"input_value": "hi", "session": "s1"}})
    assert response.status_code == 200 and set(response.get_json()) == {"job_id"}
    job_id = response.get_json()["job_id"]
    events = poll_all(visitor(client, "visitor-1"), job_id, prefix=PREFIX)
    assert names(events) == CHAT_ECHO
    vid = virtual("visitor-1", public_flow)
    messages = [e["data"] for e in events if e["event"] == "add_message"]
    assert {m["flow_id"] for m in messages} == {vid}
    assert {m["session_id"] for m in messages} == {f"{vid}:s1"}  # the visitor's session, namespaced
    assert [m["text"] for m in messages] == ["hi", "hi"]
    assert {r["flow_id"] for r in spy.records} == {vid}
    assert alice.id not in {r["user_id"] for r in spy.records}  # never the owner
    info = state(client.application).jobs.info(job_id)
    assert info.owner.startswith("public:") and info.meta["public"] is True
    # an already namespaced session is kept as it is; no session means the virtual flow id
    again = start(client, public_flow, "visitor-1", {"inputs": {"input_value": "x", "session": f"{vid}:s1"}})
    assert {
        e["data"]["session_id"]
        for e in poll_all(visitor(client, "visitor-1"), again.get_json()["job_id"], prefix=PREFIX)
        if e["event"] == "add_message"
    } == {f"{vid}:s1"}
    plain = start(client, public_flow, "visitor-1", {"inputs": {"input_value": "x"}})
    assert {
        e["data"]["session_id"]
        for e in poll_all(visitor(client, "visitor-1"), plain.get_json()["job_id"], prefix=PREFIX)
        if e["event"] == "add_message"
    } == {vid}


def test_public_jobs_belong_to_their_client_id(client, alice, public_flow):
    job_id = start(client, public_flow, "visitor-1", {"inputs": {"input_value": "hi"}}).get_json()["job_id"]
    not_found = {"detail": f"Job not found: {job_id}"}
    other = visitor(client, "visitor-2").get(f"{PREFIX}/{job_id}/events?event_delivery=polling")
    assert other.status_code == 404 and other.get_json() == not_found
    assert visitor(client, "visitor-2").post(f"{PREFIX}/{job_id}/cancel").get_json() == not_found
    # the flow owner cannot read the visitor's job either, and no visitor can read a user's job
    assert client.get(f"/api/v1/build/{job_id}/events", headers=alice.bearer).status_code == 404
    user_job = client.post(f"/api/v1/build/{public_flow}/flow", json={}, headers=alice.bearer).get_json()["job_id"]
    assert visitor(client, "visitor-1").get(f"{PREFIX}/{user_job}/events").status_code == 404
    # the visitor itself can
    streamed = parse(visitor(client, "visitor-1").get(f"{PREFIX}/{job_id}/events").get_data(as_text=True))
    assert names(streamed) == CHAT_ECHO


def test_public_cancel(client, alice):
    flow_id = create_flow(client, alice, slow_flow(20), access_type="PUBLIC")
    job_id = start(client, flow_id, "v").get_json()["job_id"]
    response = visitor(client, "v").post(f"{PREFIX}/{job_id}/cancel")
    assert response.get_json() == {"success": True, "message": "Flow build cancelled successfully"}
    events = poll_all(visitor(client, "v"), job_id, prefix=PREFIX)
    assert events[-1]["event"] == "error" and events[-1]["data"]["text"] == "Flow build cancelled"


def test_public_build_refusals(client, alice, public_flow):
    private = create_flow(client, alice, reference_flow("chat-echo.json")["data"], name="private")
    for path, method in (
        (f"{PREFIX}/{public_flow}/flow", "post"),
        (f"{PREFIX}/{uuid.uuid4()}/events", "get"),
        (f"{PREFIX}/{uuid.uuid4()}/cancel", "post"),
    ):
        response = getattr(client, method)(path, json={} if method == "post" else None)
        assert response.status_code == 400 and response.get_json() == {"detail": "No client_id cookie found"}
    response = start(client, private, "v")
    assert response.status_code == 404 and response.get_json() == {"detail": f"Flow with id {private} not found"}
    assert start(client, str(uuid.uuid4()), "v").status_code == 404
    data = reference_flow("data-operations-uppercase.json")["data"]
    refused = start(client, public_flow, "v", {"data": data})
    assert refused.status_code == 400 and "stored definition" in refused.get_json()["detail"]
    assert start(client, public_flow, "v", {"data": None}).status_code == 200


def test_public_run_never_uses_the_owners_variables(client, alice, spy):
    data = reference_flow("chat-echo.json")["data"]
    output = next(n for n in data["nodes"] if n["id"] == "ChatOutput-BBBBB")
    field = output["data"]["node"]["template"]["sender_name"]
    field.update(value="OWNER_NAME", load_from_db=True, show=True)
    flow_id = create_flow(client, alice, data, access_type="PUBLIC")
    spy.owner = alice.id
    owned = client.post(
        f"/api/v1/build/{flow_id}/flow", json={"inputs": {"input_value": "a"}}, headers=alice.bearer
    ).get_json()["job_id"]
    events = poll_all(client, owned, alice.bearer)
    assert [e["data"]["sender_name"] for e in events if e["event"] == "add_message"][-1] == "Owner Secret"
    spy.asked.clear()
    job_id = start(client, flow_id, "visitor", {"inputs": {"input_value": "a"}}).get_json()["job_id"]
    events = poll_all(visitor(client, "visitor"), job_id, prefix=PREFIX)
    assert events[-1]["event"] == "error"
    assert events[-1]["data"]["text"] == "sender_name: variable 'OWNER_NAME' not found."
    assert spy.asked and alice.id not in spy.asked


def test_public_builds_are_rate_limited_per_ip(client, alice, public_flow):
    codes = [start(client, public_flow, "v", query="?event_delivery=direct").status_code for _ in range(8)]
    assert codes == [200] * 8
    response = start(client, public_flow, "v")
    assert response.status_code == 429 and response.headers["Retry-After"] == "60"
    assert response.get_json() == {"detail": "Too many requests. Please try again later.", "retry_after": "60"}
    other_ip = start(client, public_flow, "v", environ_base={"REMOTE_ADDR": "10.9.8.7"})
    assert other_ip.status_code == 200
    # reading events and cancelling are not counted
    job_id = other_ip.get_json()["job_id"]
    for _ in range(10):
        assert visitor(client, "v").get(f"{PREFIX}/{job_id}/events?event_delivery=polling").status_code == 200


def test_public_direct_build(make_app):
    app = make_app(plugins=app_plugins())
    client = app.test_client()
    admin = superuser(client)
    flow_id = create_flow(client, admin, reference_flow("chat-echo.json")["data"], access_type="PUBLIC")
    response = start(client, flow_id, "d", {"inputs": {"input_value": "direct"}}, "?event_delivery=direct")
    assert response.mimetype == "application/x-ndjson"
    assert names(parse(response.get_data(as_text=True))) == CHAT_ECHO
