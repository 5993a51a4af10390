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
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, scoped_session, sessionmaker
from uuid_utils.compat import uuid7 as _uuid7

from core import jsoncodec

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
    """A new row id: a UUIDv7 (RFC 9562), time-ordered, so that rows written together land on the last
    page of the primary-key index instead of one random page each (uuid4). A message's commit did
    25% less SQLite work at 30,000 rows, more as a table grows. 74 of its bits are random."""
    return _uuid7()


class UserOwned:
    """Mixin of a model whose rows users own: a UUIDv7 ``id`` primary key and the owner's indexed
    ``user_id`` (every lookup of such a row is scoped by it; another user's row is a 404)."""

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=new_id, sort_order=-2)
    user_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True, sort_order=-1)


def unique_name_per_user(table: str) -> tuple[sa.UniqueConstraint]:
    """``__table_args__`` of a table whose ``name`` is unique among one user's rows."""
    return (sa.UniqueConstraint("user_id", "name", name=f"uq_{table}_user_id_name"),)


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
                json_serializer=jsoncodec.dumps_text,
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
                json_serializer=jsoncodec.dumps_text,
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
    app.extensions["service.engine"] = engine

    @app.teardown_appcontext
    def _remove_session(_exc: BaseException | None) -> None:
        factory.remove()

    return factory


def session() -> Session:
    """The database session of the current app, thread and greenlet."""
    from core.appctx import current

    return current().extensions["service.db"]()  # type: ignore[no-any-return]


def release(app: Flask | None = None) -> None:
    """End this thread's database session now, returning its connection to the pool.

    The one way to give a connection back (every surface and job calls it): before anything long
    (a run, a stream, a blocking read of job events, handing work to a thread), a session that only
    read something would otherwise hold its connection until the request or job ends (with SQLite's
    single connection, blocking every other request; with PostgreSQL, exhausting the pool under many
    streams). The next :func:`session` of this thread opens a fresh one; objects loaded before are
    detached (their loaded attributes stay readable).
    """
    from core.appctx import current

    target = app if app is not None else current()
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


# --- the hot path's statements on the driver ----------------------------------------
def holds_transaction(engine: sa.Engine | None = None) -> bool:
    """Whether this thread's (greenlet's) request session has a transaction open on ``engine`` (then
    :func:`raw` runs on that session's connection and its ``write`` commits the session).

    A writer that would otherwise hand its rows to another thread or greenlet (``core.groupcommit``)
    writes them itself then: they belong to this transaction, and with SQLite's single connection the
    other writer would wait for the one this request holds.
    """
    from core.appctx import app_or_none

    return _open_session(app_or_none(), engine) is not None


def _open_session(app: Flask | None, engine: sa.Engine | None) -> Session | None:
    """The request session of this thread (greenlet) when it has a transaction open on ``engine``
    (None: the app's engine)."""
    if app is None or (engine is not None and engine is not app.extensions["service.engine"]):
        return None
    factory = app.extensions["service.db"]
    if factory.registry.has():
        s: Session = factory()
        if s.in_transaction():
            return s
    return None


@contextlib.contextmanager
def connection(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection to read with: this thread's request session's, when it holds a transaction on
    ``engine`` (a second checkout would wait on itself with SQLite's one pooled connection), else one
    from the pool for the block."""
    from core.appctx import app_or_none

    s = _open_session(app_or_none(), engine)
    if s is not None:
        yield s.connection()
        return
    with engine.connect() as conn:
        yield conn


@contextlib.contextmanager
def raw(engine: sa.Engine | None = None, *, write: bool = False) -> Iterator[Any]:
    """A DB-API connection for :class:`Prepared` statements: the session's, or one from the pool.

    When this thread's (greenlet's) session already holds a connection, that connection is
    used (no second checkout: with SQLite's single pooled connection that would wait on
    itself) and a ``write`` commits the session. Otherwise a connection is checked out
    for the block and returned after it; a ``write`` block commits, an error rolls back.
    """
    from core.appctx import app_or_none

    app = app_or_none()
    s = _open_session(app, engine)
    if s is not None:
        yield s.connection().connection.dbapi_connection
        if write:
            s.commit()
        return
    if engine is None and app is not None:
        engine = app.extensions["service.engine"]
    if engine is None:
        raise RuntimeError("db.raw() needs an engine outside an app context")
    conn = engine.raw_connection()
    try:
        yield conn.driver_connection
        if write:
            conn.commit()
    except BaseException:
        conn.rollback()
        raise
    finally:
        conn.close()


class Prepared:
    """A Core statement compiled once per dialect and run on the driver's connection (see :func:`raw`).

    Why not ``Session.execute``: each request of the hot path (the API key's owner, the flow,
    the run's message upsert) paid about 10x more in SQLAlchemy's session, execution context
    and result objects than in the driver (measured: 219 us against 22 us per lookup,
    ``bench/NOTES.md``). The SQL text, the bind and the result conversions are still
    SQLAlchemy's own (its compiler and its type processors for the dialect), so a value reads
    and writes exactly as through the ORM; only the execution layer is skipped. Dialects
    other than SQLite and PostgreSQL, and statements with expanding (``IN``) or
    literal-execute parameters, go through ``Connection.execute`` instead.
    """

    FAST_DIALECTS = frozenset({"sqlite", "postgresql"})

    def __init__(self, statement: Any, *, column_keys: list[str] | None = None) -> None:
        self.statement = statement
        self.column_keys = column_keys
        self._compiled: dict[str, tuple[str, Any, list[tuple[str, Any]], list[Any]] | None] = {}
        self._results: dict[tuple[Any, ...], list[Any]] = {}
        self._keys: list[str] | None = None
        self._defaults: dict[str, Any] = {}

    def _prepare(self, dialect: Any) -> tuple[str, Any, list[tuple[str, Any]], list[Any]] | None:
        name = dialect.name
        if name in self._compiled:
            return self._compiled[name]
        entry = None
        if name in self.FAST_DIALECTS:
            compiled = self.statement.compile(dialect=dialect, column_keys=self.column_keys)
            if not (compiled.literal_execute_params or compiled.post_compile_params):
                processors = compiled._bind_processors
                names = list(compiled.positiontup) if dialect.positional else list(compiled.bind_names.values())
                binds = [(key, processors.get(key)) for key in names]
                types = [column[3] for column in (compiled._result_columns or [])]
                # values bound in the statement itself (``sa.literal(1)``), used when the call names none
                self._defaults = {
                    name: bind.value
                    for bind, name in compiled.bind_names.items()
                    if bind.value is not None and not bind.required
                }
                entry = (compiled.string, dialect.positional, binds, types)
        self._compiled[name] = entry
        return entry

    def _bind(self, entry: tuple[str, Any, list[tuple[str, Any]], list[Any]], params: dict[str, Any]) -> Any:
        _sql, positional, binds, _types = entry
        if self._defaults:
            params = {**self._defaults, **params}
        if positional:
            return tuple(fn(params[key]) if fn is not None else params[key] for key, fn in binds)
        return {key: (fn(params[key]) if fn is not None else params[key]) for key, fn in binds}

    def _rows(self, dialect: Any, types: list[Any], cursor: Any, rows: list[Any]) -> list[tuple[Any, ...]]:
        codes = tuple(column[1] for column in cursor.description or ())
        processors = self._results.get(codes)
        if processors is None:
            processors = self._results[codes] = [
                t._cached_result_processor(dialect, code) for t, code in zip(types, codes, strict=False)
            ]
        if not any(processors):
            return [tuple(row) for row in rows]
        return [
            tuple(fn(value) if fn is not None else value for fn, value in zip(processors, row, strict=False))
            for row in rows
        ]

    def _fallback(self, engine: sa.Engine | None) -> Iterator[sa.Connection]:
        from flask import has_app_context

        if engine is None and has_app_context():
            return contextlib.nullcontext(session().connection())  # type: ignore[return-value]
        assert engine is not None
        return engine.connect()  # type: ignore[return-value]

    def all(self, params: dict[str, Any], *, engine: sa.Engine | None = None) -> list[tuple[Any, ...]]:
        dialect = (engine or _current_engine()).dialect
        entry = self._prepare(dialect)
        if entry is None:
            with self._fallback(engine) as conn:  # type: ignore[attr-defined]
                return [tuple(row) for row in conn.execute(self.statement, params)]
        with raw(engine) as conn:
            cursor = conn.cursor()
            try:
                cursor.execute(entry[0], self._bind(entry, params))
                return self._rows(dialect, entry[3], cursor, cursor.fetchall())
            finally:
                cursor.close()

    def first(self, params: dict[str, Any], *, engine: sa.Engine | None = None) -> tuple[Any, ...] | None:
        rows = self.all(params, engine=engine)
        return rows[0] if rows else None

    def first_mapping(self, params: dict[str, Any], *, engine: sa.Engine | None = None) -> dict[str, Any] | None:
        """The first row as ``{column key: value}`` (the select's column keys), or None."""
        row = self.first(params, engine=engine)
        if row is None:
            return None
        if self._keys is None:
            self._keys = list(self.statement.selected_columns.keys())
        return dict(zip(self._keys, row, strict=True))

    def execute_many(self, rows: list[dict[str, Any]], conn: Any, dialect: Any) -> None:
        """Run a write for every row on ``conn`` (a DB-API connection from :func:`raw`, write=True)."""
        entry = self._prepare(dialect)
        if entry is None:
            raise RuntimeError(f"Prepared writes need one of {sorted(self.FAST_DIALECTS)}")
        cursor = conn.cursor()
        try:
            cursor.executemany(entry[0], [self._bind(entry, row) for row in rows])
        finally:
            cursor.close()


def page(
    s: Session | sa.Connection,
    query: sa.Select[Any],
    key: Any,
    order: tuple[Any, ...],
    offset: int,
    limit: int | None,
) -> list[Any]:
    """One page of ``query`` in ``order``, ``key`` its primary key column: a select of one mapped entity (its
    objects), or of one table's columns (its rows).

    Far pages are a deferred join: the page's keys first, from an index that holds the filter and order
    columns (no table row read for the rows skipped), then only the page's rows by key. Same rows, same
    order as ``offset``/``limit`` on the query itself; at 1,000,000 rows a random page reads 50 rows
    instead of half a million. Page one (offset 0) is the plain query.
    """
    entity = query.column_descriptions[0].get("entity")

    def fetch(select: sa.Select[Any]) -> list[Any]:
        return list(s.scalars(select) if entity is not None else s.execute(select).all())

    if not offset or limit is None:
        return fetch(query.order_by(*order).offset(offset or None).limit(limit))
    keys = query.with_only_columns(key).order_by(*order).offset(offset).limit(limit).subquery()
    rows = sa.select(entity) if entity is not None else sa.select(*query.selected_columns)
    return fetch(rows.join(keys, key == keys.c[key.key]).order_by(*order))


def _current_engine() -> sa.Engine:
    from core.appctx import current

    engine: sa.Engine = current().extensions["service.engine"]
    return engine


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


#: branch directory -> (its scripts' names, sizes and mtimes, their heads): read again only when one changes
_heads_read: dict[Path, tuple[tuple[tuple[str, int, int], ...], frozenset[str] | None]] = {}


def script_heads(path: Path) -> frozenset[str] | None:
    """The head revisions of one branch's scripts, read without Alembic (None: a script not readable so).

    A script names itself and its parent with literal ``revision`` / ``down_revision`` assignments (as
    ``alembic revision`` writes them); a head is a revision no other script names as its parent. Kept per
    directory while no script changes (parsing every branch's scripts took 0.1 s of each app built).
    """
    scripts = sorted(path.glob("*.py"))
    signature = tuple((s.name, (st := s.stat()).st_size, st.st_mtime_ns) for s in scripts)
    known = _heads_read.get(path)
    if known is None or known[0] != signature:
        known = _heads_read[path] = (signature, _read_heads(scripts))
    return known[1]


def _read_heads(scripts: list[Path]) -> frozenset[str] | None:
    import ast

    from core.engine import pyparse

    parents: dict[str, tuple[str, ...]] = {}
    for script in scripts:
        found: dict[str, Any] = {}
        for node in pyparse.parse(script.read_bytes()).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
                try:
                    found[target.id] = ast.literal_eval(value)
                except ValueError:
                    return None
        if "revision" not in found:
            continue  # not a migration script
        down = found.get("down_revision")
        parents[found["revision"]] = () if down is None else (down,) if isinstance(down, str) else tuple(down)
    named = {p for ps in parents.values() for p in ps}
    return frozenset(parents) - named


def schema_current(engine: sa.Engine, records: list[Migrations]) -> bool:
    """True when every branch's version table already holds its scripts' heads: one query, no Alembic.

    ``upgrade`` skips its lock and Alembic (about 0.2 s to import, and a script directory to load per
    branch) when this holds, so a restart on a current database does no migration work.
    """
    wanted = {r.branch: script_heads(r.path) for r in records}
    if any(heads is None or not branch.isidentifier() for branch, heads in wanted.items()):
        return False  # Alembic decides
    if not wanted:
        return True
    with engine.connect() as conn:
        if not {f"alembic_version_{b}" for b in wanted} <= set(sa.inspect(conn).get_table_names()):
            return False
        # branch names are identifiers (checked above), as in Alembic's own version table names
        query = " UNION ALL ".join(
            f"SELECT '{b}' AS branch, version_num FROM alembic_version_{b}"  # noqa: S608
            for b in sorted(wanted)
        )
        stored: dict[str, set[str]] = {b: set() for b in wanted}
        for branch, version in conn.execute(sa.text(query)):
            stored[branch].add(version)
    return all(stored[b] == wanted[b] for b in wanted)


def upgrade(engine: sa.Engine, settings: Settings, records: list[Migrations]) -> list[str]:
    """Upgrade every plugin branch to its head; return the branches touched (all, when already current)."""
    if schema_current(engine, records):
        return [r.branch for r in records]
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
