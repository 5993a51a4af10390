"""Database plumbing: the declarative base, engines, sessions and migrations.

* One declarative :class:`Base` (one ``MetaData``) for every plugin's models;
  each plugin prefixes its tables with its name and never declares a foreign
  key into another plugin's tables (plugins cooperate through ``on_*`` hooks).
* SQLite (the default) runs with WAL, a busy timeout and a single pooled
  connection per process, so gevent greenlets queue cooperatively on the pool
  instead of blocking the hub inside SQLite's busy wait.
* Sessions are scoped to the current thread or greenlet (:func:`session`) and
  removed when the app context ends; keep transactions short and never hold
  one across network I/O or a streamed response.
* Each plugin's migrations are an Alembic history of their own with their own
  version table (``alembic_version_<branch>``), so enabling, disabling or
  upgrading one plugin never depends on another.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.orm import DeclarativeBase, Session, scoped_session, sessionmaker

if TYPE_CHECKING:
    from flask import Flask

    from core.records import Migrations
    from core.settings import Settings

log = logging.getLogger(__name__)

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base of every plugin's models."""

    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(sa.types.TypeDecorator[dt.datetime]):
    """A timestamp stored as UTC and always read back timezone-aware.

    SQLite keeps no zone, so plain ``DateTime(timezone=True)`` reads back naive
    values there; every model uses this type so both databases answer alike.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC) if value is not None else None

    def process_result_value(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value


def utcnow() -> dt.datetime:
    """Timezone-aware current time (stored as UTC)."""
    return dt.datetime.now(dt.UTC)


def new_id() -> uuid.UUID:
    return uuid.uuid4()


# --- engines -------------------------------------------------------------------
_engines: dict[str, sa.Engine] = {}
_engines_lock = threading.Lock()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def get_engine(settings: Settings) -> sa.Engine:
    """The process-wide engine for the configured URL (kept across app rebuilds)."""
    url = settings.resolved_database_url
    with _engines_lock:
        engine = _engines.get(url)
        if engine is not None:
            return engine
        if url.startswith("sqlite"):
            engine = sa.create_engine(
                url,
                connect_args={"check_same_thread": False, "timeout": 5},
                poolclass=sa.pool.QueuePool,
                pool_size=1,
                max_overflow=0,
                pool_timeout=30,
            )
            event.listen(engine, "connect", _sqlite_pragmas)
        else:
            if url.startswith("postgresql://"):
                url = "postgresql+psycopg://" + url[len("postgresql://") :]
            # an unreachable host fails start-up in seconds instead of the driver's unbounded wait
            connect_args = {} if "connect_timeout" in url else {"connect_timeout": 10}
            engine = sa.create_engine(
                url,
                connect_args=connect_args,
                pool_size=settings.db_pool_size,
                max_overflow=settings.db_max_overflow,
                pool_pre_ping=True,
            )
        _engines[settings.resolved_database_url] = engine
        return engine


def dispose_engine(settings: Settings) -> None:
    """Close and forget the engine for this URL (tests, worker forks)."""
    with _engines_lock:
        engine = _engines.pop(settings.resolved_database_url, None)
    if engine is not None:
        engine.dispose()


def _reset_after_fork() -> None:
    # A forked child must not reuse its parent's sockets: drop pooled connections.
    for engine in list(_engines.values()):
        engine.dispose(close=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


# --- sessions ------------------------------------------------------------------
def init_app(app: Flask, engine: sa.Engine) -> scoped_session[Session]:
    """Give ``app`` a scoped session factory bound to ``engine``."""
    factory = scoped_session(sessionmaker(bind=engine, expire_on_commit=False))
    app.extensions["service.db"] = factory

    @app.teardown_appcontext
    def _remove_session(_exc: BaseException | None) -> None:
        factory.remove()

    return factory


def session() -> Session:
    """The database session of the current app, thread and greenlet."""
    from flask import current_app

    return current_app.extensions["service.db"]()


def release(app: Flask | None = None) -> None:
    """End this thread's database session now, returning its connection to the pool.

    Call it before anything long (a run, a stream, a blocking read of job events): a session that
    only read something would otherwise hold its connection until the request or job ends (with
    SQLite's single connection, blocking every other request).
    """
    from flask import current_app

    target = app if app is not None else current_app
    factory = target.extensions.get("service.db")
    if factory is not None:
        factory.remove()


@contextlib.contextmanager
def transaction() -> Iterator[Session]:
    """Commit on success, roll back on error: ``with db.transaction() as s: ...``."""
    s = session()
    try:
        yield s
        s.commit()
    except BaseException:
        s.rollback()
        raise


# --- migrations ----------------------------------------------------------------
MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def _alembic_config(engine: sa.Engine, record: Migrations, connection: sa.Connection) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", str(record.path))
    cfg.attributes["connection"] = connection
    cfg.attributes["version_table"] = f"alembic_version_{record.branch}"
    return cfg


@contextlib.contextmanager
def _migration_lock(engine: sa.Engine, settings: Settings) -> Iterator[sa.Connection]:
    """Serialise migrations between processes starting at once."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT pg_advisory_lock(727274)"))
            try:
                yield conn
            finally:
                conn.execute(sa.text("SELECT pg_advisory_unlock(727274)"))
                conn.commit()
        return
    import fcntl

    lock_path = settings.resolved_config_dir / ".migrations.lock"
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            with engine.connect() as conn:
                yield conn
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def upgrade(engine: sa.Engine, settings: Settings, records: list[Migrations]) -> list[str]:
    """Upgrade every plugin branch to its head; return the branches touched."""
    from alembic import command

    done = []
    with _migration_lock(engine, settings) as conn:
        for record in records:
            cfg = _alembic_config(engine, record, conn)
            command.upgrade(cfg, "heads")
            conn.commit()
            done.append(record.branch)
    return done


def truncate_all(engine: sa.Engine) -> None:
    """Delete every row of every model table (tests): children first."""
    with engine.begin() as conn:
        existing = set(sa.inspect(conn).get_table_names())
        for table in reversed(Base.metadata.sorted_tables):
            if table.name in existing:
                conn.execute(table.delete())
