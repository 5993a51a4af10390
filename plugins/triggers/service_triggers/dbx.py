"""The plugin's one way to the database: the thread's session (:func:`core.db.session`), committed per block.

With the embedded SQLite default the pool holds one connection: a second checkout from a thread whose
session holds it (a job writing its execution after its run stored messages) would wait on itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy.orm import Session

from core import db


@contextlib.contextmanager
def tx() -> Iterator[Session]:
    """``with tx() as conn: conn.execute(...)``: commits on success, rolls back on error."""
    s = db.session()
    try:
        yield s
        s.commit()
    except BaseException:
        s.rollback()
        raise
