"""API-key usage counts, batched off the request path.

Counting a use with an ``UPDATE`` and a ``COMMIT`` on every request cost about
a quarter of a simple run's time and serialised all requests on SQLite's
single writer. Uses are counted in memory instead and written every
``interval`` seconds by one thread per process (a greenlet under gevent), in
one transaction; listing keys flushes first, so a key's owner always sees the
uses served by the process answering, and other processes' within a second.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import uuid

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.jobs import at_exit
from service_accounts.models import ApiKey

log = logging.getLogger(__name__)


class UsageCounter:
    def __init__(self, engine: sa.Engine, interval: float = 1.0) -> None:
        self.engine = engine
        self.interval = interval
        self._pending: dict[uuid.UUID, tuple[int, dt.datetime]] = {}
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._writing = False  # the thread took counts and has not committed them yet
        self._thread: threading.Thread | None = None
        at_exit(self.flush)

    def record(self, key_id: uuid.UUID, when: dt.datetime) -> None:
        with self._lock:
            count, _ = self._pending.get(key_id, (0, when))
            self._pending[key_id] = (count + 1, when)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="api-key-usage", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        import time

        while True:
            time.sleep(self.interval)
            try:
                self._write_in_background()
            except Exception:  # counts are best effort; the service must go on
                log.warning("could not write API key usage", exc_info=True)

    def _write_in_background(self) -> None:
        """Take the counts only once a connection is ours, and say so until they are committed: a
        listing that flushes meanwhile waits for them instead of reading the table without them."""
        with self._lock:
            if not self._pending:
                return
        with self.engine.begin() as conn:
            with self._lock:
                pending, self._pending = self._pending, {}
                self._writing = True
            try:
                if pending:
                    conn.execute(_STATEMENT, _rows(pending))
            finally:
                with self._lock:
                    self._writing = False
                    self._done.notify_all()

    def flush(self, session: Session | None = None) -> None:
        """Write the pending counts: in ``session``'s transaction when given (a request that
        already holds SQLite's single pooled connection must not ask for a second one). Counts the
        background thread is writing at this moment are waited for (at most 2 s), not skipped."""
        with self._lock:
            if self._writing:
                self._done.wait_for(lambda: not self._writing, timeout=2.0)
            pending, self._pending = self._pending, {}
        if not pending:
            return
        if session is not None:
            session.connection().execute(_STATEMENT, _rows(pending))
            session.commit()
            return
        with self.engine.begin() as conn:
            conn.execute(_STATEMENT, _rows(pending))


_STATEMENT = (
    sa.update(ApiKey)
    .where(ApiKey.id == sa.bindparam("key"))
    .values(total_uses=ApiKey.total_uses + sa.bindparam("n"), last_used_at=sa.bindparam("at"))
)


def _rows(pending: dict[uuid.UUID, tuple[int, dt.datetime]]) -> list[dict[str, object]]:
    return [{"key": key, "n": n, "at": at} for key, (n, at) in pending.items()]


_counters: dict[int, UsageCounter] = {}
_counters_lock = threading.Lock()


def counter(engine: sa.Engine) -> UsageCounter:
    """One counter per database engine in this process."""
    with _counters_lock:
        found = _counters.get(id(engine))
        if found is None or found.engine is not engine:
            found = _counters[id(engine)] = UsageCounter(engine)
        return found
