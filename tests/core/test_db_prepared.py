"""core.db.Prepared and core.db.raw: the hot path's statements on the driver read and write exactly as
SQLAlchemy's own execution does (SQLite and, with SERVICE_TEST_DATABASE_URL, PostgreSQL)."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
import sqlalchemy as sa

from core import db
from core.app import state


def _flow(client, caller):
    from tests.run.runkit import chat_echo, create_flow

    return create_flow(client, caller, chat_echo(), name="prepared", endpoint_name="prepared-ep")


def test_a_select_reads_what_the_session_reads(app, client, alice):
    from service_flows.models import Flow

    flow = _flow(client, alice)
    t = Flow.__table__.c
    statement = sa.select(Flow.__table__).where(t.user_id == sa.bindparam("owner"), t.id == sa.bindparam("key"))
    prepared = db.Prepared(statement)
    params = {"owner": uuid.UUID(alice.id), "key": uuid.UUID(flow["id"])}
    with app.app_context():
        fast = prepared.first_mapping(params)
        slow = dict(db.session().connection().execute(statement, params).mappings().one())
        db.release()
    assert fast == slow
    assert isinstance(fast["id"], uuid.UUID) and isinstance(fast["data"], dict)
    assert fast["updated_at"].tzinfo is not None or state(app).engine.dialect.name == "sqlite"
    with app.app_context():
        assert prepared.first({"owner": uuid.uuid4(), "key": uuid.UUID(flow["id"])}) is None  # another owner


def test_writes_round_trip_every_column_type(app, alice):
    from service_monitor.models import Message
    from service_monitor.services import MESSAGE_COLUMNS, _upsert

    stamp = dt.datetime(2026, 11, 22, 10, 0, 0, 123456, tzinfo=dt.UTC)
    row = {
        "id": uuid.uuid4(),
        "user_id": uuid.UUID(alice.id),
        "flow_id": uuid.uuid4(),
        "run_id": None,
        "timestamp": stamp,
        "sender": "User",
        "sender_name": "Alice",
        "session_id": "s1",
        "context_id": "",
        "text": "héllo \u2603",
        "category": "message",
        "files": ["a.txt"],
        "edit": True,
        "error": False,
        "duration": 12,
        "properties": {"nested": {"k": [1, 2]}},
        "content_blocks": [],
        "session_metadata": {},
    }
    assert set(row) == set(MESSAGE_COLUMNS)
    engine = state(app).engine
    with app.app_context():
        with db.raw(engine, write=True) as conn:
            _upsert(engine.dialect.name).execute_many([row], conn, engine.dialect)
        # the upsert: the same id again updates the row, its owner never changes
        with db.raw(engine, write=True) as conn:
            _upsert(engine.dialect.name).execute_many([{**row, "text": "edited"}], conn, engine.dialect)
        stored = db.session().get(Message, row["id"])
        assert stored is not None
        assert (stored.text, stored.edit, stored.error, stored.files) == ("edited", True, False, ["a.txt"])
        assert stored.properties == {"nested": {"k": [1, 2]}}
        assert stored.timestamp == stamp  # microseconds and zone kept
        db.release()


def test_raw_uses_the_sessions_connection_when_it_holds_one(app):
    engine = state(app).engine
    with app.app_context():
        s = db.session()
        s.connection()  # the request already holds a connection (SQLite has one per process)
        held = s.connection().connection.dbapi_connection
        with db.raw(engine) as conn:
            assert conn is held  # no second checkout: with one pooled connection it would wait on itself
        assert db.Prepared(sa.select(sa.literal(1).label("one"))).first({}) == (1,)
        db.release()
    with db.raw(engine) as conn:  # outside a request: a pooled connection of its own
        assert conn is not None


def test_a_write_that_fails_rolls_back(app, alice):
    from service_monitor.models import Message
    from service_monitor.services import _upsert

    engine = state(app).engine
    good = _message(alice.id, "t")
    bad = {**good, "id": uuid.uuid4(), "text": None}  # text is NOT NULL
    # the driver's own IntegrityError (sqlite3 or psycopg)
    with pytest.raises(Exception) as failed, db.raw(engine, write=True) as conn:
        _upsert(engine.dialect.name).execute_many([good, bad], conn, engine.dialect)
    assert "null" in str(failed.value).lower()
    with engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(Message.__table__)) == 0  # nothing half-written


def test_statements_it_cannot_prepare_fall_back_to_sqlalchemy(app, client, alice):
    from service_flows.models import Flow

    flow = _flow(client, alice)
    ids = sa.bindparam("ids", expanding=True)
    expanding = db.Prepared(sa.select(Flow.__table__.c.name).where(Flow.__table__.c.id.in_(ids)))
    with app.app_context():
        assert expanding.all({"ids": [uuid.UUID(flow["id"]), uuid.uuid4()]}) == [("prepared",)]
        assert expanding._compiled[state(app).engine.dialect.name] is None  # went through Connection.execute
        db.release()


def _message(owner: str, text: str) -> dict:
    return {
        "id": uuid.uuid4(),
        "user_id": uuid.UUID(owner),
        "flow_id": None,
        "run_id": None,
        "timestamp": dt.datetime.now(dt.UTC),
        "sender": "User",
        "sender_name": "A",
        "session_id": "s",
        "context_id": "",
        "text": text,
        "category": "message",
        "files": [],
        "edit": False,
        "error": False,
        "duration": None,
        "properties": {},
        "content_blocks": [],
        "session_metadata": {},
    }


def _texts(engine) -> set[str]:
    from service_monitor.models import Message

    with engine.connect() as conn:
        return set(conn.scalars(sa.select(Message.__table__.c.text)))


def test_a_deferred_write_commits_with_the_requests_next_submit(app, alice):
    """core.groupcommit.defer: a row handed over waits for the request's next submit, in the same commit."""
    from service_monitor.services import _upsert

    from core import groupcommit

    engine = state(app).engine
    upsert = _upsert(engine.dialect.name)
    with app.app_context():
        assert not db.holds_transaction(engine)
        groupcommit.defer(engine, upsert, [_message(alice.id, "first")])
        assert "first" not in _texts(engine)  # nothing written yet, no connection held
        groupcommit.submit(engine, [(upsert, [_message(alice.id, "second")])])
        assert {"first", "second"} <= _texts(engine)
        assert groupcommit.take_deferred(engine) == []  # written: no longer pending
        groupcommit.defer(engine, upsert, [_message(alice.id, "flushed")])
        groupcommit.flush(engine)  # a run that stored no message
        groupcommit.defer(engine, upsert, [_message(alice.id, "discarded")])
        groupcommit.discard()
        groupcommit.flush(engine)
        groupcommit.defer(engine, upsert, [_message(alice.id, "left over")])
    texts = _texts(engine)  # the app context ended with a write still deferred: it is forgotten
    assert "flushed" in texts and "discarded" not in texts and "left over" not in texts


def test_writes_join_the_session_when_it_holds_a_transaction(app, alice):
    from service_monitor.services import _upsert

    from core import groupcommit

    engine = state(app).engine
    upsert = _upsert(engine.dialect.name)
    with app.app_context():
        s = db.session()
        s.connection()  # the session holds SQLite's one pooled connection: another writer would wait on it
        assert db.holds_transaction(engine)
        groupcommit.defer(engine, upsert, [_message(alice.id, "deferred")])
        groupcommit.submit(engine, [(upsert, [_message(alice.id, "joined")])])
        assert not s.in_transaction()  # written on the session's connection and committed there
        db.release()
    assert {"deferred", "joined"} <= _texts(engine)
