"""core.batches: rows written off the callers' threads, in batches, in order; failures dropped or retried."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from core import batches

ROWS = sa.table("rows", sa.column("n", sa.Integer))


@pytest.fixture
def engine(tmp_path: Path) -> sa.Engine:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'b.db'}")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE rows (n INTEGER PRIMARY KEY)"))
    return engine


def stored(engine: sa.Engine) -> list[int]:
    with engine.connect() as conn:
        return [n for (n,) in conn.execute(sa.text("SELECT n FROM rows ORDER BY rowid"))]


def test_rows_put_while_a_batch_is_written_go_in_the_next_one_in_order(engine):
    batches_seen: list[list[int]] = []
    gate = threading.Event()

    def write(engine: sa.Engine, items: list[int]) -> None:
        gate.wait(10)  # the first batch is held until the test has put the rest
        batches_seen.append(list(items))
        with engine.begin() as conn:
            conn.execute(ROWS.insert(), [{"n": n} for n in items])

    w = batches.BatchWriter(engine, write, name="test-writer")
    w.put(0)
    deadline = time.monotonic() + 10
    while w.pending() == [0] and not w._busy and time.monotonic() < deadline:  # the thread takes [0], waits
        time.sleep(0.005)
    for n in range(1, 50):
        w.put(n)
    assert w.pending() == list(range(50))  # the batch being written counts as pending too
    gate.set()
    assert w.flush(timeout=10)
    assert stored(engine) == list(range(50))
    assert w.pending() == [] and w.written == 50
    assert batches_seen == [[0], list(range(1, 50))]


def test_a_failed_batch_is_dropped_or_kept_to_try_again(engine, caplog):
    attempts: list[list[int]] = []

    def flaky(engine: sa.Engine, items: list[int]) -> None:
        attempts.append(list(items))
        if len(attempts) == 1:
            raise sa.exc.OperationalError("INSERT", {}, Exception("database is locked"))
        with engine.begin() as conn:
            conn.execute(ROWS.insert(), [{"n": n} for n in items])

    dropping = batches.BatchWriter(engine, flaky, name="dropping")
    dropping.put(1)
    assert dropping.flush(timeout=10)
    dropping.put(2)
    assert dropping.flush(timeout=10)
    assert stored(engine) == [2] and dropping.written == 1
    assert "dropping: 1 rows not written" in caplog.text

    attempts.clear()
    keeping = batches.BatchWriter(engine, flaky, name="keeping", retry=True)
    keeping.put(3)
    assert keeping.flush(timeout=10)  # tried again a second later, and written
    assert attempts == [[3], [3]] and stored(engine) == [2, 3] and keeping.written == 1


def test_a_full_queue_drops_and_counts(engine):
    taken, gate = threading.Event(), threading.Event()

    def write(_engine: sa.Engine, _items: list[int]) -> None:
        taken.set()
        gate.wait(10)

    w = batches.BatchWriter(engine, write, name="full", capacity=3)
    w.put(0)
    assert taken.wait(10)
    for n in range(1, 6):
        w.put(n)
    gate.set()
    assert w.flush(timeout=10)
    assert w.dropped == 2 and w.written == 4  # one in the thread, three queued


def test_one_writer_per_engine_and_name_and_a_new_one_after_a_fork(engine, monkeypatch):
    def write(_engine: sa.Engine, _items: list[int]) -> None:
        return None

    first = batches.writer(engine, "same", write)
    assert batches.writer(engine, "same", write) is first
    assert batches.writer(engine, "other", write) is not first
    first.put(1)
    real_pid = batches.os.getpid()
    monkeypatch.setattr(batches.os, "getpid", lambda: real_pid + 1)  # as in a forked child
    child = batches.writer(engine, "same", write)
    assert child is not first and child.pending() == []
    assert first.flush(timeout=0)  # the parent's copy is the parent's to write: nothing to wait for here
