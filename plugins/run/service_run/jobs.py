"""The ``run.webhook`` job: the core's run job under the webhook's name, with the ``v1.webhook`` result shaper.

Enqueued by ``POST /api/v1/webhook/{flow_id_or_name}`` with the run request and the flow it
resolved (one lookup, in the request); the core's run service hands the raw body to every
Webhook component and runs with input value ``""`` and the flow's default session. The job
result is the simplified run response; a failing component fails the job with the component
named (no traceback), an invalid graph with ``Invalid flow: <problems>``. Its stream carries
``run.add_message``, ``run.token``, ``run.end`` and ``run.error``.
"""

from __future__ import annotations

from typing import Any

from core import runs
from core.engine import RunEvent
from core.errors import ApiError, ValidationFailed
from core.runs import jobs as run_jobs
from core.runs.shapers import ShapedRun, V1RunShaper

WEBHOOK_JOB = "run.webhook"
SHAPER = "v1.webhook"
#: events copied to the job's event stream (end_vertex payloads are left out: too big), named ``run.<event>``
JOB_EVENTS = frozenset({"add_message", "token", "end", "error"})
PREFIX = "run."


class WebhookShaper(V1RunShaper):
    """``v1.webhook``: the simplified run response; an invalid graph fails the job naming its problems."""

    name = SHAPER

    def keep(self, event: RunEvent) -> bool:
        return event.name in JOB_EVENTS

    def refused(self, run: ShapedRun, exc: ApiError) -> Any:
        if isinstance(exc, ValidationFailed):
            problems = "; ".join(str(item.get("msg")) for item in exc.detail)
            raise ValueError(f"Invalid flow: {problems}") from None
        raise exc


def enqueue(prepared: runs.PreparedRun) -> str:
    """Start the webhook's run (as the request's user) with the flow the request resolved."""
    return run_jobs.enqueue(
        prepared.request,
        owner=str(prepared.request.user_id),
        job=WEBHOOK_JOB,
        shaper=SHAPER,
        flow=prepared.flow,
        prefix=PREFIX,
        meta={"flow_id": prepared.flow.id},
        base_meta=False,
    )


#: the job as registered: kwargs ``{request, flow}`` queued by an older version still run
JOB = run_jobs.job(
    WEBHOOK_JOB,
    "Run a flow with a webhook payload, as the flow's owner",
    run_jobs.legacy_run(SHAPER, prefix=PREFIX),
    module=__name__,
)
