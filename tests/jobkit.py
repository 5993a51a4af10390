"""Test helpers shared by the job-queue, build and scale-out tests: waiting on jobs, stopping processes."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterable
from typing import Any

from core.jobs import END_EVENTS


def wait_state(q: Any, job_id: str, timeout: float = 10.0, states: Iterable[Any] | None = None) -> Any:
    """Poll ``q.info(job_id)`` until the job reaches one of ``states`` (default: any end state)."""
    wanted = set(states) if states else None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        info = q.info(job_id)
        if info is not None and (info.state in wanted if wanted else info.state.terminal):
            return info
        time.sleep(0.01)
    raise AssertionError(f"job {job_id} did not reach {wanted or 'an end'}: {q.info(job_id)}")


def drain(q: Any, job_id: str, timeout: float = 10.0, block_seconds: float = 0.5) -> list[Any]:
    """Every event until the end event, by cursor with blocking reads."""
    events: list[Any] = []
    cursor = None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        batch = q.read_events(job_id, cursor, block_seconds=block_seconds)
        events += batch
        if batch:
            cursor = batch[-1].id
            if batch[-1].name in END_EVENTS.values():
                return events
    raise AssertionError(f"no end event: {events}")


def stop_processes(procs: Iterable[subprocess.Popen[Any]], timeout: float = 10.0) -> None:
    """SIGTERM every process still running, wait, and SIGKILL those that do not stop."""
    procs = list(procs)
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
