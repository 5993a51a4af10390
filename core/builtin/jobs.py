"""The core's own jobs: diagnostics for tests, health probes and benchmarks."""

from __future__ import annotations

import time
from typing import Any

from core.jobs import JobContext
from core.records import Job


def countdown(ctx: JobContext, n: int = 3, delay: float = 0.05) -> dict[str, Any]:
    """Emit ``tick {i}`` ``n`` times, ``delay`` seconds apart, then ``done``; honours cancel."""
    for i in range(int(n)):
        ctx.check_cancelled()
        ctx.emit("tick", {"i": i})
        if delay:
            time.sleep(float(delay))
    ctx.check_cancelled()
    ctx.emit("done", {"count": n})
    return {"count": n}


JOBS: list[Job] = [
    Job("core.countdown", countdown, "Diagnostic: emits n tick events, delay seconds apart, then done."),
]
