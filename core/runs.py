"""Glue between the engine and the service: what every run surface shares.

The run endpoints, webhooks, build jobs (and later A2A, MCP, responses and v2
workflows) all call :func:`make_context` to get a :class:`core.engine.RunContext`
wired to the plugins through hooks: variables (``get_variable``), flows for
sub-flow runs (``find_flow``), message storage and history (``on_messages``,
``message_history``) and vertex records (``on_vertex_built``). Nothing here
imports a plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from flask import Flask

from core.app import state
from core.engine import EgressPolicy, Registry, RunContext

GLOBAL_VAR_HEADER = "X-SERVICE-GLOBAL-VAR-"


def registry(app: Flask | None = None) -> Registry:
    """The component registry snapshot in force (swapped atomically on bundle reload)."""
    return state(app).components.current


def request_variables(headers: Mapping[str, str]) -> dict[str, str]:
    """``X-SERVICE-GLOBAL-VAR-<NAME>`` headers as ``{NAME: value}`` (names upper-cased)."""
    prefix = GLOBAL_VAR_HEADER.lower()
    return {key[len(prefix) :].upper(): value for key, value in headers.items() if key.lower().startswith(prefix)}


def make_context(
    *,
    user_id: str,
    flow: Mapping[str, Any],
    session_id: str | None = None,
    emit: Callable[[str, dict[str, Any]], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    request_vars: Mapping[str, str] | None = None,
    job_id: str | None = None,
    store_messages: bool = True,
    app: Flask | None = None,
) -> RunContext:
    """A RunContext for ``user_id`` running ``flow`` (a dict from ``find_flow`` or an unsaved graph)."""
    svc = state(app)
    hook = svc.host.hook
    settings = svc.settings
    flow_id = str(flow.get("id")) if flow.get("id") else None

    def resolve_variable(name: str, _field: str) -> str | None:
        value: str | None = hook.get_variable(user_id=user_id, name=name)
        return value

    def load_flow(id_or_name: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = hook.find_flow(user_id=user_id, flow_id_or_name=id_or_name, public=False)
        return found

    def store_message(message: dict[str, Any]) -> dict[str, Any]:
        hook.on_messages(user_id=user_id, messages=[message])
        return message

    def get_messages(session: str | None, flow_ref: str | None, n: int, order: str) -> list[dict[str, Any]]:
        history: list[dict[str, Any]] = (
            hook.message_history(user_id=user_id, flow_id=flow_ref or flow_id, session_id=session or "", limit=n) or []
        )
        return history if order.upper() == "ASC" else list(reversed(history))

    def emit_and_record(event: str, data: dict[str, Any]) -> None:
        if event == "end_vertex":
            _record_vertex(hook, user_id, flow_id, job_id, data)
        if emit is not None:
            emit(event, data)

    return RunContext(
        user_id=user_id,
        flow_id=flow_id,
        flow_name=flow.get("name"),
        session_id=session_id or flow_id,
        resolve_variable=resolve_variable,
        request_variables=dict(request_vars or {}),
        load_flow=load_flow,
        emit=emit_and_record,
        store_message=store_message if store_messages else None,
        get_messages=get_messages,
        cancelled=cancelled,
        time_limit=float(settings.run_time_limit_seconds) if settings.run_time_limit_seconds else None,
        egress=EgressPolicy.from_settings(settings.ssrf_protection_enabled, settings.ssrf_allowed_hosts),
        registry=registry(app),
    )


def _record_vertex(hook: Any, user_id: str, flow_id: str | None, job_id: str | None, data: dict[str, Any]) -> None:
    if flow_id is None:
        return
    build = data.get("build_data") or {}
    outputs = (build.get("data") or {}).get("outputs") or {}
    error = None
    if not build.get("valid", True):
        error = next(
            (
                str(o.get("message", {}).get("errorMessage", ""))
                for o in outputs.values()
                if isinstance(o, dict) and o.get("type") == "error"
            ),
            "failed",
        )
    hook.on_vertex_built(
        record={
            "user_id": user_id,
            "flow_id": flow_id,
            "job_id": job_id,
            "vertex_id": build.get("id"),
            "valid": bool(build.get("valid", True)),
            "data": build.get("data") or {},
            "artifacts": (build.get("data") or {}).get("artifacts") or {},
            "params": build.get("params"),
            "inputs": {},
            "outputs": outputs,
            "error": error,
            "target_id": (build.get("next_vertices_ids") or [None])[0],
        }
    )
