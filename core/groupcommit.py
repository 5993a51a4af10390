"""Group commit: the writes of concurrent requests in one transaction.

Every run stores its chat messages before it answers (a client that reads
``/monitor/messages`` right after a run sees them). Alone, that is one pool
checkout, one statement and one commit per run; the commit (the WAL write on
SQLite, a round trip and a flush on PostgreSQL) was the larger part. Here the
first caller becomes the *leader*: under gevent it lets the other requests that
are ready reach this point (:func:`gevent.idle`, since a SQLite write never
yields by itself; OS threads queue while the leader writes), takes every batch
queued meanwhile, writes them in one transaction and wakes their callers. A
caller that arrives while a leader writes queues its writes and waits; when the
leader is done, the first of those becomes the next leader. Nobody returns
before their writes are committed, and a request alone pays nothing more than
the yield. A failed group is retried caller by caller, so one bad batch fails
only its own request.

Writes are :class:`core.db.Prepared` statements with their rows. A surface whose
own row must commit with the run's messages (A2A's task row) hands it over with
:func:`defer`: the request's next :func:`submit` (the messages' store) writes it
in the same transaction, or :func:`flush` when the run stored no message. When
the request's session has a transaction open, its writes join that transaction
instead (:func:`core.db.holds_transaction`).

Hand-written rather than a library: the pattern is short and depends on how this
service's workers schedule (gevent or threads), which no maintained package covers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from core import db

if TYPE_CHECKING:
    Write = tuple[db.Prepared, list[dict[str, Any]]]

log = logging.getLogger(__name__)


def _let_others_run() -> None:
    """Under gevent, let the runs that are ready reach their commit point first (what makes a group).

    With OS threads nothing is needed (callers queue while a leader writes, since the write releases
    the GIL), and ``time.sleep(0)`` would hand the core to any other process (measured: 2 ms per run
    on a busy machine).
    """
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover - gevent is a dependency of the core
        return
    if monkey.is_module_patched("threading"):
        import gevent

        gevent.idle()


class _Ticket:
    __slots__ = ("done", "error", "promoted", "rows")

    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.promoted = False


class GroupCommit:
    """Writes the items of concurrent callers with ``write(conn, items)`` in one transaction per group.

    ``connect`` returns a context manager giving a DB-API connection that commits when the block
    ends without error and rolls back otherwise (``core.db.raw(engine, write=True)``).
    """

    def __init__(self, connect: Callable[[], Any], write: Callable[[Any, list[Any]], None]) -> None:
        self._connect = connect
        self._write = write
        self._lock = threading.Lock()
        self._pending: list[_Ticket] = []
        self._leading = False
        #: groups written and the items in them (tests, ``bench/NOTES.md``)
        self.groups = 0
        self.rows = 0

    def submit(self, rows: list[Any]) -> None:
        """Write ``rows`` (with whoever else is writing now); returns once they are committed."""
        ticket = _Ticket(rows)
        with self._lock:
            self._pending.append(ticket)
            lead = not self._leading
            self._leading = True
        if not lead:
            ticket.done.wait()
            if not ticket.promoted:
                if ticket.error is not None:
                    raise ticket.error
                return
        self._lead()
        if ticket.error is not None:
            raise ticket.error

    def _lead(self) -> None:
        _let_others_run()
        with self._lock:
            batch, self._pending = self._pending, []
        try:
            self._commit(batch)
        except BaseException as exc:  # the leader itself was stopped (greenlet killed): nobody is sure
            for ticket in batch:
                ticket.error = ticket.error or exc
            raise
        finally:
            with self._lock:
                if self._pending:  # arrived while this group was written: the first one leads the next
                    nxt = self._pending[0]
                    nxt.promoted = True
                    nxt.done.set()
                else:
                    self._leading = False
            for ticket in batch:
                if not ticket.promoted:
                    ticket.done.set()

    def _commit(self, batch: list[_Ticket]) -> None:
        for ticket in batch:
            ticket.promoted = False  # this group writes it: its caller returns when it ends
        try:
            with self._connect() as conn:
                self._write(conn, [row for ticket in batch for row in ticket.rows])
            self.groups += 1
            self.rows += sum(len(ticket.rows) for ticket in batch)
            return
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
                return
            log.warning("a group of %d writes failed; writing them one by one", len(batch), exc_info=True)
        for ticket in batch:  # alone, each caller gets its own outcome
            try:
                with self._connect() as conn:
                    self._write(conn, ticket.rows)
            except Exception as exc:
                ticket.error = exc


# --- the service's writers, one per engine ------------------------------------------------------------
_groups: dict[int, tuple[sa.Engine, GroupCommit]] = {}
_DEFERRED = "_service_deferred_writes"


def _execute(conn: Any, dialect: Any, writes: list[Write]) -> None:
    """Run ``writes`` on ``conn``: one ``executemany`` per statement, statements in first-seen order."""
    merged: dict[int, tuple[db.Prepared, list[dict[str, Any]]]] = {}
    for statement, rows in writes:
        found = merged.get(id(statement))
        if found is None:
            merged[id(statement)] = (statement, list(rows))
        else:
            found[1].extend(rows)
    for statement, rows in merged.values():
        if rows:
            statement.execute_many(rows, conn, dialect)


def writer(engine: sa.Engine) -> GroupCommit:
    """The process's group writer for ``engine``."""
    found = _groups.get(id(engine))
    if found is None or found[0] is not engine:
        dialect = engine.dialect
        group = GroupCommit(lambda: db.raw(engine, write=True), lambda conn, writes: _execute(conn, dialect, writes))
        found = _groups[id(engine)] = (engine, group)
    return found[1]


def submit(engine: sa.Engine, writes: list[Write]) -> None:
    """Write ``writes``, and what this request :func:`defer`-red, in one transaction with whoever writes now.

    Returns once they are committed; raises what their write raised. In a request whose session has a
    transaction open they are written on it and it is committed (rows the request wrote there first
    belong to the same commit; another writer would wait for SQLite's one connection, held here).
    """
    writes = [*take_deferred(engine), *writes]
    if not any(rows for _statement, rows in writes):
        return
    if db.holds_transaction(engine):
        with db.raw(engine, write=True) as conn:
            _execute(conn, engine.dialect, writes)
        return
    writer(engine).submit(writes)


def defer(engine: sa.Engine, statement: db.Prepared, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` with this request's next :func:`submit` (its run's messages), in the same commit."""
    from flask import g

    g.setdefault(_DEFERRED, []).append((engine, (statement, rows)))


def take_deferred(engine: sa.Engine) -> list[Write]:
    """This request's deferred writes for ``engine``, no longer pending."""
    from flask import g, has_app_context

    if not has_app_context():
        return []
    pending = g.get(_DEFERRED)
    if not pending:
        return []
    mine = [write for eng, write in pending if eng is engine]
    setattr(g, _DEFERRED, [(eng, write) for eng, write in pending if eng is not engine])
    return mine


def flush(engine: sa.Engine) -> None:
    """Write what this request deferred and nothing committed yet (a run that stored no message)."""
    submit(engine, [])


def flush_pending() -> None:
    """Write what this request deferred for any engine (the run service, as a run returns: an observer's row
    that no message store took); nothing to do, the common case, costs one lookup."""
    from flask import g, has_app_context

    if not has_app_context():
        return
    pending = g.get(_DEFERRED)
    if not pending:
        return
    for engine in {id(eng): eng for eng, _write in pending}.values():
        flush(engine)


def discard() -> None:
    """Forget this request's deferred writes (its run failed before they could be committed)."""
    from flask import g, has_app_context

    if has_app_context():
        g.pop(_DEFERRED, None)
