"""POST /api/v1/webhook/{flow}: auth rules, raw bodies, background completion, the job status URL."""

from __future__ import annotations

import pytest

from core import hookimpl
from core.app import state
from tests.run.conftest import PLUGINS
from tests.run.runkit import answer, create_flow, edge, flow_data, node, reference, upload, wait_jobs

NOT_JSON_ANSWER = '```json\n{\n  "payload": "not json at all"\n}\n```'


def _status(client, caller, started):
    response = client.get(started["status_url"], headers=caller.key)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_auth_enabled_rules(app, client, alice, bob):
    flow = upload(client, alice, reference("webhook-parser-chat.json"))
    url = f"/api/v1/webhook/{flow['id']}"
    missing = client.post(url, data="hi")
    assert missing.status_code == 403
    assert missing.get_json() == {"detail": "API key required when webhook authentication is enabled"}
    bad = client.post(url, data="hi", headers={"x-api-key": "sk-bad"})
    assert bad.status_code == 403 and bad.get_json() == {"detail": "Invalid API key"}
    # a bearer token is not a webhook credential
    assert client.post(url, data="hi", headers=alice.bearer).status_code == 403
    foreign = client.post(url, data="hi", headers=bob.key)
    assert foreign.status_code == 404 and foreign.get_json() == {"detail": f"Flow identifier {flow['id']} not found"}
    assert client.post("/api/v1/webhook/no-such-flow", data="x", headers=alice.key).status_code == 404
    empty = client.post(url, data="", headers=alice.key)
    assert empty.status_code == 400 and "empty" in empty.get_json()["detail"]
    assert client.post(url, data="  \n", headers=alice.key).status_code == 400
    assert state(app).jobs.active_jobs() == 0


def test_reference_fixture_runs_in_background_and_reports_its_outcome(app, client, alice, bob, recorder):
    flow = upload(client, alice, reference("webhook-parser-chat.json"))
    response = client.post(
        f"/api/v1/webhook/{flow['id']}", data="not json at all", headers=alice.key, content_type="text/plain"
    )
    assert response.status_code == 202
    started = response.get_json()
    assert started["message"] == "Task started in the background" and started["status"] == "in progress"
    assert started["status_url"] == f"/api/v1/webhook/jobs/{started['job_id']}"
    wait_jobs(app)
    status = _status(client, alice, started)
    assert status["status"] == "finished" and status["error"] is None
    assert status["job_id"] == started["job_id"] and status["flow_id"] == flow["id"]
    assert status["created_at"] and status["started_at"] and status["ended_at"]
    assert answer(status["result"]) == NOT_JSON_ANSWER
    assert status["result"]["session_id"] == flow["id"]
    # the chat answer was stored for the flow owner, in the flow's default session
    assert NOT_JSON_ANSWER in recorder.texts(flow["id"])
    assert {m["_user_id"] for m in recorder.messages} == {alice.id}
    # the status is owner-scoped
    assert client.get(started["status_url"], headers=bob.key).status_code == 404
    assert client.get(started["status_url"]).status_code == 403
    assert client.get("/api/v1/webhook/jobs/nope", headers=alice.key).status_code == 404


def test_json_body_and_query_key(app, client, alice):
    flow = upload(client, alice, reference("webhook-parser-chat.json"))
    response = client.post(f"/api/v1/webhook/{flow['id']}?x-api-key={alice.api_key}", json={"name": "Ada", "n": 2})
    assert response.status_code == 202
    wait_jobs(app)
    status = _status(client, alice, response.get_json())
    assert answer(status["result"]) == '```json\n{\n  "name": "Ada",\n  "n": 2\n}\n```'


def test_by_endpoint_name_and_flag_not_checked(app, client, alice):
    document = reference("webhook-parser-chat.json")
    document.update(endpoint_name="hook-ep", webhook=False)
    upload(client, alice, document)
    response = client.post("/api/v1/webhook/hook-ep", data="{}", headers=alice.key)
    assert response.status_code == 202  # the flow's webhook flag is not checked (as the reference)
    wait_jobs(app)
    assert _status(client, alice, response.get_json())["status"] == "finished"


def test_failing_flow_marks_the_job_failed_with_the_component_named(app, client, alice):
    webhook = node("Webhook", "Webhook-WWWWW")
    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    data = flow_data([webhook, memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])
    flow = create_flow(client, alice, data)
    response = client.post(f"/api/v1/webhook/{flow['id']}", data='{"a": 1}', headers=alice.key)
    assert response.status_code == 202
    wait_jobs(app)
    status = _status(client, alice, response.get_json())
    assert status["status"] == "failed" and status["result"] is None
    assert status["error"] == (
        "Error running component Message History (Memory-MMMMM): Number of messages must be non-negative."
    )
    assert "Traceback" not in status["error"]


def test_job_events_are_recorded(app, client, alice):
    flow = upload(client, alice, reference("webhook-parser-chat.json"))
    job_id = client.post(f"/api/v1/webhook/{flow['id']}", data="x", headers=alice.key).get_json()["job_id"]
    wait_jobs(app)
    names = [e.name for e in state(app).jobs.read_events(job_id)]
    assert names[-1] == "finished"
    assert "run.add_message" in names and "run.end" in names


# --- SERVICE_WEBHOOK_AUTH_ENABLE=false ------------------------------------------------------------------
class AnyOwnerFlows:
    """``find_flow(user_id=None, public=False)`` answered across owners (what the run plugin asks the flows
    plugin for when webhook auth is off), delegating to the flows plugin with the owner's id."""

    def __init__(self) -> None:
        self.owners: dict[str, str] = {}
        self.host = None

    @hookimpl
    def find_flow(self, user_id, flow_id_or_name, public):
        if user_id is not None or public or flow_id_or_name not in self.owners:
            return None
        return self.host.hooks.find_flow(
            user_id=self.owners[flow_id_or_name], flow_id_or_name=flow_id_or_name, public=False
        )


@pytest.fixture
def open_app(make_app, recorder):
    lookup = AnyOwnerFlows()
    app = make_app(plugins=[*PLUGINS, ("recorder", recorder), ("anyowner", lookup)], webhook_auth_enable=False)
    lookup.host = state(app).host
    app.any_owner = lookup
    return app


def test_auth_disabled_runs_as_the_flow_owner_without_a_key(open_app, recorder):
    from tests.conftest import make_user, superuser

    client = open_app.test_client()
    admin = superuser(client)
    owner = make_user(client, admin)
    flow = upload(client, owner, reference("webhook-parser-chat.json"))
    open_app.any_owner.owners[flow["id"]] = owner.id
    response = client.post(f"/api/v1/webhook/{flow['id']}", data="not json at all")
    assert response.status_code == 202, response.get_json()
    wait_jobs(open_app)
    job = state(open_app).jobs.info(response.get_json()["job_id"])
    assert job.owner == owner.id  # the owner is the actor
    status = _status(client, owner, response.get_json())
    assert answer(status["result"]) == NOT_JSON_ANSWER
    assert {m["_user_id"] for m in recorder.messages} == {owner.id}
    # unknown flows are still 404, an empty body still 400
    assert client.post("/api/v1/webhook/no-such", data="x").status_code == 404
    assert client.post(f"/api/v1/webhook/{flow['id']}", data="").status_code == 400


def test_auth_disabled_with_the_flows_plugin_alone(make_app):
    """The flows plugin must answer ``find_flow(user_id=None, public=False)`` for any owner."""
    from tests.conftest import make_user, superuser

    app = make_app(plugins=PLUGINS, webhook_auth_enable=False)
    client = app.test_client()
    owner = make_user(client, superuser(client))
    flow = upload(client, owner, reference("webhook-parser-chat.json"))
    with app.app_context():
        found = state(app).host.hooks.find_flow(user_id=None, flow_id_or_name=flow["id"], public=False)
    assert found is not None and found.id == flow["id"] and found.user_id == owner.id
    response = client.post(f"/api/v1/webhook/{flow['id']}", data="not json at all")
    assert response.status_code == 202
    wait_jobs(app)
    assert answer(_status(client, owner, response.get_json())["result"]) == NOT_JSON_ANSWER
