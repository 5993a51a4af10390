"""``python -m bench.triggers_tick [--schedules N] [--ticks N]``: CPU time of one triggers tick, in process.

A tick (``service_triggers.ticker.tick``: due schedules, due retries, reaping, stranded executions) with
``--schedules`` enabled schedules stored (default 1,000; none due, as on almost every tick of a
server whose schedules fire every minute or less often) and as many ended executions. CPU time of this
process (``time.process_time``: every thread), median and worst of ``--ticks`` ticks, on the embedded
SQLite database (``--database-url`` for another).

Target (issue 32): under 5 ms of CPU per tick with 1,000 schedules.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from typing import Any


def _app(database_url: str | None) -> Any:
    for key in [k for k in os.environ if k.startswith("SERVICE_")]:
        del os.environ[key]
    os.environ["SERVICE_ENV_FILE"] = os.devnull
    from core.app import create_app

    config: dict[str, Any] = {
        "config_dir": tempfile.mkdtemp(prefix="service-tick-"),
        "log_level": "warning",
        "triggers_tick_s": 0,  # the bench ticks, not the thread
        "job_backend": "inprocess",
    }
    if database_url:
        config["database_url"] = database_url
    return create_app(config=config)


def _fill(app: Any, schedules: int) -> None:
    from service_triggers.models import Execution, Schedule

    from core import appstate

    now = time.time()
    user, flow = str(uuid.uuid4()), str(uuid.uuid4())
    schedule_rows = [
        {
            "id": str(uuid.uuid4()),
            "user_id": user,
            "flow_id": flow,
            "name": f"every minute {i}",
            "cron": "* * * * *" if i % 2 else None,
            "interval_s": None if i % 2 else 3600,
            "timezone": "Europe/Paris",
            "input_value": "hi",
            "tweaks": None,
            "enabled": True,
            "missed": "skip",
            "next_fire_at": now + 3600 + i,  # none due on the measured ticks
            "last_fired_at": None,
            "created_at": now,
            "updated_at": now,
        }
        for i in range(schedules)
    ]
    execution_rows = [
        {
            "id": str(uuid.uuid4()),
            "user_id": user,
            "flow_id": flow,
            "flow_name": "f",
            "trigger": "schedule",
            "status": "ok" if i % 10 else "error",
            "started_at": now - 60 - i,
            "ended_at": now - 59 - i,
            "duration_s": 1.0,
            "due_at": None,
            "request": {"flow": flow},
            "input_text": "hi",
            "output_text": "hi",
            "error": None,
            "job_id": f"job-{i}",
            "session_id": None,
            "retry_of": None,
            "attempt": 1,
            "source_id": schedule_rows[i % len(schedule_rows)]["id"] if schedule_rows else None,
            "dedupe_key": None,
            "followed_up": True,
        }
        for i in range(schedules)
    ]
    with appstate.engine(app).begin() as conn:
        if schedule_rows:
            conn.execute(Schedule.__table__.insert(), schedule_rows)
        if execution_rows:
            conn.execute(Execution.__table__.insert(), execution_rows)


def measure(schedules: int, ticks: int, database_url: str | None = None) -> dict[str, float]:
    from service_triggers.ticker import tick

    app = _app(database_url)
    _fill(app, schedules)
    for _ in range(20):  # warm: statement caches, the pool's connection
        tick(app)
    times = []
    for _ in range(ticks):
        t0 = time.process_time()
        done = tick(app)
        times.append((time.process_time() - t0) * 1000)
        assert not any(done.values()), done
    return {"median_ms": statistics.median(times), "p90_ms": sorted(times)[int(len(times) * 0.9)], "max_ms": max(times)}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.triggers_tick", description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedules", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = measure(args.schedules, args.ticks, args.database_url)
    print(
        f"triggers tick, {args.schedules} schedules: CPU {figures['median_ms']:.2f} ms median, "
        f"{figures['p90_ms']:.2f} ms p90, {figures['max_ms']:.2f} ms max ({args.ticks} ticks)"
    )


if __name__ == "__main__":
    main()
