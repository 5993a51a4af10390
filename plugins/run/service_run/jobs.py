"""The ``run.webhook`` background job: run a flow with a webhook payload, as the flow's owner.

Enqueued by ``POST /api/v1/webhook/{flow_id_or_name}`` with plain JSON
arguments; it loads the flow again through ``find_flow`` (the job may run in
another process, later), tweaks every Webhook component's ``data`` with the
raw body, and runs with input value ``""`` and the flow's default session.
The job result is the simplified run response; a failing component fails the
job with the component named (no traceback).
"""

from __future__ import annotations

from typing import Any

from core.jobs import JobContext

WEBHOOK_JOB = "run.webhook"
#: engine events copied to the job's event stream (end_vertex payloads are left out: too big)
JOB_EVENTS = frozenset({"add_message", "token", "end", "error"})


def webhook_tweaks(flow_data: dict[str, Any], body: str) -> dict[str, Any]:
    """``{node id: {"data": body}}`` for every Webhook node (as the reference's webhook endpoint)."""
    from core.runs import registry

    reg = registry()
    tweaks: dict[str, Any] = {}
    for node in flow_data.get("nodes") or []:
        data = node.get("data") or {}
        key = data.get("type")
        klass = reg.get(key) if isinstance(key, str) else None
        if (klass is not None and klass.key == "Webhook") or key == "Webhook":
            tweaks[str(node.get("id") or data.get("id"))] = {"data": body}
    return tweaks


def run_webhook(ctx: JobContext, flow_id: str, user_id: str, body: str) -> dict[str, Any]:
    from service_run import services

    try:
        flow = services.find_flow(user_id, flow_id)
    except Exception:
        raise LookupError(f"Flow {flow_id} not found") from None
    tweaks = webhook_tweaks(flow["data"], body)
    try:
        graph = services.build_graph(flow, tweaks)
    except services.ValidationFailed as exc:
        problems = "; ".join(str(item.get("msg")) for item in exc.detail)
        raise ValueError(f"Invalid flow: {problems}") from None
    spec = services.RunSpec(
        user_id=user_id,
        flow=flow,
        graph=graph,
        inputs=[("", "chat", None, None)],
        respond=services.simplified_response("", "chat", ""),
    )

    def emit(event: str, data: dict[str, Any]) -> None:
        if event in JOB_EVENTS:
            ctx.emit(f"run.{event}", data)

    results, failed = services.execute(spec, emit=emit, cancelled=ctx.cancelled, job_id=ctx.job_id)
    if failed is not None:
        if failed.status == "cancelled":
            ctx.check_cancelled()
        raise RuntimeError(services.failure_text(failed))
    return spec.respond(results)
