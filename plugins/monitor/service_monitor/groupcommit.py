"""Group commit: the messages of concurrent runs written in one transaction.

Every run stores its chat messages before it answers (a client that reads
``/monitor/messages`` right after a run sees them). Alone, that is one pool
checkout, one statement and one commit per run; the commit (the WAL write on
SQLite, a round trip and a flush on PostgreSQL) was the larger part. Here the
first caller becomes the *leader*: under gevent it lets the other runs that
are ready reach this point (:func:`gevent.idle`, since a SQLite write never
yields by itself; OS threads queue while the leader writes), takes every batch queued
meanwhile, writes them in one transaction and wakes their callers. A caller
that arrives while a leader writes queues its rows and waits; when the leader
is done, the first of those becomes the next leader. Nobody returns before
their rows are committed, and a run alone pays nothing more than the yield.

A failed group write is retried caller by caller, so one bad batch fails only
its own run.

Hand-written rather than a library: the pattern is twenty lines and depends on
how this service's workers schedule (gevent or threads), which no maintained
package covers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

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

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.promoted = False


class GroupCommit:
    """Writes the rows of concurrent callers with ``write(conn, rows)`` in one transaction per group.

    ``connect`` returns a context manager giving a DB-API connection that commits when the block
    ends without error and rolls back otherwise (``core.db.raw(engine, write=True)``).
    """

    def __init__(self, connect: Callable[[], Any], write: Callable[[Any, list[dict[str, Any]]], None]) -> None:
        self._connect = connect
        self._write = write
        self._lock = threading.Lock()
        self._pending: list[_Ticket] = []
        self._leading = False
        #: groups written and rows in them (tests, ``bench/NOTES.md``)
        self.groups = 0
        self.rows = 0

    def submit(self, rows: list[dict[str, Any]]) -> None:
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
            log.warning("a group of %d message writes failed; writing them one by one", len(batch), exc_info=True)
        for ticket in batch:  # alone, each caller gets its own outcome
            try:
                with self._connect() as conn:
                    self._write(conn, ticket.rows)
            except Exception as exc:
                ticket.error = exc
