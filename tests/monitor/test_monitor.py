"""Monitor plugin: messages, sessions, shared messages, vertex builds, transactions, logs."""

import dataclasses
import datetime as dt
import logging
import uuid

import pytest
from service_monitor import plugin as monitor_plugin

from core.app import state
from core.contracts import MessageRecord, VertexRecord
from core.runs import shared_flow_id

FLOW = str(uuid.uuid4())
OTHER_FLOW = str(uuid.uuid4())


def store(app, user_id, flow_id, session, text, *, sender="User", seconds=0, msg_id=None):
    message = {
        "id": msg_id or str(uuid.uuid4()),
        "flow_id": flow_id,
        "session_id": session,
        "sender": sender,
        "sender_name": "User" if sender == "User" else "AI",
        "text": text,
        "files": [],
        "timestamp": (dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=seconds)).isoformat(),
        "properties": {"source": {"id": "ChatInput-1", "display_name": "Chat Input", "source": None}},
    }
    with app.app_context():
        state(app).host.hooks.on_messages(user_id=user_id, messages=[MessageRecord.from_dict(message)])
    return message


@pytest.fixture
def seeded(app, alice, bob):
    store(app, alice.id, FLOW, "s1", "hello", seconds=1)
    store(app, alice.id, FLOW, "s1", "HELLO", sender="Machine", seconds=2)
    store(app, alice.id, FLOW, "s2", "second session", seconds=3)
    store(app, alice.id, OTHER_FLOW, "s3", "other flow", seconds=4)
    store(app, bob.id, FLOW, "s1", "bob's secret", seconds=5)
    return app


def test_messages_are_scoped_filtered_and_ordered(client, seeded, alice, bob):
    mine = client.get(f"/api/v1/monitor/messages?flow_id={FLOW}", headers=alice.key).get_json()
    assert [m["text"] for m in mine] == ["hello", "HELLO", "second session"]
    assert all(m["flow_id"] == FLOW for m in mine)
    assert mine[0]["timestamp"].startswith("2026-01-01T00:00:01")
    assert mine[0]["properties"]["source"]["display_name"] == "Chat Input"
    desc = client.get(f"/api/v1/monitor/messages?flow_id={FLOW}&order=DESC&limit=2", headers=alice.key).get_json()
    assert [m["text"] for m in desc] == ["second session", "HELLO"]
    assert [
        m["text"]
        for m in client.get(f"/api/v1/monitor/messages?flow_id={FLOW}&sender=Machine", headers=alice.key).get_json()
    ] == ["HELLO"]
    assert [
        m["text"] for m in client.get("/api/v1/monitor/messages?session_id=s1&offset=1", headers=alice.key).get_json()
    ] == ["HELLO"]
    # bob sees only his own message of the same flow and session
    theirs = client.get(f"/api/v1/monitor/messages?flow_id={FLOW}", headers=bob.key).get_json()
    assert [m["text"] for m in theirs] == ["bob's secret"]
    bad = client.get("/api/v1/monitor/messages?order_by=password_hash", headers=alice.key)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["query", "order_by"]
    assert client.get("/api/v1/monitor/messages").status_code == 403


@pytest.mark.parametrize("order", ["ASC", "DESC"])
def test_cursor_pages_are_the_offset_pages(client, app, alice, bob, order):
    """Keyset pagination: following X-Next-Cursor walks the same messages, in the same order, as offset pages
    (ties on the timestamp included), stays in the caller's filter, and a wrong cursor is a 422."""
    flow = str(uuid.uuid4())
    for i in range(23):  # pairs of messages share a timestamp: the id breaks the tie
        store(app, alice.id, flow, f"s{i % 3}", f"m{i}", seconds=i // 2)
    store(app, bob.id, flow, "s0", "bob's", seconds=5)
    base = f"/api/v1/monitor/messages?flow_id={flow}&order={order}&limit=5"
    by_offset = []
    for offset in range(0, 25, 5):
        page = client.get(f"{base}&offset={offset}", headers=alice.key)
        by_offset += [m["id"] for m in page.get_json()]
    assert len(by_offset) == 23
    by_cursor, url, pages = [], base, 0
    while True:
        page = client.get(url, headers=alice.key)
        assert page.status_code == 200
        by_cursor += [m["id"] for m in page.get_json()]
        pages += 1
        cursor = page.headers.get("X-Next-Cursor")
        if cursor is None:
            break
        assert len(page.get_json()) == 5
        url = f"{base}&cursor={cursor}"
    assert by_cursor == by_offset and pages == 5  # the last page (3 rows) has no cursor
    first = client.get(base, headers=alice.key)
    cursor = first.headers["X-Next-Cursor"]
    # the cursor is opaque but bound to its order: another order, garbage, or cursor with offset is a 422
    other = "DESC" if order == "ASC" else "ASC"
    for url in (
        f"/api/v1/monitor/messages?flow_id={flow}&order={other}&limit=5&cursor={cursor}",
        f"/api/v1/monitor/messages?flow_id={flow}&order_by=text&order={order}&limit=5&cursor={cursor}",
        f"{base}&cursor=not-a-cursor",
        f"{base}&cursor={cursor}&offset=5",
    ):
        bad = client.get(url, headers=alice.key)
        assert bad.status_code == 422, url
        assert bad.get_json()["detail"][0]["loc"][0] == "query"
    # bob's cursor over the same flow sees bob's rows only
    theirs = client.get(f"{base}&cursor={cursor}", headers=bob.key).get_json()
    assert all(m["text"] == "bob's" for m in theirs)
    # without limit there is no page, and no cursor
    assert "X-Next-Cursor" not in client.get(f"/api/v1/monitor/messages?flow_id={flow}", headers=alice.key).headers


def test_sessions_rename_and_delete(client, seeded, alice, bob):
    sessions = client.get(f"/api/v1/monitor/messages/sessions?flow_id={FLOW}", headers=alice.key).get_json()
    assert sessions == ["s2", "s1"]  # newest first
    renamed = client.patch("/api/v1/monitor/messages/session/s1?new_session_id=renamed", headers=alice.key)
    assert renamed.status_code == 200
    assert {m["session_id"] for m in renamed.get_json()} == {"renamed"} and len(renamed.get_json()) == 2
    # bob's s1 was not touched, and bob cannot rename alice's session
    assert client.get("/api/v1/monitor/messages?session_id=s1", headers=bob.key).get_json()[0]["text"] == "bob's secret"
    assert client.patch("/api/v1/monitor/messages/session/renamed?new_session_id=x", headers=bob.key).status_code == 404
    assert client.delete("/api/v1/monitor/messages/session/renamed", headers=bob.key).status_code == 204
    assert len(client.get("/api/v1/monitor/messages?session_id=renamed", headers=alice.key).get_json()) == 2
    assert client.delete("/api/v1/monitor/messages/session/renamed", headers=alice.key).status_code == 204
    assert client.get("/api/v1/monitor/messages?session_id=renamed", headers=alice.key).get_json() == []


def test_a_session_of_one_flow(client, seeded, alice, bob):
    """``flow_id`` on the session routes: that flow's session only. A flow id that names no stored flow keeps to the
    caller's own messages of it; another user's unshared flow is 404; the owner of a stored flow renames and
    deletes every user's messages of its session (a team's, docs/teams-and-sso.md)."""
    app = seeded
    store(app, alice.id, OTHER_FLOW, "s1", "same session id, other flow", seconds=6)
    renamed = client.patch(f"/api/v1/monitor/messages/session/s1?new_session_id=one&flow_id={FLOW}", headers=alice.key)
    assert renamed.status_code == 200
    assert sorted(m["text"] for m in renamed.get_json()) == ["HELLO", "hello"]  # not bob's, not the other flow's
    other = client.get(f"/api/v1/monitor/messages?flow_id={OTHER_FLOW}&session_id=s1", headers=alice.key).get_json()
    assert [m["text"] for m in other] == ["same session id, other flow"]
    assert client.get("/api/v1/monitor/messages?session_id=s1", headers=bob.key).get_json()[0]["text"] == "bob's secret"
    gone = client.delete(f"/api/v1/monitor/messages/session/s1?flow_id={OTHER_FLOW}", headers=alice.key)
    assert gone.status_code == 204
    assert (
        client.get(f"/api/v1/monitor/messages?flow_id={OTHER_FLOW}&session_id=s1", headers=alice.key).get_json() == []
    )
    assert len(client.get(f"/api/v1/monitor/messages?flow_id={FLOW}&session_id=one", headers=alice.key).get_json()) == 2
    # a stored flow of bob's: alice may not see it (404), bob works on every user's messages of its session
    body = {"name": "bob's flow", "data": {"nodes": [], "edges": []}}
    flow = client.post("/api/v1/flows/", json=body, headers=bob.key).get_json()["id"]
    store(app, alice.id, flow, "chat", "alice in bob's flow", seconds=7)
    store(app, bob.id, flow, "chat", "bob in his flow", seconds=8)
    url = f"/api/v1/monitor/messages/session/chat?new_session_id=x&flow_id={flow}"
    assert client.patch(url, headers=alice.key).status_code == 404
    assert client.delete(f"/api/v1/monitor/messages/session/chat?flow_id={flow}", headers=alice.key).status_code == 404
    both = client.patch(url, headers=bob.key)
    assert both.status_code == 200 and sorted(m["text"] for m in both.get_json()) == [
        "alice in bob's flow",
        "bob in his flow",
    ]
    assert client.delete(f"/api/v1/monitor/messages/session/x?flow_id={flow}", headers=bob.key).status_code == 204
    assert client.get(f"/api/v1/monitor/messages?flow_id={flow}", headers=alice.key).status_code == 404
    assert [m["text"] for m in client.get("/api/v1/monitor/messages?session_id=x", headers=alice.key).get_json()] == []
    bad = client.patch("/api/v1/monitor/messages/session/one?new_session_id=y&flow_id=12", headers=alice.key)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"] == ["query", "flow_id"]


def test_bulk_session_deletion(client, seeded, alice, bob):
    out = client.delete("/api/v1/monitor/messages/sessions", json=["s1", "s2", "nope"], headers=alice.key)
    assert out.status_code == 200
    assert out.get_json() == {"message": "Messages deleted successfully for 2 sessions", "deleted_count": 2}
    assert [m["text"] for m in client.get("/api/v1/monitor/messages", headers=alice.key).get_json()] == ["other flow"]
    assert len(client.get("/api/v1/monitor/messages", headers=bob.key).get_json()) == 1
    empty = client.delete("/api/v1/monitor/messages/sessions", json=[], headers=alice.key)
    assert empty.get_json() == {"message": "No sessions to delete", "deleted_count": 0}
    too_many = client.delete("/api/v1/monitor/messages/sessions", json=[f"s{i}" for i in range(501)], headers=alice.key)
    assert too_many.status_code == 400
    not_a_list = client.delete("/api/v1/monitor/messages/sessions", json={"a": 1}, headers=alice.key)
    assert not_a_list.status_code == 422


def test_update_and_delete_messages(client, seeded, alice, bob):
    message = client.get("/api/v1/monitor/messages?session_id=s2", headers=alice.key).get_json()[0]
    updated = client.put(
        f"/api/v1/monitor/messages/{message['id']}", json={"text": "edited", "junk": 1}, headers=alice.key
    )
    assert updated.status_code == 200
    body = updated.get_json()
    assert body["text"] == "edited" and body["edit"] is True and body["properties"]["edited"] is True
    assert (
        client.put(f"/api/v1/monitor/messages/{message['id']}", json={"text": "x"}, headers=bob.key).status_code == 404
    )
    assert client.put("/api/v1/monitor/messages/not-a-uuid", json={}, headers=alice.key).status_code == 404
    bobs = client.get("/api/v1/monitor/messages", headers=bob.key).get_json()[0]["id"]
    gone = client.delete("/api/v1/monitor/messages", json=[message["id"], bobs], headers=alice.key)
    assert gone.status_code == 204
    assert client.get("/api/v1/monitor/messages?session_id=s2", headers=alice.key).get_json() == []
    assert len(client.get("/api/v1/monitor/messages", headers=bob.key).get_json()) == 1  # not alice's to delete
    bad = client.delete("/api/v1/monitor/messages", json=["nope"], headers=alice.key)
    assert bad.status_code == 422 and bad.get_json()["detail"][0]["loc"][0] == "body"


def test_a_streamed_answer_is_stored_once_with_its_final_text(app, client, alice):
    msg_id = str(uuid.uuid4())
    store(app, alice.id, FLOW, "s", "Hel", sender="Machine", msg_id=msg_id)
    store(app, alice.id, FLOW, "s", "Hello world", sender="Machine", msg_id=msg_id)
    messages = client.get("/api/v1/monitor/messages?session_id=s", headers=alice.key).get_json()
    assert [(m["id"], m["text"]) for m in messages] == [(msg_id, "Hello world")]


def test_message_history_hook_is_owner_scoped(seeded, alice, bob):
    with seeded.app_context():
        hook = state(seeded).host.hooks
        history = hook.message_history(user_id=alice.id, flow_id=FLOW, session_id="s1", limit=10) or []
        assert [m.text for m in history] == ["hello", "HELLO"]
        last = hook.message_history(user_id=alice.id, flow_id=FLOW, session_id="s1", limit=1) or []
        assert [m.text for m in last] == ["HELLO"]
        theirs = hook.message_history(user_id=bob.id, flow_id=FLOW, session_id="s1", limit=10) or []
        assert [m.text for m in theirs] == ["bob's secret"]


def test_shared_messages_live_under_a_virtual_flow(app, client, alice, bob):
    source = str(uuid.uuid4())
    virtual = str(shared_flow_id(alice.id, source))
    assert virtual != str(shared_flow_id(bob.id, source))
    store(app, alice.id, virtual, "chat", "hi shared")
    listed = client.get(f"/api/v1/monitor/messages/shared?source_flow_id={source}", headers=alice.key).get_json()
    assert [m["text"] for m in listed] == ["hi shared"]
    assert client.get(f"/api/v1/monitor/messages/shared?source_flow_id={source}", headers=bob.key).get_json() == []
    assert client.get(
        f"/api/v1/monitor/messages/shared/sessions?source_flow_id={source}", headers=alice.key
    ).get_json() == ["chat"]
    msg_id = listed[0]["id"]
    edited = client.put(
        f"/api/v1/monitor/messages/shared/{msg_id}?source_flow_id={source}", json={"text": "yo"}, headers=alice.key
    )
    assert edited.status_code == 200 and edited.get_json()["text"] == "yo"
    renamed = client.patch(
        f"/api/v1/monitor/messages/shared/session/chat?new_session_id=c2&source_flow_id={source}", headers=alice.key
    )
    assert renamed.status_code == 200 and renamed.get_json()[0]["session_id"] == "c2"
    assert (
        client.delete(
            f"/api/v1/monitor/messages/shared/session/c2?source_flow_id={source}", headers=alice.key
        ).status_code
        == 204
    )
    assert client.get(f"/api/v1/monitor/messages/shared?source_flow_id={source}", headers=alice.key).get_json() == []
    missing = client.get("/api/v1/monitor/messages/shared", headers=alice.key)
    assert missing.status_code == 422 and missing.get_json()["detail"][0]["loc"] == ["query", "source_flow_id"]


def _vertex(user_id, flow_id, vertex_id, valid=True):
    return VertexRecord(
        user_id=user_id,
        flow_id=flow_id,
        job_id="job-1",
        vertex_id=vertex_id,
        valid=valid,
        data={"results": {"x": 1}},
        artifacts={},
        params="p",
        inputs={"a": 1},
        outputs={"message": {"message": "m", "type": "text"}},
        error=None if valid else "boom",
        target_id=None,
    )


def test_vertex_builds_and_transactions_are_recorded_off_the_run_path(app, client, alice, bob):
    with app.app_context():
        # the recorder is the engine's (on PostgreSQL one per test process, across tests): count from here
        recorder = monitor_plugin.recorder(app)
        recorder.flush()
        before = recorder.written
        hook = state(app).host.hooks
        hook.on_vertex_built(record=_vertex(alice.id, FLOW, "ChatInput-1"))
        hook.on_vertex_built(record=_vertex(alice.id, FLOW, "ChatOutput-2", valid=False))
        hook.on_vertex_built(record=_vertex(bob.id, FLOW, "ChatInput-1"))
        recorder.flush()  # what the writer's thread has not written yet, written now
        assert recorder.written - before == 3 and not recorder.writer.pending()
    builds = client.get(f"/api/v1/monitor/builds?flow_id={FLOW}", headers=alice.key).get_json()["vertex_builds"]
    assert set(builds) == {"ChatInput-1", "ChatOutput-2"}
    assert builds["ChatOutput-2"][0]["valid"] is False and builds["ChatInput-1"][0]["job_id"] == "job-1"
    page = client.get(f"/api/v1/monitor/transactions?flow_id={FLOW}&size=1", headers=alice.key).get_json()
    assert (page["total"], page["pages"], page["size"], len(page["items"])) == (2, 2, 1, 1)
    statuses = {
        t["vertex_id"]: t["status"]
        for t in client.get(f"/api/v1/monitor/transactions?flow_id={FLOW}", headers=alice.key).get_json()["items"]
    }
    assert statuses == {"ChatInput-1": "success", "ChatOutput-2": "error"}
    assert client.get(f"/api/v1/monitor/transactions?flow_id={FLOW}", headers=bob.key).get_json()["total"] == 1
    assert client.get(f"/api/v1/monitor/transactions?flow_id={FLOW}&size=101", headers=alice.key).status_code == 422
    assert client.delete(f"/api/v1/monitor/builds?flow_id={FLOW}", headers=alice.key).status_code == 204
    assert client.get(f"/api/v1/monitor/builds?flow_id={FLOW}", headers=alice.key).get_json() == {"vertex_builds": {}}
    assert len(client.get(f"/api/v1/monitor/builds?flow_id={FLOW}", headers=bob.key).get_json()["vertex_builds"]) == 1


def test_recorder_prunes_per_flow_and_drops_when_full(app, alice):
    from service_monitor.recorder import Recorder

    engine = state(app).engine
    rec = Recorder(engine, capacity=5, keep_per_flow=3, prune_batch=2)
    for i in range(7):
        rec.submit(_vertex(alice.id, FLOW, f"V-{i}"))
    assert rec.dropped == 2
    assert rec.flush() == 5
    import sqlalchemy as sa
    from service_monitor.models import Transaction, VertexBuild

    with engine.connect() as conn:
        kept = conn.scalar(
            sa.select(sa.func.count()).select_from(VertexBuild).where(VertexBuild.flow_id == uuid.UUID(FLOW))
        )
        kept_tx = conn.scalar(sa.select(sa.func.count()).select_from(Transaction))
    assert kept == 3 or kept == 4  # pruning removes at most prune_batch rows per flush
    assert kept_tx in (3, 4)
    rec.close()


def test_deleting_a_user_deletes_their_monitor_rows(app, client, seeded, admin, alice, bob):
    assert client.delete(f"/api/v1/users/{alice.id}", headers=admin.bearer).status_code == 200
    import sqlalchemy as sa
    from service_monitor.models import Message

    with state(app).engine.connect() as conn:
        owners = set(conn.scalars(sa.select(Message.user_id)))
    assert owners == {uuid.UUID(bob.id)}


def test_logs_are_off_by_default_and_superuser_only(make_app):
    from tests.conftest import make_user, superuser

    client = make_app().test_client()
    admin = superuser(client)
    assert client.get("/logs", headers=admin.key).get_json() == {"detail": "Log retrieval is disabled"}
    assert client.get("/logs", headers=admin.key).status_code == 501

    app = make_app(enable_log_retrieval=True)
    client = app.test_client()
    admin = superuser(client)
    user = make_user(client, admin)
    assert client.get("/logs", headers=user.key).status_code == 403
    logging.getLogger("probe").warning("the probe line")
    lines = client.get("/logs?lines_before=50", headers=admin.key).get_json()
    assert any("the probe line" in line for line in lines.values())
    assert client.get("/logs?lines_before=1&lines_after=1&timestamp=5", headers=admin.key).status_code == 400
    assert client.get("/logs?lines_after=3", headers=admin.key).status_code == 400
    first = min(int(k) for k in lines)
    logging.getLogger("probe").warning("a later line")
    # the reference counts lines_after from the first line at or after the timestamp
    after = client.get(f"/logs?lines_after=1&timestamp={first + 1}", headers=admin.key).get_json()
    assert len(after) == 1 and int(next(iter(after))) > first
    assert "the probe line" not in next(iter(after.values()))


def test_a_message_id_of_another_user_cannot_be_overwritten(app, client, alice, bob):
    msg_id = str(uuid.uuid4())
    store(app, alice.id, FLOW, "s", "alice's words", msg_id=msg_id)
    store(app, bob.id, FLOW, "s", "bob's overwrite", msg_id=msg_id)
    assert [m["text"] for m in client.get("/api/v1/monitor/messages", headers=alice.key).get_json()] == [
        "alice's words"
    ]
    assert client.get("/api/v1/monitor/messages", headers=bob.key).get_json() == []


def test_recorder_prunes_a_flow_once_enough_rows_were_written_for_it(app, alice):
    import sqlalchemy as sa
    from service_monitor.models import Transaction
    from service_monitor.recorder import Recorder

    engine = state(app).engine
    rec = Recorder(engine, keep_per_flow=4, prune_every=3, prune_batch=100)

    def kept() -> int:
        with engine.connect() as conn:
            return conn.scalar(
                sa.select(sa.func.count()).select_from(Transaction).where(Transaction.flow_id == uuid.UUID(FLOW))
            )

    for i in range(5):
        rec.submit(_vertex(alice.id, FLOW, f"V-{i}"))
    rec.flush()
    assert kept() == 4  # 5 written since the last pruning (>= 3): pruned to 4
    for i in range(2):
        rec.submit(_vertex(alice.id, FLOW, f"W-{i}"))
    rec.flush()
    assert kept() == 6  # 2 more: not counted yet
    rec.submit(_vertex(alice.id, FLOW, "X"))
    rec.flush()
    assert kept() == 4  # the third since the last pruning: pruned again
    rec.close()


def test_pruning_reads_one_owners_flow_through_the_index(app, alice, bob):
    """The pruning's count and oldest-rows select use (user_id, flow_id, timestamp), not a walk of every
    owner's rows with a sort; and pruning alice's flow leaves bob's rows of the same flow id alone."""
    import sqlalchemy as sa
    from service_monitor.models import Transaction, VertexBuild
    from service_monitor.recorder import Recorder, count_statement, oldest_statement

    engine = state(app).engine
    owner, flow = uuid.UUID(alice.id), uuid.UUID(FLOW)
    if engine.dialect.name == "sqlite":
        for model, key in ((Transaction, Transaction.id), (VertexBuild, VertexBuild.build_id)):
            for statement in (count_statement(model, owner, flow), oldest_statement(model, key, owner, flow, 10)):
                sql = str(statement.compile(engine, compile_kwargs={"literal_binds": True}))
                with engine.connect() as conn:
                    plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
                assert "(user_id=? AND flow_id=?)" in plan, plan
                assert "TEMP B-TREE" not in plan, plan
    rec = Recorder(engine, keep_per_flow=2, prune_every=1, prune_batch=100)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for i in range(3):
        rec.submit(dataclasses.replace(_vertex(bob.id, FLOW, f"B-{i}"), timestamp=start + dt.timedelta(seconds=i)))
    rec.flush()
    for i in range(5):
        rec.submit(dataclasses.replace(_vertex(alice.id, FLOW, f"A-{i}"), timestamp=start + dt.timedelta(seconds=i)))
    rec.flush()
    with engine.connect() as conn:
        rows = conn.execute(sa.select(Transaction.user_id, Transaction.vertex_id).where(Transaction.flow_id == flow))
        kept = sorted((str(user), vertex) for user, vertex in rows)
    assert kept == sorted([(bob.id, "B-1"), (bob.id, "B-2"), (alice.id, "A-3"), (alice.id, "A-4")])
    rec.close()
