"""Hooks the monitor plugin publishes (added to the host before any plugin registers; docs/plugins/monitor.md).

Implement them with ``@hookimpl(optionalhook=True)``: the monitor plugin may be absent.
"""

from __future__ import annotations

from typing import Any

from core import hookspec

__all__ = ["job_queue_metrics"]


@hookspec
def job_queue_metrics() -> dict[str, Any] | None:
    """Members a plugin adds to ``GET /api/v1/monitor/job_queue`` (its own counters), or None.

    Called on every request of that endpoint (superusers); the answers are merged over the
    job queue's own metrics.
    """
