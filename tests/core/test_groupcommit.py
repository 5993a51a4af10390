"""Group commit (core.groupcommit): batching, completion and failure isolation."""

from __future__ import annotations

import contextlib
import threading
import uuid

import pytest

from core.groupcommit import GroupCommit


class FakeStore:
    """A 'connection' whose commit makes rows visible; a row with ``bad`` fails its whole transaction."""

    def __init__(self, first_write_blocks: threading.Event | None = None) -> None:
        self.committed: list[dict] = []
        self.transactions: list[int] = []
        self.gate = first_write_blocks
        self.entered = threading.Event()
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def connect(self):
        pending: list[dict] = []
        yield pending
        with self.lock:  # commit: all or nothing
            self.committed.extend(pending)
            self.transactions.append(len(pending))

    def write(self, conn: list, rows: list[dict]) -> None:
        if self.gate is not None and not self.entered.is_set():
            self.entered.set()
            assert self.gate.wait(10)  # the first group is being written while the others arrive
        if any(row.get("bad") for row in rows):
            raise ValueError("bad row")
        conn.extend(rows)


def test_callers_arriving_during_a_write_share_the_next_transaction():
    gate = threading.Event()
    store = FakeStore(first_write_blocks=gate)
    group = GroupCommit(store.connect, store.write)
    returned: dict[str, bool] = {}

    def submit(name: str) -> None:
        group.submit([{"id": name}])
        # nobody returns before their row is committed
        returned[name] = any(row["id"] == name for row in store.committed)

    first = threading.Thread(target=submit, args=("first",))
    first.start()
    assert store.entered.wait(10)
    others = [threading.Thread(target=submit, args=(f"r{i}",)) for i in range(8)]
    for t in others:
        t.start()
    deadline = threading.Event()
    for _ in range(200):  # wait until all eight are queued behind the leader
        if len(group._pending) == 8:
            break
        deadline.wait(0.01)
    assert len(group._pending) == 8
    gate.set()
    for t in [first, *others]:
        t.join(10)
    assert returned == {name: True for name in ["first", *(f"r{i}" for i in range(8))]}
    assert store.transactions == [1, 8]  # the leader alone, then the eight queued ones in one commit
    assert (group.groups, group.rows) == (2, 9)
    assert not group._leading and not group._pending


def test_a_failing_batch_fails_only_its_own_caller():
    gate = threading.Event()
    store = FakeStore(first_write_blocks=gate)
    group = GroupCommit(store.connect, store.write)
    outcome: dict[str, str] = {}

    def submit(name: str, bad: bool = False) -> None:
        try:
            group.submit([{"id": name, "bad": bad}, {"id": f"{name}-2", "bad": False}])
            outcome[name] = "ok"
        except ValueError as exc:
            outcome[name] = str(exc)

    first = threading.Thread(target=submit, args=("first",))
    first.start()
    assert store.entered.wait(10)
    threads = [threading.Thread(target=submit, args=(n, n == "b")) for n in ("a", "b", "c")]
    for t in threads:
        t.start()
    for _ in range(200):
        if len(group._pending) == 3:
            break
        threading.Event().wait(0.01)
    gate.set()
    for t in [first, *threads]:
        t.join(10)
    assert outcome == {"first": "ok", "a": "ok", "b": "bad row", "c": "ok"}
    ids = sorted(row["id"] for row in store.committed)
    assert ids == sorted(["first", "first-2", "a", "a-2", "c", "c-2"])  # nothing of b, everything else
    assert not group._leading


def test_a_caller_alone_writes_at_once_and_errors_reach_it():
    store = FakeStore()
    group = GroupCommit(store.connect, store.write)
    group.submit([{"id": "x"}])
    assert store.transactions == [1]
    with pytest.raises(ValueError):
        group.submit([{"id": "y", "bad": True}])
    group.submit([{"id": "z"}])  # the writer recovers
    assert [row["id"] for row in store.committed] == ["x", "z"]


def test_concurrent_runs_store_every_message(app):
    """Through the real upsert (both databases): threads storing runs' messages at once lose none, mix no owner."""
    from service_monitor import services

    from core import db, groupcommit
    from core.app import state
    from core.contracts import MessageRecord

    owners = [str(uuid.uuid4()) for _ in range(4)]
    flow_id = str(uuid.uuid4())
    errors: list[BaseException] = []

    def run(owner: str, n: int) -> None:
        try:
            with app.app_context():
                for i in range(n):
                    services.store_messages(
                        state().engine,
                        owner,
                        [
                            MessageRecord(flow_id=flow_id, session_id=owner, text=f"q{i}", sender="User"),
                            MessageRecord(flow_id=flow_id, session_id=owner, text=f"a{i}", sender="Machine"),
                        ],
                    )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(owner, 25)) for owner in owners]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert groupcommit.writer(state(app).engine).rows >= 100  # one write (upsert + its rows) per run
    with app.app_context():
        for owner in owners:
            history = services.history(db.session(), owner, flow_id, owner, 1000)
            assert [m["text"] for m in history] == [t for i in range(25) for t in (f"q{i}", f"a{i}")]
