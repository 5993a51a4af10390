"""A2A logic without request objects: which flows are agents, who may call them, messages and task JSON.

* flows and access: the published agents, the caller's :class:`Access` (as the owner, or as
  the agent's public principal), the run session of a context;
* messages in and out: a user message as the run's input, a task as the v0.3 ``Task`` JSON
  (:func:`task_json`, checked by the SDK model where it leaves), what a paused flow asks,
  the answer of a finished run job.

The tasks themselves (rows, their state read from the job store, starting, resuming,
cancelling and following them) are :mod:`service_a2a.tasks`.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import appstate, runs
from core.contracts import FlowRecord
from core.engine.lazy import lazy_import
from core.errors import ApiError
from core.runs import admission
from service_a2a import hookspecs

if TYPE_CHECKING:
    from a2a.compat.v0_3 import types as v03
else:  # the A2A SDK's models (about 0.2 s) on the first A2A request, not at start-up
    v03 = lazy_import("a2a.compat.v0_3.types")

log = logging.getLogger(__name__)

#: states after which a task's run no longer goes (``input-required``: until a message answers it)
TERMINAL = ("completed", "failed", "canceled", "rejected", "input-required")
FAILED_TEXT = "Flow execution failed"


# --- flows and access ---------------------------------------------------------------------------------
def is_agent(flow: FlowRecord | None) -> bool:
    return flow is not None and flow.flow_type == "agent" and bool(flow.a2a_enabled)


def find_agent(flow_id: str) -> FlowRecord | None:
    """The published agent flow ``flow_id`` whoever owns it (None: 404), with its project's auth type."""
    flow = _with_auth_type(flow_id, None)
    return flow if is_agent(flow) else None


def own_flow(user_id: str, flow_id: str) -> FlowRecord | None:
    """The caller's own flow ``flow_id``, published or not (another user's is None: 404), with its auth type."""
    flow = _with_auth_type(flow_id, user_id)
    if flow is None or str(flow.user_id) != str(user_id):
        return None
    return flow


def auth_type(flow: FlowRecord) -> str:
    """The auth type the agent's project asks of callers (``apikey`` without a project or auth settings)."""
    return flow.auth_type or "apikey"


def _with_auth_type(flow_id: str, user_id: str | None) -> FlowRecord | None:
    """The flow with its project's auth type, in one read of the flows plugin (``find_agent_flow``)."""
    try:
        uuid_of(str(flow_id))
    except ValueError:
        return None
    return appstate.hooks().first(hookspecs.find_agent_flow, flow_id=flow_id, user_id=user_id)


#: a flow's or owner's id parsed once per process (every call of an agent parsed the same ids again: ``uuid.UUID``
#: of a string is about 12 k instructions; UUIDs are immutable, so the cached objects are shared safely)
uuid_of = functools.lru_cache(maxsize=4096)(uuid.UUID)


def agents_of(user_id: str) -> list[FlowRecord]:
    agents = appstate.hooks().first(hookspecs.published_agents, user_id=user_id)
    return agents or []


def public_principal(flow_id: str) -> str:
    """The stable non-user principal anonymous callers of agent ``flow_id`` run as (nobody's variables)."""
    return admission.anonymous_principal(flow_id)  # the run service's one rule for MCP and A2A


@dataclass(frozen=True)
class Access:
    """How a JSON-RPC call runs the agent: as its owner (key checked) or as the public principal."""

    flow_id: str
    owner_id: str
    public: bool

    @property
    def job_owner(self) -> str:
        return admission.anonymous_job_owner(self.flow_id) if self.public else self.owner_id

    def run_request(self, text: str, session: str) -> runs.RunRequest:
        return runs.RunRequest(
            flow=self.flow_id,
            # anonymous: the public lookup (the flows plugin's effective grant: an A2A project with
            # auth_type none), acting as the flow's stable public principal
            user_id=None if self.public else self.owner_id,
            surface="a2a",
            inputs=[runs.RunInput(text, "chat", None, session)],
            public=self.public,
            principal=public_principal(self.flow_id) if self.public else None,
        )


def session_for(flow_id: str, context_id: str) -> str:
    """The run session a context maps to (namespaced, so it never meets a playground session)."""
    return f"a2a:{flow_id}:{context_id}"


# --- messages in and out ------------------------------------------------------------------------------
def message_text(message: v03.Message) -> str:
    """The run input of a user message: its text parts, and data parts as JSON, one per line."""
    import json

    lines: list[str] = []
    for part in message.parts:
        root = part.root
        if isinstance(root, v03.TextPart):
            lines.append(root.text)
        elif isinstance(root, v03.DataPart):
            lines.append(json.dumps(root.data))
    if not lines:
        raise ApiError(422, "The message has no text or data part")
    return "\n".join(lines)


# The v0.3 JSON of a task is built as plain dicts (what ``model_dump(mode="json", by_alias=True,
# exclude_none=True)`` of the a2a-sdk models gives; tests/a2a/test_a2a_task_json.py holds them together)
# and checked once with the SDK's ``Task`` model where it leaves: building the nested models and
# dumping them again cost more than the rest of the A2A layer.
def status_json(row: Any) -> dict[str, Any]:
    """A task row's ``TaskStatus`` (v0.3 JSON): its state, time, and the agent's message when it has one."""
    stamp = row.updated_at if row.updated_at.tzinfo else row.updated_at.replace(tzinfo=dt.UTC)
    out: dict[str, Any] = {"state": row.state}
    if row.status_text:
        parts: list[dict[str, Any]] = [{"kind": "text", "text": row.status_text}]
        if row.state == "input-required" and row.input_request:  # what the flow asks, as data too
            parts.append({"kind": "data", "data": dict(row.input_request)})
        out["message"] = {
            "contextId": row.context_id,
            "kind": "message",
            "messageId": str(uuid.uuid5(row.id, f"{row.state}:{row.checkpoint_id or ''}")),
            "parts": parts,
            "role": "agent",
            "taskId": str(row.id),
        }
    out["timestamp"] = stamp.isoformat()
    return out


def artifact_json(row: Any, text: str) -> dict[str, Any]:
    return {
        "artifactId": str(uuid.uuid5(row.id, "result")),
        "name": "result",
        "parts": [{"kind": "text", "text": text}],
    }


def task_json(row: Any, history_length: int | None = None) -> dict[str, Any]:
    """A task row as the v0.3 ``Task`` JSON (not validated yet: :func:`task_model` does)."""
    out: dict[str, Any] = {}
    if row.answer is not None:
        out["artifacts"] = [artifact_json(row, row.answer)]
    out["contextId"] = row.context_id
    if row.request and history_length != 0:
        out["history"] = [row.request]
    out["id"] = str(row.id)
    out["kind"] = "task"
    out["status"] = status_json(row)
    return out


def status(row: Any) -> v03.TaskStatus:
    return v03.TaskStatus.model_validate(status_json(row))


def artifact(row: Any, text: str) -> v03.Artifact:
    return v03.Artifact.model_validate(artifact_json(row, text))


def task_model(row: Any, history_length: int | None = None) -> v03.Task:
    return v03.Task.model_validate(task_json(row, history_length))


# --- waiting for input --------------------------------------------------------------------------------
def input_text(request: Mapping[str, Any]) -> str:
    """What a paused flow asks, as the text of the task's status message."""
    asked = request.get("prompt") or request.get("question") or request.get("message")
    text = str(asked) if asked else "The flow needs your input to continue."
    decisions = request.get("decisions")
    if isinstance(decisions, list) and decisions:
        text += f" (answer one of: {', '.join(str(d) for d in decisions)})"
    return text


def answer_of(result: Any) -> str:
    """The answer of a finished ``runs.flow`` job: the last message of its simplified run response."""
    texts: list[str] = []
    for run in (result or {}).get("outputs") or []:
        for out in run.get("outputs") or []:
            for message in out.get("messages") or []:
                if message.get("message") is not None:
                    texts.append(str(message["message"]))
    return texts[-1] if texts else ""
