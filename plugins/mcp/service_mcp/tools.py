"""A project's flows as MCP tools: listing (names, descriptions, input schemas) and calling.

A call is a run of the flow through the run service (``core.runs``) as the flow's owner (or, for a
caller admitted anonymously, as the flow's anonymous principal: :mod:`core.runs.admission`),
``surface="mcp"``; a failure of any kind is a tool result with ``isError`` (never a 500).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core import appstate, db, runs
from core.contracts import FlowRecord
from core.engine.events import RunEvent, VertexFinished, VerticesSorted
from core.errors import ApiError
from core.runs import admission
from service_mcp import hookspecs
from service_mcp.inputs import ToolInputs, tool_inputs, tweaks_for

MAX_NAME = 64


@dataclass(frozen=True)
class Scope:
    """Whose tools: the owner's flows of one project (``project_id``), or all of them (global server).

    ``anonymous``: admitted by the project's ``auth_type`` none without the owner's credentials
    (:mod:`core.runs.admission`): each run acts as its flow's anonymous principal, and a tool takes
    no argument beyond the message and the session (no tweaks).
    """

    owner_id: str
    project_id: str | None
    server_name: str
    anonymous: bool = False

    @property
    def all_flows(self) -> bool:
        return self.project_id is None


@dataclass(frozen=True)
class FlowTool:
    name: str
    description: str
    flow_id: str
    flow_name: str
    inputs: ToolInputs | None = None


def sanitize(name: str) -> str:
    """A tool name clients accept: lower case ``[a-z0-9_]``, at most 64 characters, never empty."""
    text = re.sub(r"[^a-z0-9_]+", "_", (name or "").strip().lower())
    text = re.sub(r"_+", "_", text).strip("_") or "flow"
    if text[0].isdigit():
        text = f"_{text}"
    return text[:MAX_NAME]


def flows(scope: Scope, with_data: bool = False) -> list[FlowRecord]:
    """The scope's flows (as the flows plugin lists them); a foreign or missing project is 404."""
    found = appstate.hooks().first(
        hookspecs.list_project_flows, user_id=scope.owner_id, project_id=scope.project_id, with_data=with_data
    )
    if found is None:
        raise ApiError(404, "Project not found")
    return list(found)


def _policy(scope: Scope) -> str:
    """The tweak policy a scope's tool arguments follow (``off`` for anonymous callers: no tweaks)."""
    return "off" if scope.anonymous else str(appstate.settings().tweaks_policy)


# a flow's input schema, per process, by (flow id, last update, tweak policy): listing 200 flows neither
# loads their data nor rebuilds 200 schemas once known; an edited flow has a new ``updated_at``
_SCHEMAS: dict[tuple[str, str | None, str], ToolInputs] = {}


def _cached(flow: FlowRecord, policy: str) -> ToolInputs | None:
    key = (flow.id, flow.updated_at, policy)
    return _SCHEMAS.get(key) if key[1] else None


def _inputs(flow: FlowRecord, policy: str, owner: str) -> ToolInputs:
    """The flow's schema: cached for this version of the flow, else built from its data (loaded when the
    flow was listed without it, the owner's own lookup) and cached."""
    found = _cached(flow, policy)
    if found is not None:
        return found
    data = flow.data
    if data is None:  # listed without its data: the owner's own lookup
        loaded = appstate.hooks().find_flow(user_id=owner, flow_id_or_name=flow.id, public=False)
        data = loaded.data if loaded is not None else None
    found = tool_inputs(data if isinstance(data, dict) else None, policy)
    if flow.updated_at:
        if len(_SCHEMAS) >= _HINTS_MAX:
            _SCHEMAS.clear()
        _SCHEMAS[(flow.id, flow.updated_at, policy)] = found
    return found


def tools(scope: Scope, with_inputs: bool = False) -> list[FlowTool]:
    """The scope's tools: ``mcp_enabled`` flows of a project (every flow for the global server)."""
    out: list[FlowTool] = []
    taken: set[str] = set()
    policy = _policy(scope) if with_inputs else ""
    listed = flows(scope)
    if with_inputs and any(
        _cached(f, policy) is None for f in listed if scope.all_flows or f.mcp_enabled
    ):  # a schema not known for this version of its flow: list again, with the flows' data
        listed = flows(scope, with_data=True)
    for flow in listed:
        if not scope.all_flows and not flow.mcp_enabled:
            continue
        base = sanitize(flow.action_name or flow.name or "")
        name, n = base, 2
        while name in taken:  # two flows with one name: the second gets a suffix
            suffix = f"_{n}"
            name, n = base[: MAX_NAME - len(suffix)] + suffix, n + 1
        taken.add(name)
        description = flow.action_description or flow.description or f"Run the flow {flow.name}"
        inputs = _inputs(flow, policy, scope.owner_id) if with_inputs else None
        out.append(FlowTool(name, description, flow.id, flow.name or "", inputs))
    return out


def listing(scope: Scope) -> list[dict[str, Any]]:
    """``tools/list`` items (validated by the ``mcp`` package's ``Tool`` type in the protocol layer)."""
    return [
        {"name": t.name, "description": t.description, "inputSchema": t.inputs.schema if t.inputs else {}}
        for t in tools(scope, with_inputs=True)
    ]


def fingerprint(scope: Scope) -> str:
    """Changes whenever the tool list does (names, descriptions, which flows): list_changed detection."""
    try:
        items = listing(scope)
    except ApiError:
        items = []
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()


def error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def call(
    scope: Scope,
    name: str,
    arguments: dict[str, Any] | None,
    progress: Callable[[float, float | None, str], None] | None = None,
    request_vars: dict[str, str] | None = None,
    trace_context: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run the tool's flow as its owner; the ``tools/call`` result (``isError`` on any failure).

    ``trace_context``: the calling request's (the call is answered in a thread of its own)."""
    args = arguments or {}
    tool = _remembered(scope, name)
    fresh = tool is None
    if tool is None:
        tool = next((t for t in tools(scope) if t.name == name), None)
        if tool is None:
            return error_result(f"Unknown tool: {name}")
        _remember(scope, tool)
    value = args.get("input_value")
    session = args.get("session_id")
    if value is not None and not isinstance(value, str):
        value = json.dumps(value)
    req = runs.RunRequest(
        flow=tool.flow_id,
        user_id=scope.owner_id,
        surface="mcp",
        inputs=[runs.RunInput(value, "chat", None, str(session) if session else None)],
        request_vars=request_vars or {},
        trace_context=trace_context,
        # auth_type none without the owner's credentials: the flow's anonymous principal (core.runs.admission)
        principal=admission.anonymous_principal(tool.flow_id) if scope.anonymous else None,
    )
    try:
        prepared = runs.resolve(req)
        if not fresh and not _still(scope, tool, prepared.flow):  # the remembered name leads elsewhere now
            _forget(scope, tool.name)
            return call(scope, name, arguments, progress, request_vars, trace_context)
        # the arguments, mapped with the schema of the flow the run service loaded (never a stale one)
        inputs = _inputs(prepared.flow, _policy(scope), scope.owner_id)
        tweaks, unknown = tweaks_for(inputs, args)
        if unknown:
            return error_result(f"Unknown argument(s) for {tool.name}: {', '.join(sorted(unknown))}")
        problems = inputs.problems(args)
        if problems:
            return error_result(f"Invalid arguments for {tool.name}: {'; '.join(problems)}")
        req.inputs[0].type = inputs.input_type
        req.tweaks = tweaks or None
        outcome = _run(runs.build(prepared), progress)
    except ApiError as exc:
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        return error_result(f"Error running {tool.name}: {detail}")
    if outcome.failed is not None:
        return error_result(runs.failure_text(outcome.failed))
    if outcome.suspended is not None:
        return error_result("The flow paused for input, which MCP tool calls cannot give")
    answer = outcome.results[-1].answer() if outcome.results else None
    return {"content": [{"type": "text", "text": answer if answer is not None else ""}], "isError": False}


# --- which flow a tool name leads to -----------------------------------------------------------------
# A hint kept per process so a call does not list the whole project: it is checked against the flow
# the run service loads anyway (still enabled, still in the project, still the name), and on any
# mismatch the listing decides. Never state: any process may answer without it.
_HINTS: dict[tuple[str, str | None, str], FlowTool] = {}
_HINTS_MAX = 10_000


def _remembered(scope: Scope, name: str) -> FlowTool | None:
    return _HINTS.get((scope.owner_id, scope.project_id, name))


def _remember(scope: Scope, tool: FlowTool) -> None:
    if len(_HINTS) >= _HINTS_MAX:
        _HINTS.clear()
    _HINTS[(scope.owner_id, scope.project_id, tool.name)] = tool


def _forget(scope: Scope, name: str) -> None:
    _HINTS.pop((scope.owner_id, scope.project_id, name), None)


def _still(scope: Scope, tool: FlowTool, flow: FlowRecord) -> bool:
    """The loaded flow is still this tool: in scope, enabled, and named the same (a rename frees a name)."""
    if str(flow.user_id) != scope.owner_id or flow.is_component:
        return False
    if not scope.all_flows and (not flow.mcp_enabled or str(flow.folder_id) != scope.project_id):
        return False
    base = sanitize(flow.action_name or flow.name or "")
    return tool.name == base or tool.name.startswith(f"{base}_")  # a clash suffix stays with its flow


def _run(prepared: runs.PreparedRun, progress: Callable[[float, float | None, str], None] | None) -> runs.RunOutcome:
    if progress is None:
        return runs.execute(prepared)
    db.release()  # the run's own thread needs a connection (SQLite has one per process)
    total: list[int] = []
    done = 0

    def keep(event: RunEvent) -> bool:
        return isinstance(event, (VerticesSorted, VertexFinished))

    outcome: Any = None
    for item in runs.stream(prepared, keep=keep):
        if isinstance(item, VerticesSorted):
            total.append(len(item.to_run or item.ids))
        elif isinstance(item, VertexFinished):
            done += 1
            progress(float(done), float(total[0]) if total else None, f"{item.display_name} finished")
        else:
            outcome = item
    if isinstance(outcome, Exception):
        raise outcome
    return outcome  # type: ignore[no-any-return]
