"""Test helpers for live servers in child processes: a free port, waiting for ``/health``, ``service run``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import requests


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(base: str, proc: subprocess.Popen[Any], describe: Callable[[], str], timeout: float = 60.0) -> None:
    """Poll ``base/health`` until it answers 200; fail the test with ``describe()`` if ``proc`` ends or time runs out.

    A server still running when time runs out is stopped first, so a failed start leaves no process behind.
    """
    end = time.monotonic() + timeout
    while True:
        try:
            if requests.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        if proc.poll() is not None or time.monotonic() > end:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
            pytest.fail(describe())
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
