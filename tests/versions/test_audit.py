"""The audit log: an entry for each kind of change, in the reference's shape, owner-scoped, no secret
values, written off the request path, exported as JSON lines."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from service_versions import audit
from service_versions.models import AuditEvent

from core import appstate, batches
from tests.conftest import make_user
from tests.versions.vkit import create, graph, save


@pytest.fixture
def app(make_app):
    return make_app(plugins=["accounts", "flows", "variables", "versions"])


def _events(client, caller, url="/api/v1/audits/", **params):
    response = client.get(url, query_string=params, headers=caller.bearer)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_each_kind_of_change_is_recorded_without_secrets(client, admin, alice):
    flow = create(client, alice, graph("a"), name="audited")
    save(client, alice, flow["id"], graph("b"))
    client.post(f"/api/v1/flows/{flow['id']}/publish", json={}, headers=alice.bearer)
    client.post(f"/api/v1/flows/{flow['id']}/shares", json={}, headers=alice.bearer)
    project = client.post("/api/v1/projects/", json={"name": "proj"}, headers=alice.bearer).get_json()
    body = {"name": "OPENAI_KEY", "value": "sk-very-secret-value", "type": "Credential", "default_fields": []}
    variable = client.post("/api/v1/variables/", json=body, headers=alice.bearer).get_json()
    rotated = {"id": variable["id"], "value": "sk-rotated-secret"}
    assert client.patch(f"/api/v1/variables/{variable['id']}", json=rotated, headers=alice.bearer).status_code == 200
    key = client.post("/api/v1/api_key/", json={"name": "ci"}, headers=alice.bearer).get_json()
    client.delete(f"/api/v1/flows/{flow['id']}", headers=alice.bearer)

    items = _events(client, alice, limit=200)["items"]
    actions = {i["action"] for i in items}
    assert {
        "flow:create", "flow:write", "flow:publish", "share:create", "project:create",
        "variable:create", "variable:write", "api_key:create", "flow:delete",
    } <= actions  # fmt: skip
    dumped = json.dumps(items)
    for secret in ("sk-very-secret-value", "sk-rotated-secret", key["api_key"], alice.api_key):
        assert secret not in dumped
    var_event = next(i for i in items if i["action"] == "variable:create")
    assert var_event["resource_name"] == "OPENAI_KEY" and var_event["resource_id"] == variable["id"]
    assert next(i for i in items if i["action"] == "project:create")["resource_id"] == project["id"]
    # the user events the superuser made (creating alice) are in the superuser's feed
    admin_actions = {i["action"] for i in _events(client, admin, limit=200)["items"]}
    assert {"user:create", "user:write"} <= admin_actions and "flow:create" in admin_actions


def test_flow_audits_shape_scoping_and_pages(client, admin, alice, bob):
    flow = create(client, alice, graph("a"))
    for i in range(3):
        save(client, alice, flow["id"], graph(f"v{i}"))
    create(client, bob, graph("b"), name="bobs")
    page = _events(client, alice, "/api/v1/flows/audits", limit=2)
    assert set(page) == {"items", "next_cursor"}
    first = page["items"][0]
    assert set(first) == {
        "id", "timestamp", "action", "operation", "event_type", "result", "error_code", "request_id", "actor",
        "details", "flow_id", "flow_name",
    }  # fmt: skip
    assert set(first["actor"]) == {"type", "id", "user_id", "acting_issuer", "acting_subject"}
    assert first["actor"] == {
        "type": "user", "id": alice.id, "user_id": alice.id, "acting_issuer": None, "acting_subject": None,
    }  # fmt: skip
    assert first["timestamp"].endswith("Z") and first["event_type"] == "action" and first["result"] == "succeeded"
    assert first["action"] == "flow:write" and first["operation"] == "patch" and first["details"]["fields"] == ["data"]
    rest = _events(client, alice, "/api/v1/flows/audits", limit=50, cursor=page["next_cursor"])
    everything = page["items"] + rest["items"]
    assert len(everything) == 4 and rest["next_cursor"] is None
    assert {i["flow_id"] for i in everything} == {flow["id"]}  # bob's flow is not alice's to see
    assert _events(client, bob, "/api/v1/flows/audits", flow_id=flow["id"])["items"] == []
    # a superuser sees everyone's, filtered
    both = _events(client, admin, "/api/v1/flows/audits", operation="create")["items"]
    assert {i["flow_name"] for i in both} == {"flow", "bobs"}
    only = _events(client, admin, "/api/v1/audits/", resource_type="flow", user_id=bob.id)["items"]
    assert [i["resource_name"] for i in only] == ["bobs"]
    bad = client.get("/api/v1/flows/audits?nope=1", headers=alice.bearer)
    assert bad.status_code == 400
    assert client.get("/api/v1/flows/audits?flow_id=x", headers=alice.bearer).status_code == 400


def test_export_is_json_lines(client, alice):
    create(client, alice, graph("a"))
    response = client.get("/api/v1/audits/export", headers=alice.bearer)
    assert response.status_code == 200 and response.mimetype == "application/x-ndjson"
    lines = response.get_data(as_text=True).splitlines()
    parsed = [json.loads(line) for line in lines]
    assert any(p["action"] == "flow:create" for p in parsed)
    assert all(list(p) == sorted(p) for p in parsed)


def test_entries_are_queued_not_written_in_the_request(app, client, alice):
    """The request only queues the entry; the writer thread (or a read of the log) writes it."""
    engine = appstate.engine(app)
    audit.writer(engine).flush()
    slow = batches.BatchWriter(engine, audit.write, name="audit-writer", interval=3600, retry=True)  # it waits
    batches._writers[("audit-writer", id(engine))] = slow
    flow = create(client, alice, graph("a"))

    def stored() -> int:
        query = sa.select(sa.func.count()).select_from(AuditEvent).where(AuditEvent.resource_id == flow["id"])
        with engine.connect() as conn:
            return int(conn.execute(query).scalar() or 0)

    assert [row["action"] for row in slow.pending()] == ["flow:create"]
    assert stored() == 0  # the request answered before its entry was written
    assert slow.flush() and slow.written == 1 and stored() == 1


def test_user_sees_only_their_own(client, admin, alice):
    bob = make_user(client, admin, username="bob2")
    flow = create(client, alice, graph("a"))
    create(client, bob, graph("b"), name="bobs")
    items = _events(client, bob, limit=200)["items"]
    assert "bobs" in {i["resource_name"] for i in items}
    assert flow["id"] not in {i["resource_id"] for i in items}
    assert all(i["actor"]["user_id"] == bob.id or i["actor"]["id"] == bob.id for i in items)


def test_an_entry_is_told_when_its_change_commits_and_never_when_it_rolls_back(make_app):
    from core import audit as core_audit
    from core import db, hookimpl

    told: list[str] = []

    class Keeper:
        @hookimpl
        def on_audit(self, entry):
            told.append(entry.action)

    app = make_app(plugins=["accounts", ("keeper", Keeper())])
    told.clear()  # the start-up's own entries (the superuser)
    with app.test_request_context("/"):
        s = db.session()
        s.execute(sa.text("SELECT 1"))  # a transaction is open: the entry waits for its end
        core_audit.record("thing:create", "thing", "t1")
        assert told == []
        s.rollback()
        assert told == []  # rolled back: it never happened
        s.execute(sa.text("SELECT 1"))
        core_audit.record("thing:delete", "thing", "t2")
        s.commit()
        assert told == ["thing:delete"]
        core_audit.record("thing:patch", "thing", "t3")  # no transaction open: told at once
        assert told == ["thing:delete", "thing:patch"]


def test_a_forked_worker_writes_with_its_own_writer_and_a_duplicate_never_blocks_the_queue(app):
    """gunicorn forks its workers after the master queued start-up entries: a worker must not write the
    inherited copies again (the master writes them), and an entry already written is skipped, never
    retried forever in front of the entries behind it."""
    import datetime as dt
    import uuid

    from core.contracts import AuditEntry

    engine = appstate.engine(app)
    inherited = audit.writer(engine)
    inherited.flush()
    inherited.pid = -1  # as a forked child sees its parent's writer
    mine = audit.writer(engine)
    assert mine is not inherited and audit.writer(engine) is mine

    def entry(key: str) -> AuditEntry:
        return AuditEntry(
            id=key,
            timestamp=dt.datetime.now(dt.UTC).isoformat(),
            action="thing:create",
            operation="create",
            resource_type="thing",
            resource_id="t",
            resource_name=None,
            user_id=None,
            actor_type="system",
            actor_id=None,
            request_id=str(uuid.uuid4()),
        )

    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    audit.submit(engine, entry(first))
    assert mine.flush() and mine.written == 1
    audit.submit(engine, entry(first))  # written already (a retried batch whose commit went through)
    audit.submit(engine, entry(second))
    assert mine.flush() and mine.written == 3 and not mine.pending()
    with engine.connect() as conn:
        ids = [r[0] for r in conn.execute(sa.select(AuditEvent.id).where(AuditEvent.resource_type == "thing"))]
    assert sorted(str(i) for i in ids) == sorted([first, second])
