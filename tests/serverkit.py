"""Test helpers for live servers in child processes: a free port, waiting for ``/health``, ``service run``."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import requests

#: how long a child process (a web server, an RQ worker) may take to become ready: generous, because on a
#: loaded machine (2 cores, load 20) an import-heavy start-up takes tens of seconds. Readiness is polled, a
#: process that dies is reported at once and a hang still fails; ``SERVICE_TEST_START_SECONDS`` sets it.
START_SECONDS = float(os.environ.get("SERVICE_TEST_START_SECONDS") or 180)


def shared_database_url(where: Path, name: str) -> str:
    """The database several processes of one test share: in the PostgreSQL pass (``SERVICE_TEST_DATABASE_URL``)
    the ``<base>_<name>`` database, emptied of an earlier run's rows; else an SQLite file under ``where``."""
    pg = os.environ.get("SERVICE_TEST_DATABASE_URL")
    if not pg:
        return f"sqlite:///{where / 'service.db'}"
    import sqlalchemy as sa

    from core import db
    from core.testing import _worker_database

    database_url = _worker_database(pg, name)
    engine = sa.create_engine(database_url)
    try:
        db.truncate_all(engine)
    except sa.exc.SQLAlchemyError:
        pass  # a new database: no tables yet
    finally:
        engine.dispose()
    return database_url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(
    base: str, proc: subprocess.Popen[Any], describe: Callable[[], str], timeout: float | None = None
) -> None:
    """Poll ``base/health`` until it answers 200; fail the test with ``describe()`` if ``proc`` ends or time
    (``timeout``, default :data:`START_SECONDS`) runs out.

    A server still running when time runs out is stopped first, so a failed start leaves no process behind.
    """
    bound = START_SECONDS if timeout is None else timeout
    end = time.monotonic() + bound
    while True:
        try:
            if requests.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        if proc.poll() is not None or time.monotonic() > end:
            why = f"exited with {proc.returncode}" if proc.poll() is not None else f"not healthy after {bound:g} s"
            why = f"{base}: pid {proc.pid} {why}"
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
            pytest.fail(f"{why}\n{describe() or '(no output)'}")
        time.sleep(0.1)


def spawn(
    args: Sequence[str], env: Mapping[str, str], log: Path, *, append: bool = False, **popen: Any
) -> subprocess.Popen[Any]:
    """Start ``args`` with its output in ``log`` (the child keeps its own copy of the file)."""
    with open(log, "ab" if append else "wb") as out:
        return subprocess.Popen(list(args), env=dict(env), stdout=out, stderr=subprocess.STDOUT, **popen)


def service_run(
    env: Mapping[str, str], log: Path, *, workers: int | None = None, extra: Sequence[str] = (), **popen: Any
) -> tuple[subprocess.Popen[Any], str]:
    """``service run`` on a free port, waited on until healthy: the process and its base URL."""
    port = free_port()
    args = [sys.executable, "-m", "core.cli", "run", "--port", str(port), *extra]
    if workers is not None:
        args += ["--workers", str(workers)]
    proc = spawn(args, env, log, **popen)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, proc, lambda: f"the server did not start:\n{log.read_text()[-3000:]}")
    return proc, base


def auto_login(base: str) -> str:
    """An access token from the auto-login endpoint (``SERVICE_AUTO_LOGIN`` on)."""
    return str(requests.get(f"{base}/api/v1/auto_login", timeout=10).json()["access_token"])


@contextlib.contextmanager
def mcp_sdk_server() -> Iterator[str]:
    """The MCP SDK's example server (tests/mcp/sdk_server.py, no state of its own) over Streamable HTTP on a free
    port, once it answers; its URL. Stopped on exit."""
    port = free_port()
    script = Path(__file__).resolve().parent / "mcp" / "sdk_server.py"
    proc = subprocess.Popen(
        [sys.executable, str(script), "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/mcp"
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            requests.get(url, timeout=1)
            break  # it answers (any status)
        except requests.RequestException:
            time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
