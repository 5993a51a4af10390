"""The ``run.webhook`` background job: run a flow with a webhook payload, as the flow's owner.

Enqueued by ``POST /api/v1/webhook/{flow_id_or_name}`` with the run request
and the flow it resolved (one lookup, in the request); the core's run service
hands the raw body to every Webhook component and runs with input value ``""``
and the flow's default session. The job result is the simplified run
response; a failing component fails the job with the component named (no
traceback). Its stream carries ``run.add_message``, ``run.token``,
``run.end`` and ``run.error``.
"""

from __future__ import annotations

from typing import Any

from core import runs
from core.contracts import FlowRecord
from core.engine import RunEvent, simplified_run_response
from core.errors import ValidationFailed
from core.jobs import JobContext
from core.runs.jobs import end_job, job_emitter

WEBHOOK_JOB = "run.webhook"
#: events copied to the job's event stream (end_vertex payloads are left out: too big)
JOB_EVENTS = frozenset({"add_message", "token", "end", "error"})


def _kept(event: RunEvent) -> bool:
    return event.name in JOB_EVENTS


def run_webhook(ctx: JobContext, request: dict[str, Any], flow: dict[str, Any]) -> dict[str, Any]:
    req = runs.RunRequest.from_json(request)
    prepared = runs.PreparedRun(req, FlowRecord.from_dict(flow))
    try:
        runs.build(prepared, ctx.app)
    except ValidationFailed as exc:
        problems = "; ".join(str(item.get("msg")) for item in exc.detail)
        raise ValueError(f"Invalid flow: {problems}") from None
    outcome = runs.execute(
        prepared, emit=job_emitter(ctx, keep=_kept, prefix="run."), cancelled=ctx.cancelled, job_id=ctx.job_id
    )
    end_job(ctx, outcome)
    if outcome.failed is not None:
        raise RuntimeError(runs.failure_text(outcome.failed))
    return simplified_run_response(outcome.results[0], input_value="")
