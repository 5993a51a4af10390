"""The public-session cleanup: anonymous playground sessions older than ``public_flow_expiration`` go.

* job ``flows.public_cleanup`` (owner ``system:public-cleanup``) calls
  :func:`core.runs.public.expire`: every principal idle for longer than the expiration loses its
  rows through ``on_user_deleted`` (messages, vertex builds); it runs on the job backend (an RQ
  worker in scale-out, a thread of a web process otherwise);
* scheduled by :class:`core.jobs.periodic.PeriodicJob` (started by the first public lookup), every
  ``public_flow_cleanup_interval`` seconds once for the deployment (mark ``flows:public-cleanup``).
"""

from __future__ import annotations

from typing import Any

from core.jobs import JobContext
from core.jobs.periodic import PeriodicJob
from service_flows.config import settings as flows_settings

CLEANUP_JOB = "flows.public_cleanup"
CLEANUP_OWNER = "system:public-cleanup"
_MARK = "flows:public-cleanup"


def cleanup_job(ctx: JobContext) -> dict[str, Any]:
    from core.runs import public

    gone = public.expire(ctx.app)
    return {"expired_principals": len(gone)}


SCHEDULER = PeriodicJob(
    job=CLEANUP_JOB,
    owner=CLEANUP_OWNER,
    mark=_MARK,
    interval=lambda app: float(flows_settings(app).public_flow_cleanup_interval),
    name="public-cleanup",
)
tick = SCHEDULER.tick  # enqueue the job if no process did during this interval (tests call it directly)
