"""The role matrix: a project shared with teams at each built-in role, tried by each role on each surface.

A non-member always gets 404 (the project does not exist for them); a member without the right gets 403.
"""

from __future__ import annotations

import io
import json
import time

import pytest

from tests.conftest import make_user, superuser
from tests.run.runkit import chat_echo, create_flow, wait_jobs

PLUGINS = [
    "accounts", "flows", "variables", "run", "catalog", "standard", "build", "workflows", "versions", "triggers",
    "files", "teams", "knowledge", "documents", "monitor", "observability", "mcp", "responses",
]  # fmt: skip
ROLES = {"viewer": "read", "run-only": "execute", "developer": "write", "admin": "admin"}

#: surface -> expected status per caller (owner, viewer, run-only, developer, admin, outsider)
MATRIX = {
    "GET flow": (200, 200, 200, 200, 200, 404),
    "GET project": (200, 200, 200, 200, 200, 404),
    "PATCH flow": (200, 403, 403, 200, 200, 404),
    "PATCH project": (200, 403, 403, 200, 200, 404),
    "run (v1)": (200, 403, 200, 200, 200, 404),
    "run (v2 workflows)": (200, 403, 200, 200, 200, 404),
    "build": (200, 403, 200, 200, 200, 404),
    "webhook": (202, 403, 202, 202, 202, 404),
    "share": (201, 403, 403, 403, 201, 404),
    "GET versions": (200, 200, 200, 200, 200, 404),
    "POST version": (201, 403, 403, 201, 201, 404),
    "GET schedules of the flow": (200, 200, 200, 200, 200, 404),
    "POST schedule": (201, 403, 403, 201, 201, 404),
    "GET executions of the flow": (200, 200, 200, 200, 200, 404),
    "GET triggers of the flow": (200, 200, 200, 200, 200, 404),
    "GET flow files (v1)": (200, 200, 200, 200, 200, 404),
    "upload flow file (v1)": (201, 403, 403, 201, 201, 404),
    "GET shared file (v2)": (200, 200, 200, 200, 200, 404),
    "rename shared file (v2)": (200, 403, 403, 200, 200, 404),
    "DELETE flow file (v1)": (200, 403, 403, 200, 200, 404),
    # knowledge bases: the owner's by name, a shared one by its id
    "GET knowledge base": (200, 200, 200, 200, 200, 404),
    "GET knowledge base chunks": (200, 200, 200, 200, 200, 404),
    "ingest into knowledge base": (202, 403, 403, 202, 202, 404),
    "DELETE knowledge base": (200, 403, 403, 200, 200, 404),
    # variables: a team's runs use a shared credential (tests below); its value is never shown
    "PATCH variable": (200, 403, 403, 200, 200, 404),
    "DELETE variable": (204, 403, 403, 204, 204, 404),
    # the responses API answers errors as HTTP 200 {error: {code}}: permission_denied -> 403, flow_not_found -> 404
    "responses": (200, 403, 200, 200, 200, 404),
    "responses (background)": (200, 403, 200, 200, 200, 404),
    "GET monitor messages of the flow": (200, 200, 200, 200, 200, 404),
    "GET traces of the flow": (200, 200, 200, 200, 200, 404),
    "GET a trace of the owner's run": (200, 200, 200, 200, 200, 404),
    "DELETE traces of the flow": (204, 403, 403, 204, 204, 404),
    "GET MCP project settings": (200, 200, 200, 200, 200, 404),
    "GET MCP composer URL": (200, 200, 200, 200, 200, 404),
    "PATCH MCP project tools": (200, 403, 403, 200, 200, 404),
    "PATCH MCP project auth type": (200, 403, 403, 403, 200, 404),
    # another member's message of the flow (the owner: a run-only member's; the others: the owner's)
    "PUT another member's message": (200, 403, 403, 200, 200, 404),
    # DELETE /monitor/messages answers 204 for ids it skips (the reference's answer for unknown ids): an
    # outsider's 204 deletes nothing, read here as the 404 it stands for (_Deleted)
    "DELETE another member's message": (204, 403, 403, 204, 204, 404),
    "GET vertex builds of the flow": (200, 200, 200, 200, 200, 404),
    "GET transactions of the flow": (200, 200, 200, 200, 200, 404),
    "DELETE vertex builds of the flow": (204, 403, 403, 204, 204, 404),
    # the owner's schedule, trigger and execution by id (triggers plugin)
    "GET the owner's schedule": (200, 200, 200, 200, 200, 404),
    "PATCH the owner's schedule": (200, 403, 403, 200, 200, 404),
    "DELETE a schedule of the owner": (204, 403, 403, 204, 204, 404),
    "GET the owner's trigger": (200, 200, 200, 200, 200, 404),
    "PATCH the owner's trigger": (200, 403, 403, 200, 200, 404),
    "GET the owner's execution": (200, 200, 200, 200, 200, 404),
    "retry the owner's execution": (202, 403, 202, 202, 202, 404),
    # a new flow in the shared project (the project owner's flow), by POST and by upload
    "POST a flow into the project": (201, 403, 403, 201, 201, 404),
    "upload a flow into the project": (201, 403, 403, 201, 201, 404),
    # another member's chat session of the flow (``flow_id``: every user's messages of it; the owner works on a
    # run-only member's session, the others on the owner's)
    "rename another member's session": (200, 403, 403, 200, 200, 404),
    "DELETE another member's session": (204, 403, 403, 204, 204, 404),
    # the caller's own flow (in their own default project) moved into the shared project: PATCH the flow, or the
    # bulk move (PATCH the project with ``flows``); it becomes the project owner's
    "move one's own flow into the project": (200, 403, 403, 200, 200, 404),
    "bulk move one's own flow into the project": (200, 403, 403, 200, 200, 404),
}
CALLERS = ("owner", "viewer", "run-only", "developer", "admin", "outsider")


@pytest.fixture
def world(make_app):
    app = make_app(plugins=PLUGINS, rate_limit_per_minute=100)
    client = app.test_client()
    root = superuser(client)
    people = {name: make_user(client, root, username=name.replace("-", "_")) for name in CALLERS}
    owner = people["owner"]
    project = client.post("/api/v1/projects/", json={"name": "Team project"}, headers=owner.bearer).get_json()
    flow = create_flow(client, owner, chat_echo(), name="team flow", folder_id=project["id"])
    stored = client.post(
        "/api/v2/files", data={"file": (io.BytesIO(b"notes"), "notes.txt")}, headers=owner.bearer,
        content_type="multipart/form-data",
    )  # fmt: skip
    assert stored.status_code == 201, stored.get_json()
    flow["file_id"] = stored.get_json()["id"]
    kb = client.post("/api/v1/knowledge_bases/", json={"name": "handbook"}, headers=owner.bearer)
    assert kb.status_code == 201, kb.get_json()
    flow["kb_id"] = kb.get_json()["id"]
    body = {"name": "TEAM_KEY", "value": "sk-team-secret", "type": "Credential", "default_fields": []}
    variable = client.post("/api/v1/variables/", json=body, headers=owner.bearer)
    assert variable.status_code == 201, variable.get_json()
    flow["variable_id"] = variable.get_json()["id"]
    ran = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "traced"}, headers=owner.key)
    assert ran.status_code == 200, ran.get_json()
    traces = client.get(f"/api/v1/monitor/traces?flow_id={flow['id']}", headers=owner.bearer).get_json()
    assert traces["total"] == 1, traces
    flow["trace_id"] = traces["traces"][0]["id"]
    wait_jobs(app)
    listed = client.get(f"/api/v1/executions?flow_id={flow['id']}", headers=owner.bearer).get_json()
    assert len(listed) == 1 and listed[0]["status"] == "ok", listed
    flow["execution_id"] = listed[0]["id"]
    body = {"flow_id": flow["id"], "interval_s": 3600}
    flow["schedule_id"] = client.post("/api/v1/schedules", json=body, headers=owner.bearer).get_json()["id"]
    made = client.post("/api/v1/triggers", json={"flow_id": flow["id"]}, headers=owner.bearer)
    assert made.status_code == 201, made.get_json()
    flow["trigger_id"] = made.get_json()["id"]
    flow["app"] = app
    teams = {}
    for role, level in ROLES.items():
        team = client.post(
            "/api/v1/authz/teams", json={"team_name": role, "adom_name": f"team-{role}"}, headers=root.bearer
        )
        assert team.status_code == 201, team.get_json()
        team_id = team.get_json()["id"]
        added = client.post(
            f"/api/v1/authz/teams/{team_id}/members", json={"user_id": people[role].id}, headers=root.bearer
        )
        assert added.status_code == 201, added.get_json()
        teams[role] = team_id
        shared_items = (
            ("project", project["id"]), ("file", flow["file_id"]), ("knowledge_base", flow["kb_id"]),
            ("variable", flow["variable_id"]),
        )  # fmt: skip
        for kind, rid in shared_items:
            share(client, owner, kind, rid, team_id, level)
    flow["teams"] = teams
    return app, client, root, people, project, flow


def share(client, owner, kind, rid, team_id, level):
    body = {"resource_type": kind, "resource_id": rid, "scope": "team", "target_id": team_id}
    shared = client.post("/api/v1/authz/shares", json={**body, "permission_level": level}, headers=owner.bearer)
    assert shared.status_code == 201, shared.get_json()


def share_with_every_team(client, owner, flow, kind, rid):
    for role, level in ROLES.items():
        share(client, owner, kind, rid, flow["teams"][role], level)


class _Status:
    """A responses API answer read as the status it stands for (its errors are HTTP 200 bodies)."""

    def __init__(self, response):
        body = response.get_json()
        code = (body.get("error") or {}).get("code") if response.status_code == 200 else None
        self.status_code = {None: response.status_code, "permission_denied": 403, "flow_not_found": 404}.get(code, 500)
        self.body = body


def _try(surface, client, caller, project, flow, root, people):
    fid, pid = flow["id"], project["id"]
    if surface == "GET flow":
        return client.get(f"/api/v1/flows/{fid}", headers=caller.bearer)
    if surface == "GET project":
        return client.get(f"/api/v1/projects/{pid}", headers=caller.bearer)
    if surface == "PATCH flow":
        return client.patch(f"/api/v1/flows/{fid}", json={"description": "changed"}, headers=caller.bearer)
    if surface == "PATCH project":
        return client.patch(f"/api/v1/projects/{pid}", json={"description": "changed"}, headers=caller.bearer)
    if surface == "run (v1)":
        return client.post(f"/api/v1/run/{fid}", json={"input_value": "hi"}, headers=caller.key)
    if surface == "run (v2 workflows)":
        return client.post("/api/v2/workflows", json={"flow_id": fid, "input_value": "hi"}, headers=caller.key)
    if surface == "build":
        return client.post(
            f"/api/v1/build/{fid}/flow?event_delivery=direct",
            json={"inputs": {"input_value": "hi"}},
            headers=caller.bearer,
        )
    if surface == "webhook":
        return client.post(f"/api/v1/webhook/{fid}", data="x", headers=caller.key)
    if surface == "share":
        body = {"resource_type": "project", "resource_id": pid, "scope": "user", "target_id": root.id}
        return client.post("/api/v1/authz/shares", json={**body, "permission_level": "read"}, headers=caller.bearer)
    if surface == "GET versions":
        return client.get(f"/api/v1/flows/{fid}/versions/", headers=caller.bearer)
    if surface == "POST version":
        return client.post(f"/api/v1/flows/{fid}/versions/", json={"description": "v"}, headers=caller.bearer)
    if surface == "GET schedules of the flow":
        return client.get(f"/api/v1/schedules?flow_id={fid}", headers=caller.bearer)
    if surface == "POST schedule":
        return client.post("/api/v1/schedules", json={"flow_id": fid, "interval_s": 3600}, headers=caller.bearer)
    if surface == "GET executions of the flow":
        return client.get(f"/api/v1/executions?flow_id={fid}", headers=caller.bearer)
    if surface == "GET triggers of the flow":
        return client.get(f"/api/v1/triggers?flow_id={fid}", headers=caller.bearer)
    if surface == "GET flow files (v1)":
        return client.get(f"/api/v1/files/list/{fid}", headers=caller.bearer)
    if surface == "upload flow file (v1)":
        data = {"file": (io.BytesIO(b"x"), "x.txt")}
        return client.post(f"/api/v1/files/upload/{fid}", data=data, headers=caller.bearer)
    if surface == "GET shared file (v2)":
        return client.get(f"/api/v2/files/{flow['file_id']}", headers=caller.bearer)
    if surface == "rename shared file (v2)":
        return client.put(f"/api/v2/files/{flow['file_id']}?name=renamed.txt", headers=caller.bearer)
    if surface == "DELETE flow file (v1)":  # the owner stores a fresh one for each caller to try
        data = {"file": (io.BytesIO(b"x"), "gone.txt")}
        path = client.post(f"/api/v1/files/upload/{fid}", data=data, headers=people["owner"].bearer).get_json()
        name = path["file_path"].rsplit("/", 1)[-1]
        return client.delete(f"/api/v1/files/delete/{fid}/{name}", headers=caller.bearer)
    return _try_more(surface, client, caller, project, flow, people)


def _try_more(surface, client, caller, project, flow, people):
    fid, pid, owner = flow["id"], project["id"], people["owner"]
    kb = "handbook" if caller is owner else flow["kb_id"]  # the owner's by name, a shared one by id
    if surface == "GET knowledge base":
        return client.get(f"/api/v1/knowledge_bases/{kb}", headers=caller.bearer)
    if surface == "GET knowledge base chunks":
        return client.get(f"/api/v1/knowledge_bases/{kb}/chunks", headers=caller.bearer)
    if surface == "ingest into knowledge base":
        text = {"text": "Ops runbook."}
        answer = client.post(f"/api/v1/knowledge_bases/{kb}/ingest", json=text, headers=caller.bearer)
        if answer.status_code == 202:  # one ingestion at a time: the next caller finds it done
            _wait_ready(client, owner)
        return answer
    if surface == "DELETE knowledge base":  # the owner makes and shares a fresh one for each caller to try
        name = f"scratch-{caller.username}"
        fresh = client.post("/api/v1/knowledge_bases/", json={"name": name}, headers=owner.bearer).get_json()
        share_with_every_team(client, owner, flow, "knowledge_base", fresh["id"])
        key = name if caller is owner else fresh["id"]
        return client.delete(f"/api/v1/knowledge_bases/{key}", headers=caller.bearer)
    if surface == "PATCH variable":
        vid = flow["variable_id"]
        body = {"id": vid, "value": f"sk-{caller.username}"}
        return client.patch(f"/api/v1/variables/{vid}", json=body, headers=caller.bearer)
    if surface == "DELETE variable":
        body = {"name": f"SCRATCH_{caller.username}", "value": "x", "type": "Credential", "default_fields": []}
        fresh = client.post("/api/v1/variables/", json=body, headers=owner.bearer).get_json()
        share_with_every_team(client, owner, flow, "variable", fresh["id"])
        return client.delete(f"/api/v1/variables/{fresh['id']}", headers=caller.bearer)
    if surface in ("responses", "responses (background)"):
        body = {"model": fid, "input": "hi", "background": surface != "responses"}
        return _Status(client.post("/api/v1/responses", json=body, headers=caller.key))
    if surface == "GET monitor messages of the flow":
        return client.get(f"/api/v1/monitor/messages?flow_id={fid}", headers=caller.bearer)
    if surface == "GET traces of the flow":
        return client.get(f"/api/v1/monitor/traces?flow_id={fid}", headers=caller.bearer)
    if surface == "GET a trace of the owner's run":
        return client.get(f"/api/v1/monitor/traces/{flow['trace_id']}", headers=caller.bearer)
    if surface == "DELETE traces of the flow":
        return client.delete(f"/api/v1/monitor/traces?flow_id={fid}", headers=caller.bearer)
    if surface == "GET MCP project settings":
        return client.get(f"/api/v1/mcp/project/{pid}?mcp_enabled=false", headers=caller.bearer)
    if surface == "GET MCP composer URL":
        return client.get(f"/api/v1/mcp/project/{pid}/composer-url", headers=caller.bearer)
    if surface == "PATCH MCP project tools":
        body = {"settings": [{"id": fid, "mcp_enabled": True, "action_name": "team_flow", "action_description": "t",
                              "name": "team flow", "description": ""}]}  # fmt: skip
        return client.patch(f"/api/v1/mcp/project/{pid}", json=body, headers=caller.bearer)
    if surface == "PATCH MCP project auth type":  # always a change: apikey <-> none
        now = client.get(f"/api/v1/mcp/project/{pid}", headers=owner.bearer).get_json()["auth_settings"] or {}
        wanted = "none" if (now.get("auth_type") or "apikey") == "apikey" else "apikey"
        body = {"settings": [], "auth_settings": {"auth_type": wanted}}
        return client.patch(f"/api/v1/mcp/project/{pid}", json=body, headers=caller.bearer)
    return _try_team_rows(surface, client, caller, project, flow, people)


class _Deleted:
    """A ``DELETE /monitor/messages`` answer read as the status it stands for: 204 that deleted nothing is the
    404 of an id the caller may not see (the route answers every skipped id with 204, as the reference)."""

    def __init__(self, response, gone):
        self.status_code = 404 if response.status_code == 204 and not gone else response.status_code


def _message_of(client, app, runner, flow, text):
    """The id of the message ``runner``'s run of the flow stored with ``text`` (runs it first)."""
    ran = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": text}, headers=runner.key)
    assert ran.status_code == 200, ran.get_json()
    wait_jobs(app)
    listed = client.get(f"/api/v1/monitor/messages?flow_id={flow['id']}", headers=runner.bearer).get_json()
    return next(m["id"] for m in listed if m["text"] == text and m["sender"] == "User")


def _try_team_rows(surface, client, caller, project, flow, people):
    """Another member's rows of the shared flow: messages, builds, transactions, schedules, triggers, runs."""
    fid, owner, app = flow["id"], people["owner"], flow["app"]
    # the owner works on a run-only member's message; every other caller on the owner's
    runner = people["run-only"] if caller is owner else owner
    if surface == "PUT another member's message":
        mid = _message_of(client, app, runner, flow, f"edit me, {caller.username}")
        return client.put(f"/api/v1/monitor/messages/{mid}", json={"text": "edited"}, headers=caller.bearer)
    if surface == "DELETE another member's message":
        mid = _message_of(client, app, runner, flow, f"delete me, {caller.username}")
        answer = client.delete("/api/v1/monitor/messages", json=[mid], headers=caller.bearer)
        left = client.get(f"/api/v1/monitor/messages?flow_id={fid}", headers=runner.bearer).get_json()
        return _Deleted(answer, gone=mid not in [m["id"] for m in left])
    if surface == "GET vertex builds of the flow":
        return client.get(f"/api/v1/monitor/builds?flow_id={fid}", headers=caller.bearer)
    if surface == "GET transactions of the flow":
        return client.get(f"/api/v1/monitor/transactions?flow_id={fid}", headers=caller.bearer)
    if surface == "DELETE vertex builds of the flow":
        return client.delete(f"/api/v1/monitor/builds?flow_id={fid}", headers=caller.bearer)
    if surface == "GET the owner's schedule":
        return client.get(f"/api/v1/schedules/{flow['schedule_id']}", headers=caller.bearer)
    if surface == "PATCH the owner's schedule":
        body = {"name": f"renamed by {caller.username}"}
        return client.patch(f"/api/v1/schedules/{flow['schedule_id']}", json=body, headers=caller.bearer)
    if surface == "DELETE a schedule of the owner":  # a fresh one for each caller
        body = {"flow_id": fid, "interval_s": 3600}
        fresh = client.post("/api/v1/schedules", json=body, headers=owner.bearer).get_json()
        return client.delete(f"/api/v1/schedules/{fresh['id']}", headers=caller.bearer)
    if surface == "GET the owner's trigger":
        return client.get(f"/api/v1/triggers/{flow['trigger_id']}", headers=caller.bearer)
    if surface == "PATCH the owner's trigger":
        body = {"name": f"renamed by {caller.username}"}
        return client.patch(f"/api/v1/triggers/{flow['trigger_id']}", json=body, headers=caller.bearer)
    if surface == "GET the owner's execution":
        return client.get(f"/api/v1/executions/{flow['execution_id']}", headers=caller.bearer)
    if surface == "retry the owner's execution":
        answer = client.post(f"/api/v1/executions/{flow['execution_id']}/retry", headers=caller.bearer)
        wait_jobs(app)
        return answer
    if surface == "POST a flow into the project":
        body = {"name": f"new by {caller.username}", "folder_id": project["id"], "data": {"nodes": [], "edges": []}}
        return client.post("/api/v1/flows/", json=body, headers=caller.bearer)
    if surface == "upload a flow into the project":
        doc = json.dumps({"name": f"uploaded by {caller.username}", "data": {"nodes": [], "edges": []}})
        data = {"file": (io.BytesIO(doc.encode()), "flow.json")}
        return client.post(f"/api/v1/flows/upload/?folder_id={project['id']}", data=data, headers=caller.bearer)
    return _try_sessions_and_moves(surface, client, caller, project, flow, people)


def _session_of(client, app, runner, flow, session_id):
    """Run the flow as ``runner`` in chat session ``session_id`` (its messages are then stored)."""
    body = {"input_value": f"in {session_id}", "session_id": session_id}
    ran = client.post(f"/api/v1/run/{flow['id']}", json=body, headers=runner.key)
    assert ran.status_code == 200, ran.get_json()
    wait_jobs(app)


def _sessions_of(client, runner, flow):
    return client.get(f"/api/v1/monitor/messages/sessions?flow_id={flow['id']}", headers=runner.bearer).get_json()


class _Checked:
    """An answer whose effect was checked: a success that changed nothing would be a failure (500 here)."""

    def __init__(self, response, done):
        ok = response.status_code < 300
        self.status_code = response.status_code if done == ok else 500


def _own_flow(client, caller, name):
    body = {"name": name, "data": {"nodes": [], "edges": []}}
    made = client.post("/api/v1/flows/", json=body, headers=caller.bearer)
    assert made.status_code == 201, made.get_json()
    return made.get_json()


def _try_sessions_and_moves(surface, client, caller, project, flow, people):
    fid, pid, owner, app = flow["id"], project["id"], people["owner"], flow["app"]
    runner = people["run-only"] if caller is owner else owner
    if surface == "rename another member's session":
        old, new = f"rename-me-{caller.username}", f"renamed-by-{caller.username}"
        _session_of(client, app, runner, flow, old)
        url = f"/api/v1/monitor/messages/session/{old}?new_session_id={new}&flow_id={fid}"
        answer = client.patch(url, headers=caller.bearer)
        sessions = _sessions_of(client, runner, flow)
        return _Checked(answer, done=new in sessions and old not in sessions)
    if surface == "DELETE another member's session":
        sid = f"delete-me-{caller.username}"
        _session_of(client, app, runner, flow, sid)
        answer = client.delete(f"/api/v1/monitor/messages/session/{sid}?flow_id={fid}", headers=caller.bearer)
        return _Checked(answer, done=sid not in _sessions_of(client, runner, flow))
    if surface == "move one's own flow into the project":
        mine = _own_flow(client, caller, f"moved by {caller.username}")
        answer = client.patch(f"/api/v1/flows/{mine['id']}", json={"folder_id": pid}, headers=caller.bearer)
        moved = client.get(f"/api/v1/flows/{mine['id']}", headers=owner.bearer).get_json()
        return _Checked(answer, done=moved.get("folder_id") == pid and moved.get("user_id") == owner.id)
    if surface == "bulk move one's own flow into the project":
        mine = _own_flow(client, caller, f"bulk moved by {caller.username}")
        answer = client.patch(f"/api/v1/projects/{pid}", json={"flows": [mine["id"]]}, headers=caller.bearer)
        moved = client.get(f"/api/v1/flows/{mine['id']}", headers=owner.bearer).get_json()
        return _Checked(answer, done=moved.get("folder_id") == pid and moved.get("user_id") == owner.id)
    raise AssertionError(surface)


def _wait_ready(client, owner, timeout=120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        status = client.get("/api/v1/knowledge_bases/handbook", headers=owner.bearer).get_json()["status"]
        if status != "ingesting":
            return
        time.sleep(0.2)
    raise AssertionError("the ingestion did not end")


@pytest.mark.parametrize("surface", list(MATRIX))
def test_role_matrix(world, surface):
    app, client, root, people, project, flow = world
    got = tuple(_try(surface, client, people[c], project, flow, root, people).status_code for c in CALLERS)
    wait_jobs(app)
    assert got == MATRIX[surface], dict(zip(CALLERS, got, strict=True))


def test_effective_permissions_for_the_editor(world):
    _app, client, _root, people, _project, flow = world
    expected = {
        "owner": ["read", "write", "execute", "delete", "create"],
        "viewer": ["read"],
        "run-only": ["read", "execute"],
        "developer": ["read", "write", "execute", "delete", "create"],
        "admin": ["read", "write", "execute", "delete", "create"],
        "outsider": [],
    }
    for name, actions in expected.items():
        body = {"resource_type": "flow", "resource_ids": [flow["id"]]}
        answer = client.post("/api/v1/authz/me/permissions", json=body, headers=people[name].bearer)
        assert answer.status_code == 200, answer.get_json()
        assert answer.get_json() == {"resource_type": "flow", "permissions": {flow["id"]: actions}}, name


def test_removing_a_member_hides_the_project_again(world):
    _app, client, root, people, project, _flow = world
    teams = client.get("/api/v1/authz/teams", headers=root.bearer).get_json()
    viewers = next(t for t in teams if t["adom_name"] == "team-viewer")
    gone = client.delete(f"/api/v1/authz/teams/{viewers['id']}/members/{people['viewer'].id}", headers=root.bearer)
    assert gone.status_code == 204
    assert client.get(f"/api/v1/projects/{project['id']}", headers=people["viewer"].bearer).status_code == 404
    # the viewer no longer sees the team either
    assert client.get(f"/api/v1/authz/teams/{viewers['id']}", headers=people["viewer"].bearer).status_code == 404


def test_team_and_role_administration_is_for_superusers(world):
    _app, client, root, people, _project, _flow = world
    dev = people["developer"]
    assert (
        client.post("/api/v1/authz/teams", json={"team_name": "x", "adom_name": "x"}, headers=dev.bearer).status_code
        == 403
    )
    assert client.post("/api/v1/authz/roles", json={"name": "r"}, headers=dev.bearer).status_code == 403
    roles = {r["name"]: r for r in client.get("/api/v1/authz/roles", headers=dev.bearer).get_json()}
    assert {"viewer", "run-only", "developer", "admin"} <= set(roles) and roles["viewer"]["is_system"]
    assert "flow:read" in roles["viewer"]["permissions"] and "flow:write" not in roles["viewer"]["permissions"]
    assert client.delete(f"/api/v1/authz/roles/{roles['viewer']['id']}", headers=root.bearer).status_code == 400
    bad = client.post("/api/v1/authz/roles", json={"name": "r", "permissions": ["flow"]}, headers=root.bearer)
    assert bad.status_code == 422


def test_a_custom_role_assigned_in_a_project(world):
    _app, client, root, people, project, flow = world
    outsider = people["outsider"]
    role = client.post(
        "/api/v1/authz/roles",
        json={"name": "flow-runner", "permissions": ["flow:read", "flow:execute"]},
        headers=root.bearer,
    ).get_json()
    given = client.post(
        "/api/v1/authz/role-assignments",
        json={"user_id": outsider.id, "role_id": role["id"], "domain_type": "project", "domain_id": project["id"]},
        headers=root.bearer,
    )
    assert given.status_code == 201, given.get_json()
    assert client.get(f"/api/v1/flows/{flow['id']}", headers=outsider.bearer).status_code == 200
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=outsider.key).status_code == 200
    assert (
        client.patch(f"/api/v1/flows/{flow['id']}", json={"description": "no"}, headers=outsider.bearer).status_code
        == 403
    )
    assert (
        client.delete(f"/api/v1/authz/role-assignments/{given.get_json()['id']}", headers=root.bearer).status_code
        == 204
    )
    assert client.get(f"/api/v1/flows/{flow['id']}", headers=outsider.bearer).status_code == 404


def test_shared_projects_are_listed_for_members_only(world):
    _app, client, _root, people, project, _flow = world
    for name in ("viewer", "run-only", "developer", "admin"):
        listed = client.get("/api/v1/projects/", headers=people[name].bearer).get_json()
        shared = [p for p in listed if not p["is_owner"]]
        assert [p["id"] for p in shared] == [project["id"]], name
    outsider = client.get("/api/v1/projects/", headers=people["outsider"].bearer).get_json()
    assert all(p["is_owner"] for p in outsider) and project["id"] not in [p["id"] for p in outsider]
    owner = client.get("/api/v1/projects/", headers=people["owner"].bearer).get_json()
    assert [p["id"] for p in owner if p["id"] == project["id"]] == [project["id"]]
    assert all(p["is_owner"] for p in owner)


def test_a_developer_edits_in_place_but_cannot_move_the_flow_away(world):
    _app, client, _root, people, _project, flow = world
    dev = people["developer"]
    own = client.post("/api/v1/projects/", json={"name": "Mine"}, headers=dev.bearer).get_json()
    moved = client.patch(f"/api/v1/flows/{flow['id']}", json={"folder_id": own["id"]}, headers=dev.bearer)
    assert moved.status_code == 403
    same = client.patch(f"/api/v1/flows/{flow['id']}", json={"folder_id": flow["folder_id"]}, headers=dev.bearer)
    assert same.status_code == 200


def test_shared_flows_are_listed_with_the_callers_role(world):
    _app, client, _root, people, project, flow = world
    roles = {"viewer": "viewer", "run-only": "run-only", "developer": "developer", "admin": "admin"}
    for name, role in roles.items():
        caller = people[name]
        listed = client.get("/api/v1/flows/?remove_example_flows=true", headers=caller.bearer).get_json()
        assert [(f["id"], f["shared_role"]) for f in listed if "shared_role" in f] == [(flow["id"], role)], name
        page = client.get(f"/api/v1/flows/?get_all=false&folder_id={project['id']}&size=10", headers=caller.bearer)
        assert page.status_code == 200, page.get_json()
        body = page.get_json()
        assert body["total"] == 1 and [(f["id"], f["shared_role"]) for f in body["items"]] == [(flow["id"], role)]
        projects = client.get("/api/v1/projects/", headers=caller.bearer).get_json()
        assert [p["shared_role"] for p in projects if p["id"] == project["id"]] == [role], name
    owner = client.get("/api/v1/flows/?remove_example_flows=true", headers=people["owner"].bearer).get_json()
    assert flow["id"] in [f["id"] for f in owner] and all("shared_role" not in f for f in owner)
    outsider = people["outsider"]
    assert flow["id"] not in [
        f["id"] for f in client.get("/api/v1/flows/?remove_example_flows=true", headers=outsider.bearer).get_json()
    ]
    page = client.get(f"/api/v1/flows/?get_all=false&folder_id={project['id']}&size=10", headers=outsider.bearer)
    assert page.get_json()["total"] == 0  # another user's unshared project: an empty page, as before


def test_shared_variables_are_listed_but_a_credential_is_never_shown(world):
    _app, client, _root, people, _project, flow = world
    for name, role in (("viewer", "viewer"), ("run-only", "run-only"), ("developer", "developer"), ("admin", "admin")):
        listed = client.get("/api/v1/variables/", headers=people[name].bearer).get_json()
        shared = [v for v in listed if not v["is_owner"]]
        assert [(v["id"], v["name"], v["shared_role"], v["value"]) for v in shared] == [
            (flow["variable_id"], "TEAM_KEY", role, None)
        ], name
        assert shared[0]["can_manage_shares"] is (role == "admin")
        assert "sk-team-secret" not in str(listed)
    outsider = client.get("/api/v1/variables/", headers=people["outsider"].bearer).get_json()
    assert flow["variable_id"] not in [v["id"] for v in outsider]
    # a developer's change of the value keeps it unreadable, to them too
    vid = flow["variable_id"]
    changed = client.patch(
        f"/api/v1/variables/{vid}", json={"id": vid, "value": "sk-rotated"}, headers=people["developer"].bearer
    )
    assert changed.status_code == 200 and changed.get_json()["value"] is None
    assert changed.get_json()["shared_role"] == "developer" and changed.get_json()["is_owner"] is False


def test_a_teams_runs_use_a_shared_credential(world):
    """The ``get_variable`` hook, as a run asks it: a member without a variable of that name uses the one
    shared with their team when their role lets them run (run-only, developer, admin); a viewer's and an
    outsider's runs get nothing; a member's own variable of that name wins."""
    from core import appstate

    app, client, _root, people, _project, _flow = world
    body = {"name": "TEAM_KEY", "value": "sk-my-own", "type": "Credential", "default_fields": []}
    assert client.post("/api/v1/variables/", json=body, headers=people["admin"].bearer).status_code == 201
    with app.app_context():
        got = {name: appstate.hooks().get_variable(user_id=people[name].id, name="TEAM_KEY") for name in CALLERS}
    assert got == {
        "owner": "sk-team-secret",
        "viewer": None,
        "run-only": "sk-team-secret",
        "developer": "sk-team-secret",
        "admin": "sk-my-own",
        "outsider": None,
    }


def test_shared_knowledge_bases_are_listed_with_the_callers_role(world):
    _app, client, _root, people, _project, flow = world
    for name in ("viewer", "run-only", "developer", "admin"):
        listed = client.get("/api/v1/knowledge_bases/", headers=people[name].bearer).get_json()
        assert [(kb["id"], kb["name"], kb.get("shared_role")) for kb in listed] == [
            (flow["kb_id"], "handbook", name)
        ], name
        one = client.get(f"/api/v1/knowledge_bases/{flow['kb_id']}", headers=people[name].bearer).get_json()
        assert one["shared_role"] == name
        # their own base of the same name is theirs by name; the shared one stays reachable by id
        mine = client.post("/api/v1/knowledge_bases/", json={"name": "handbook"}, headers=people[name].bearer)
        assert mine.status_code == 201
        own = client.get("/api/v1/knowledge_bases/handbook", headers=people[name].bearer).get_json()
        assert own["id"] == mine.get_json()["id"] and "shared_role" not in own
    assert client.get("/api/v1/knowledge_bases/", headers=people["outsider"].bearer).get_json() == []


def test_a_shared_flows_messages_and_traces_are_its_teams(world):
    """A member's run of the shared flow is seen by the other members in the monitor lists of that flow; the
    owner's lists of their own flow stay their own runs (as before teams)."""
    app, client, _root, people, _project, flow = world
    ran = client.post(
        f"/api/v1/run/{flow['id']}", json={"input_value": "from run-only"}, headers=people["run-only"].key
    )
    assert ran.status_code == 200, ran.get_json()
    wait_jobs(app)
    for name in ("viewer", "developer", "admin", "run-only"):
        texts = [
            m["text"]
            for m in client.get(
                f"/api/v1/monitor/messages?flow_id={flow['id']}", headers=people[name].bearer
            ).get_json()
        ]
        assert "from run-only" in texts and "traced" in texts, name
        traces = client.get(f"/api/v1/monitor/traces?flow_id={flow['id']}", headers=people[name].bearer).get_json()
        assert traces["total"] == 2, name
    owner = client.get(f"/api/v1/monitor/messages?flow_id={flow['id']}", headers=people["owner"].bearer).get_json()
    assert "from run-only" not in [m["text"] for m in owner]
    # a flow id that is nobody's lists nothing (the reference's filter), another user's unshared flow is 404
    nobody = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"/api/v1/monitor/messages?flow_id={nobody}", headers=people["outsider"].bearer).get_json() == []


def test_a_flow_created_in_a_shared_project_is_the_project_owners(world):
    """A developer's new flow in the shared project (POST and upload) is the project owner's, like every flow in
    it: the owner finds it in their project, the team sees it with their role, the creator is its last editor."""
    _app, client, _root, people, project, _flow = world
    owner, dev = people["owner"], people["developer"]
    body = {"name": "by the developer", "folder_id": project["id"], "data": {"nodes": [], "edges": []}}
    made = client.post("/api/v1/flows/", json=body, headers=dev.bearer)
    assert made.status_code == 201, made.get_json()
    doc = json.dumps({"name": "uploaded by the developer", "data": {"nodes": [], "edges": []}})
    data = {"file": (io.BytesIO(doc.encode()), "flow.json")}
    uploaded = client.post(f"/api/v1/flows/upload/?folder_id={project['id']}", data=data, headers=dev.bearer)
    assert uploaded.status_code == 201, uploaded.get_json()
    new = [made.get_json(), *uploaded.get_json()]
    assert {(f["user_id"], f["folder_id"]) for f in new} == {(owner.id, project["id"])}
    page = client.get(f"/api/v1/flows/?get_all=false&folder_id={project['id']}&size=10", headers=owner.bearer)
    assert {f["id"] for f in new} <= {f["id"] for f in page.get_json()["items"]}
    for name, role in (("viewer", "viewer"), ("admin", "admin")):
        seen = client.get(
            f"/api/v1/flows/?get_all=false&folder_id={project['id']}&size=10", headers=people[name].bearer
        )
        roles = {f["id"]: f["shared_role"] for f in seen.get_json()["items"]}
        assert all(roles.get(f["id"]) == role for f in new), (name, roles)
    for f in new:
        assert client.get(f"/api/v1/flows/{f['id']}", headers=people["outsider"].bearer).status_code == 404
    # a viewer may not create there; the developer's own project is theirs as before
    refused = client.post("/api/v1/flows/", json={**body, "name": "no"}, headers=people["viewer"].bearer)
    assert refused.status_code == 403
    mine = client.post("/api/v1/flows/", json={**body, "folder_id": None, "name": "mine"}, headers=dev.bearer)
    assert mine.get_json()["user_id"] == dev.id


def test_a_retry_of_the_owners_execution_runs_as_the_caller(world):
    app, client, _root, people, _project, flow = world
    runner = people["run-only"]
    again = client.post(f"/api/v1/executions/{flow['execution_id']}/retry", headers=runner.bearer)
    assert again.status_code == 202, again.get_json()
    retried = again.get_json()
    assert retried["user_id"] == runner.id and retried["retry_of"] == flow["execution_id"]
    wait_jobs(app)
    done = client.get(f"/api/v1/executions/{retried['id']}", headers=runner.bearer).get_json()
    assert done["status"] == "ok" and done["user_id"] == runner.id, done
    # the owner still reads it (their flow), an outsider does not
    assert client.get(f"/api/v1/executions/{retried['id']}", headers=people["owner"].bearer).status_code == 200
    assert client.get(f"/api/v1/executions/{retried['id']}", headers=people["outsider"].bearer).status_code == 404


def _written(client, url, caller, timeout=10.0):
    """``url``'s answer once it lists something: vertex builds and transactions are written off the run path
    (the monitor's recorder drains its queue every quarter second)."""
    end = time.monotonic() + timeout
    while True:
        body = client.get(url, headers=caller.bearer).get_json()
        if body.get("vertex_builds") or time.monotonic() > end:
            return body
        time.sleep(0.1)


def test_a_shared_flows_builds_transactions_and_messages_are_the_teams_to_change(world):
    """Members read every user's vertex builds and transactions of the shared flow; a developer clears the
    builds, edits and deletes the owner's messages; a viewer may do neither (403)."""
    app, client, _root, people, _project, flow = world
    fid, dev, viewer, owner = flow["id"], people["developer"], people["viewer"], people["owner"]
    built = client.post(
        f"/api/v1/build/{fid}/flow?event_delivery=direct", json={"inputs": {"input_value": "hi"}}, headers=dev.bearer
    )
    assert built.status_code == 200
    wait_jobs(app)
    builds = _written(client, f"/api/v1/monitor/builds?flow_id={fid}", viewer)["vertex_builds"]
    assert builds, builds  # the developer's build, seen by the viewer
    assert client.get(f"/api/v1/monitor/builds?flow_id={fid}", headers=owner.bearer).get_json()["vertex_builds"] == {}
    txs = client.get(f"/api/v1/monitor/transactions?flow_id={fid}", headers=viewer.bearer).get_json()
    assert txs["total"] >= 2, txs  # the owner's run and the developer's build
    assert client.delete(f"/api/v1/monitor/builds?flow_id={fid}", headers=viewer.bearer).status_code == 403
    assert client.delete(f"/api/v1/monitor/builds?flow_id={fid}", headers=dev.bearer).status_code == 204
    assert client.get(f"/api/v1/monitor/builds?flow_id={fid}", headers=viewer.bearer).get_json()["vertex_builds"] == {}
    # the owner's "traced" message: the viewer may not edit it, the developer may (the owner sees the edit)
    listed = client.get(f"/api/v1/monitor/messages?flow_id={fid}", headers=owner.bearer).get_json()
    mid = next(m["id"] for m in listed if m["text"] == "traced" and m["sender"] == "User")
    assert client.put(f"/api/v1/monitor/messages/{mid}", json={"text": "x"}, headers=viewer.bearer).status_code == 403
    edited = client.put(f"/api/v1/monitor/messages/{mid}", json={"text": "edited"}, headers=dev.bearer)
    assert edited.status_code == 200 and edited.get_json()["edit"] is True
    mine = client.get(f"/api/v1/monitor/messages?flow_id={fid}", headers=owner.bearer).get_json()
    assert {m["id"]: m["text"] for m in mine}[mid] == "edited"
    # a bulk delete mixing the developer's own id, the owner's message and an unknown id: all that exist go
    assert client.delete("/api/v1/monitor/messages", json=[mid], headers=viewer.bearer).status_code == 403
    unknown = "00000000-0000-4000-8000-000000000000"
    assert client.delete("/api/v1/monitor/messages", json=[mid, unknown], headers=dev.bearer).status_code == 204
    left = client.get(f"/api/v1/monitor/messages?flow_id={fid}", headers=owner.bearer).get_json()
    assert mid not in [m["id"] for m in left]


def _messages(client, caller, flow_id):
    return client.get(f"/api/v1/monitor/messages?flow_id={flow_id}", headers=caller.bearer).get_json()


def test_a_shared_flows_sessions_are_the_teams_to_rename_and_delete(world):
    """With ``flow_id`` a developer renames and deletes a chat session of the shared flow, every member's messages
    of it; the same session id in another flow (the owner's unshared one) is untouched; a viewer and a run-only
    member get 403, an outsider 404, and none of them changes anything. Without ``flow_id`` the routes stay the
    caller's own sessions (the reference's)."""
    app, client, _root, people, _project, flow = world
    owner, dev, runner = people["owner"], people["developer"], people["run-only"]
    other = create_flow(client, owner, chat_echo(), name="private flow")
    _session_of(client, app, owner, flow, "team-chat")
    _session_of(client, app, runner, flow, "team-chat")
    _session_of(client, app, owner, other, "team-chat")

    def of(caller, flow_id, session):
        return [m for m in _messages(client, caller, flow_id) if m["session_id"] == session]

    # a member's list of the shared flow is every user's messages of it (the owner's list: their own)
    shared_before = of(runner, flow["id"], "team-chat")
    assert len(shared_before) == 4, shared_before  # two runs, each the question and the answer
    assert len(of(owner, flow["id"], "team-chat")) == 2
    rename = "/api/v1/monitor/messages/session/team-chat?new_session_id=renamed&flow_id=" + flow["id"]
    for name, status in (("viewer", 403), ("run-only", 403), ("outsider", 404)):
        assert client.patch(rename, headers=people[name].bearer).status_code == status, name
        gone = client.delete(
            f"/api/v1/monitor/messages/session/team-chat?flow_id={flow['id']}", headers=people[name].bearer
        )
        assert gone.status_code == status, name
    assert len(of(runner, flow["id"], "team-chat")) == 4
    # without flow_id: the developer's own sessions only (they have none of that name)
    assert (
        client.patch("/api/v1/monitor/messages/session/team-chat?new_session_id=x", headers=dev.bearer).status_code
        == 404
    )
    renamed = client.patch(rename, headers=dev.bearer)
    assert renamed.status_code == 200, renamed.get_json()
    body = renamed.get_json()
    assert {m["id"] for m in body} == {m["id"] for m in shared_before}
    assert {(m["session_id"], m["flow_id"]) for m in body} == {("renamed", flow["id"])}
    assert len(of(runner, flow["id"], "renamed")) == 4 and len(of(owner, flow["id"], "renamed")) == 2
    assert len(of(owner, other["id"], "team-chat")) == 2  # another flow's session of the same id: untouched
    # the same session id in a flow the developer may not see at all: 404, nothing renamed
    hidden = f"/api/v1/monitor/messages/session/team-chat?new_session_id=no&flow_id={other['id']}"
    assert client.patch(hidden, headers=dev.bearer).status_code == 404
    gone = client.delete(f"/api/v1/monitor/messages/session/renamed?flow_id={flow['id']}", headers=dev.bearer)
    assert gone.status_code == 204
    assert of(runner, flow["id"], "renamed") == [] and of(owner, flow["id"], "renamed") == []
    assert len(of(owner, other["id"], "team-chat")) == 2
    # a bad flow id is the spec's 422
    bad = client.delete("/api/v1/monitor/messages/session/renamed?flow_id=nope", headers=dev.bearer)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["query", "flow_id"], bad.get_json()


def test_moving_ones_own_flow_into_a_shared_project_makes_it_the_project_owners(world):
    """A developer moves their own flow into the shared project: it becomes the project owner's (a clashing name
    gets a numbered suffix), with its history, its v1 files and its public share; the move is in the owner's audit
    log; the team edits it in place, the mover cannot move it out again, an outsider does not see it. A viewer's
    move is 403, a move into a project the caller cannot see 404; neither changes anything."""
    _app, client, _root, people, project, flow = world
    owner, dev, viewer, outsider = people["owner"], people["developer"], people["viewer"], people["outsider"]
    mine = create_flow(client, dev, chat_echo(), name=flow["name"])  # the owner has a flow of that name
    shared = client.post(f"/api/v1/flows/{mine['id']}/shares", json={}, headers=dev.bearer)
    assert shared.status_code in (200, 201), shared.get_json()
    versions = client.get(f"/api/v1/flows/{mine['id']}/versions/", headers=dev.bearer).get_json()["entries"]
    assert versions, versions
    data = {"file": (io.BytesIO(b"notes"), "notes.txt")}
    stored = client.post(f"/api/v1/files/upload/{mine['id']}", data=data, headers=dev.bearer)
    assert stored.status_code == 201, stored.get_json()
    file_name = stored.get_json()["file_path"].rsplit("/", 1)[-1]
    moved = client.patch(f"/api/v1/flows/{mine['id']}", json={"folder_id": project["id"]}, headers=dev.bearer)
    assert moved.status_code == 200, moved.get_json()
    out = moved.get_json()
    assert (out["user_id"], out["folder_id"], out["name"]) == (owner.id, project["id"], f"{flow['name']} (1)")
    page = client.get(f"/api/v1/flows/?get_all=false&folder_id={project['id']}&size=50", headers=owner.bearer)
    assert mine["id"] in {f["id"] for f in page.get_json()["items"]}
    history = client.get(f"/api/v1/flows/{mine['id']}/versions/", headers=owner.bearer).get_json()["entries"]
    assert {v["id"] for v in versions} <= {v["id"] for v in history}
    for caller in (owner, dev):  # the flow's v1 files followed it: the owner's now, the team's to read
        files = client.get(f"/api/v1/files/list/{mine['id']}", headers=caller.bearer).get_json()["files"]
        assert files == [file_name], files
        got = client.get(f"/api/v1/files/download/{mine['id']}/{file_name}", headers=caller.bearer)
        assert got.status_code == 200 and got.data == b"notes"
    owners_shares = client.get(f"/api/v1/flows/{mine['id']}/shares", headers=owner.bearer)
    assert owners_shares.status_code == 200 and owners_shares.get_json()["shares"], owners_shares.get_json()
    entries = client.get("/api/v1/audits/", query_string={"limit": 200}, headers=owner.bearer).get_json()["items"]
    move = [e for e in entries if e["action"] == "flow:write" and e["resource_id"] == mine["id"]]
    assert move and move[0]["details"]["project_id"] == project["id"], move
    assert move[0]["details"]["previous_owner_id"] == dev.id and "folder_id" in move[0]["details"]["fields"]
    # the team's flow now: edited in place by the developer, read by the viewer, not moved out, not seen outside
    edit = client.patch(f"/api/v1/flows/{mine['id']}", json={"description": "still mine to edit"}, headers=dev.bearer)
    assert edit.status_code == 200
    back = client.patch(f"/api/v1/flows/{mine['id']}", json={"folder_id": None}, headers=dev.bearer)
    assert back.status_code == 200 and back.get_json()["folder_id"] == project["id"]  # null: unchanged
    default = client.get("/api/v1/projects/", headers=dev.bearer).get_json()[0]["id"]
    out_again = client.patch(f"/api/v1/flows/{mine['id']}", json={"folder_id": default}, headers=dev.bearer)
    assert out_again.status_code == 403
    assert client.get(f"/api/v1/flows/{mine['id']}", headers=viewer.bearer).status_code == 200
    assert client.get(f"/api/v1/flows/{mine['id']}", headers=outsider.bearer).status_code == 404
    # refused moves change nothing
    theirs = create_flow(client, viewer, chat_echo(), name="viewer's flow")
    refused = client.patch(f"/api/v1/flows/{theirs['id']}", json={"folder_id": project["id"]}, headers=viewer.bearer)
    assert refused.status_code == 403
    kept = client.get(f"/api/v1/flows/{theirs['id']}", headers=viewer.bearer).get_json()
    assert kept["user_id"] == viewer.id and kept["folder_id"] != project["id"]
    hidden = client.post("/api/v1/projects/", json={"name": "outside"}, headers=outsider.bearer).get_json()["id"]
    own = create_flow(client, dev, chat_echo(), name="stays")
    unseen = client.patch(f"/api/v1/flows/{own['id']}", json={"folder_id": hidden}, headers=dev.bearer)
    assert unseen.status_code == 404
    bulk = client.patch(f"/api/v1/projects/{hidden}", json={"flows": [own["id"]]}, headers=dev.bearer)
    assert bulk.status_code == 404
    assert client.get(f"/api/v1/flows/{own['id']}", headers=dev.bearer).get_json()["user_id"] == dev.id


def test_the_bulk_move_takes_the_callers_own_flows_into_a_shared_project(world):
    """``PATCH /projects/{id}`` with ``flows`` on a shared project: the developer's own flows listed move in (the
    owner's), ids of flows they do not own are left alone."""
    _app, client, _root, people, project, _flow = world
    owner, dev, outsider = people["owner"], people["developer"], people["outsider"]
    first = create_flow(client, dev, chat_echo(), name="one")
    second = create_flow(client, dev, chat_echo(), name="two")
    foreign = create_flow(client, outsider, chat_echo(), name="not theirs")
    body = {"flows": [first["id"], second["id"], foreign["id"]]}
    answer = client.patch(f"/api/v1/projects/{project['id']}", json=body, headers=dev.bearer)
    assert answer.status_code == 200, answer.get_json()
    for f in (first, second):
        got = client.get(f"/api/v1/flows/{f['id']}", headers=owner.bearer).get_json()
        assert (got["user_id"], got["folder_id"]) == (owner.id, project["id"]), got
    kept = client.get(f"/api/v1/flows/{foreign['id']}", headers=outsider.bearer).get_json()
    assert kept["user_id"] == outsider.id and kept["folder_id"] != project["id"]


def test_put_of_ones_own_flow_into_a_shared_project_moves_it_too(world):
    """``PUT /flows/{id}`` of the caller's own flow with a shared project's ``folder_id`` is the same move as
    ``PATCH`` (``create`` needed); a run-only member's is 403 and leaves the flow theirs."""
    _app, client, _root, people, project, _flow = world
    owner, dev, runner = people["owner"], people["developer"], people["run-only"]
    for caller, status in ((runner, 403), (dev, 200)):
        mine = create_flow(client, caller, chat_echo(), name=f"put by {caller.username}")
        body = {"name": mine["name"], "data": mine["data"], "folder_id": project["id"]}
        answer = client.put(f"/api/v1/flows/{mine['id']}", json=body, headers=caller.bearer)
        assert answer.status_code == status, answer.get_json()
        got = client.get(f"/api/v1/flows/{mine['id']}", headers=caller.bearer).get_json()
        want = (owner.id, project["id"]) if status == 200 else (caller.id, mine["folder_id"])
        assert (got["user_id"], got["folder_id"]) == want, got
