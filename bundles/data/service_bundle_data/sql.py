"""SQL Database (``SQLComponent``): run one query against a SQLAlchemy URL and return a Table.

Safety, beyond the reference:

* **Read-only by default.** The database enforces it: PostgreSQL ``SET TRANSACTION READ ONLY``,
  MariaDB/MySQL ``SET SESSION TRANSACTION READ ONLY``, SQLite ``PRAGMA query_only``; the
  transaction is rolled back. Other dialects are refused unless ``allow_writes`` is on.
  ``allow_writes`` (advanced, default off) commits the statement instead.
* **Embedded-file dialects** (``sqlite``, ``duckdb``...) open files only in the run user's workspace
  (relative paths are read there) while ``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` is on (the default); off,
  anywhere but the never-reachable paths (``/etc``, the config directory with the service's own
  ``service.db``...): ``RunContext.hardening.check_database_url``. SQL cannot open other files either
  (SQLite ``ATTACH`` and ``VACUUM INTO`` are denied).
* **Network rules:** never the service's own database or Redis (``hardening.check_service_endpoint``,
  names resolved, whatever the settings); a host is required (no Unix sockets) and only harmless URL
  options pass. The host then passes ``check_connector_host`` (non-public addresses are refused
  unless ``SERVICE_SSRF_ALLOWED_HOSTS`` lists them; a literal loopback host passes only while
  ``SERVICE_CONNECTOR_SSRF_ALLOW_LOOPBACK`` is on, default off; ``SERVICE_CONNECTOR_SSRF_VALIDATION_ENABLED=false``
  turns that check off); the connection is pinned to the checked address.
* Connect and statement timeouts follow the run deadline; at most ``MAX_ROWS`` rows are read.
  Errors never echo the URL's password.
"""

from __future__ import annotations

import time
from typing import Any

from core.engine import Component, ComponentError, DataFrame, Output
from core.engine.egress import EgressBlocked, EgressError, check_connector_host
from core.engine.inputs import BoolInput, MessageTextInput, MultilineInput
from core.engine.types import jsonable, to_text

MAX_ROWS = 10_000
DEFAULT_TIMEOUT = 30.0
#: URL drivers used when the URL names none (maintained, pure-Python or binary wheels)
DEFAULT_DRIVERS = {"postgresql": "psycopg", "postgres": "psycopg", "mysql": "pymysql", "mariadb": "pymysql"}
READ_ONLY_DIALECTS = {"postgresql", "mysql", "mariadb", "sqlite"}
#: dialects whose SQL itself opens host files (DuckDB's ``read_csv('/etc/passwd')``, ``COPY ... TO``) with no
#: authorizer to deny it: refused whatever the URL says
HOST_FILE_SQL_DIALECTS = {"duckdb"}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306}


def parse_database_url(raw: str) -> Any:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    text = raw.strip()
    if not text:
        raise ValueError("Database URL is required.")
    try:
        url = make_url(text)
    except (ArgumentError, ValueError):
        raise ValueError("Invalid database URL: expected dialect[+driver]://user:password@host/dbname") from None
    backend = url.get_backend_name()
    if backend == "postgres":
        url = url.set(drivername="postgresql")
        backend = "postgresql"
    if "+" not in url.drivername and backend in DEFAULT_DRIVERS:
        url = url.set(drivername=f"{backend}+{DEFAULT_DRIVERS[backend]}")
    return url


def _check_host(component: Component, url: Any) -> str | None:
    """Vet the database host like every connector (``check_connector_host``); the address to connect to."""
    if not url.host:
        return None
    port = url.port or DEFAULT_PORTS.get(url.get_backend_name(), 5432)
    try:
        address = str(check_connector_host(url.host, port, component.context.egress))
    except EgressBlocked as exc:
        raise ComponentError(f"Database host is not allowed: {exc}") from None
    except EgressError as exc:
        raise ComponentError(f"Database host cannot be resolved: {exc}") from None
    component.context.hardening.check_service_endpoint(address, port)  # the address actually connected to
    return address


class SQLComponent(Component):
    key = "SQLComponent"
    display_name = "SQL Database"
    display_names = {
        "en": "SQL Database",
        "fr": "Base de données SQL",
        "de": "SQL-Datenbank",
        "es": "Base de datos SQL",
    }
    description = "Executes SQL queries on SQLAlchemy-compatible databases."
    icon = "database"
    category = "data_source"
    io_bound = True
    documentation = "https://docs.service.org/components-data#sql-database"
    inputs = [
        MessageTextInput(
            "database_url",
            "Database URL",
            "",
            required=True,
            info="The SQLAlchemy URL of the database, e.g. postgresql://user:password@host:5432/dbname.",
        ),
        MultilineInput("query", "SQL Query", "", required=True, tool_mode=True, info="The SQL query to execute."),
        BoolInput(
            "include_columns",
            "Include Columns",
            True,
            advanced=True,
            tool_mode=True,
            info="Include the column names with each row (otherwise rows are positional).",
        ),
        BoolInput(
            "add_error",
            "Add Error",
            False,
            advanced=True,
            tool_mode=True,
            info="If True, a failing query returns a row with the error instead of failing the run.",
        ),
        BoolInput(
            "allow_writes",
            "Allow Writes",
            False,
            advanced=True,
            info="Commit the statement. Off: the query runs in a read-only transaction that is rolled back.",
        ),
    ]
    outputs = [Output("run_sql_query", "Result Table", "run_sql_query", ["Table"])]

    def _engine(self) -> Any:
        from sqlalchemy import create_engine
        from sqlalchemy.pool import NullPool

        url = parse_database_url(to_text(self.database_url))
        backend = url.get_backend_name()
        if backend in HOST_FILE_SQL_DIALECTS:
            raise ComponentError(f"'{backend}' databases are refused: their SQL can read and write any server file")
        # file dialects: the user's workspace; network ones: never the service's own database, no sockets
        database_file = self.context.hardening.check_database_url(
            url.render_as_string(hide_password=True), self.context.user_id
        )
        if database_file is not None:
            url = url.set(database=str(database_file))
        if not self.allow_writes and backend not in READ_ONLY_DIALECTS:
            raise ComponentError(
                f"Read-only mode cannot be enforced on '{backend}' databases; turn on Allow Writes to use them."
            )
        timeout = self._timeout()
        connect_args: dict[str, Any] = {}
        address = _check_host(self, url)
        if backend == "postgresql":
            connect_args["connect_timeout"] = max(1, int(timeout))
            if address:
                connect_args["hostaddr"] = address
        elif backend in ("mysql", "mariadb"):
            connect_args.update(connect_timeout=max(1, int(timeout)), read_timeout=max(1, int(timeout)))
            if address:
                url = url.set(host=address)
        elif backend == "sqlite":
            connect_args["timeout"] = timeout
        try:
            return create_engine(url, poolclass=NullPool, connect_args=connect_args), backend
        except ImportError as exc:
            raise ComponentError(f"No driver installed for '{url.drivername}': {exc.name}") from None
        except Exception as exc:
            raise ComponentError(f"Invalid database URL: {type(exc).__name__}") from None

    def _timeout(self) -> float:
        remaining = self.context.remaining_time()
        return max(1.0, min(DEFAULT_TIMEOUT, remaining)) if remaining is not None else DEFAULT_TIMEOUT

    def _execute(self, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        from sqlalchemy.exc import SQLAlchemyError

        engine, backend = self._engine()
        timeout_ms = int(self._timeout() * 1000)
        try:
            with engine.connect() as conn:
                raw = conn.connection.driver_connection
                if backend == "sqlite":
                    raw.execute(f"PRAGMA query_only = {'OFF' if self.allow_writes else 'ON'}")
                    raw.set_authorizer(_sqlite_authorizer(read_only=not self.allow_writes))
                elif backend in ("mysql", "mariadb"):
                    with raw.cursor() as cur:
                        mode = "READ WRITE" if self.allow_writes else "READ ONLY"
                        cur.execute(f"SET SESSION TRANSACTION {mode}")
                        try:  # MariaDB names it max_statement_time (s), MySQL max_execution_time (ms)
                            cur.execute(f"SET SESSION max_statement_time = {timeout_ms / 1000:.3f}")
                        except Exception:
                            cur.execute(f"SET SESSION max_execution_time = {timeout_ms}")
                conn.begin()
                if backend == "postgresql":
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {timeout_ms}")
                    if not self.allow_writes:
                        conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                columns, rows = _run_one_statement(raw, backend, query)
                if self.allow_writes:
                    conn.commit()
                else:
                    conn.rollback()
            return columns, rows
        except SQLAlchemyError as exc:
            raise ComponentError(f"SQL error: {_reason(exc)}") from None
        except engine.dialect.loaded_dbapi.Error as exc:
            raise ComponentError(f"SQL error: {_reason(exc)}") from None
        finally:
            engine.dispose()

    def run_sql_query(self) -> DataFrame:
        query = to_text(self.query).strip()
        if not query:
            raise ValueError("SQL Query is required.")
        started = time.monotonic()
        try:
            columns, rows = self._execute(query)
        except ComponentError as exc:
            if not self.add_error:
                raise
            frame = DataFrame([{"error": str(exc), "query": query}])
            self.status = frame
            return frame
        if self.include_columns:
            frame = DataFrame([dict(zip(columns, map(jsonable, r), strict=True)) for r in rows], columns=columns)
        else:
            frame = DataFrame([{str(i): jsonable(v) for i, v in enumerate(r)} for r in rows])
        self.log(f"{len(rows)} rows in {time.monotonic() - started:.3f}s")
        self.status = frame
        return frame


#: PRAGMAs a read-only SQLite query may run (schema reads); any other could undo ``query_only``
SQLITE_READ_PRAGMAS = {
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "user_version",
    "schema_version",
    "page_count",
    "page_size",
}


def _sqlite_authorizer(*, read_only: bool) -> Any:
    """Deny ``ATTACH``/``DETACH`` (and so ``VACUUM INTO``): SQL must not open other server files; in read-only
    mode deny the PRAGMAs that could switch ``query_only`` off."""
    import sqlite3

    def authorize(action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None) -> int:
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return sqlite3.SQLITE_DENY
        if read_only and action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() not in SQLITE_READ_PRAGMAS:
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


def _run_one_statement(raw: Any, backend: str, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Execute exactly one statement on the DB-API connection: a second one (``COMMIT; DELETE ...``) could
    leave the read-only transaction. PostgreSQL gets a prepared statement (which takes one command only),
    SQLite's ``execute`` and PyMySQL (no ``MULTI_STATEMENTS`` flag) refuse several on their own."""
    cur = raw.cursor()
    try:
        if backend == "postgresql":
            cur.execute(query, prepare=True)
        else:
            cur.execute(query)
        if cur.description is None:
            return [], []
        columns = [str(d[0]) for d in cur.description]
        return columns, [tuple(r) for r in cur.fetchmany(MAX_ROWS)]
    finally:
        cur.close()


def _reason(exc: Exception) -> str:
    """The driver's message without SQLAlchemy's statement/parameters echo and background link."""
    orig = getattr(exc, "orig", None)
    text = str(orig) if orig is not None else str(exc).split("\n[SQL:")[0]
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


COMPONENTS = [SQLComponent]
