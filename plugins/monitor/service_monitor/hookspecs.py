"""Hooks the monitor plugin publishes (added to the host before any plugin registers; docs/plugins/monitor.md).

Implement them with ``@hookimpl(optionalhook=True)``: the monitor plugin may be absent.
"""

from __future__ import annotations

from collections.abc import Mapping

from core import hookspec

__all__ = ["job_queue_metrics"]


@hookspec
def job_queue_metrics() -> Mapping[str, object] | None:
    """Members a plugin adds to ``GET /api/v1/monitor/job_queue`` (its own counters, JSON values), or None.

    Called on every request of that endpoint (superusers); the answers are merged over the
    job queue's own metrics.
    """
