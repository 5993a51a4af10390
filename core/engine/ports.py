"""The ports of a run: what the engine asks of whoever runs it (the web service, the executor, a test).

The run path (:mod:`core.engine.execution`) knows neither Flask nor a database: it builds its
:class:`~core.engine.run_context.RunContext` from a :class:`RunPorts`, one adapter per host:

* the web service (:mod:`core.runs.hook_ports`): each port over the plugins' hooks and the database,
  bound to the app so it works from any thread;
* the executor (``service_exec``): flows from the files it serves, variables from the environment,
  no message store, no records.

Every port is optional: a missing one means the capability is not there (no sub-flows, no history,
Read File refuses stored files...), exactly as a :class:`RunContext` callback left ``None``.
Method signatures are the context's callbacks', so a bound method goes in as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from core.engine.egress import EgressPolicy
from core.engine.events import VertexFinished
from core.engine.host_access import Hardening
from core.engine.results import output_logs

__all__ = [
    "FileStore",
    "FlowLookup",
    "MessageStore",
    "RunPorts",
    "RunRecorder",
    "Variables",
    "transaction_record",
    "vertex_record",
]

F = TypeVar("F", bound=Callable[..., Any])


class FlowLookup(Protocol):
    """The flows a run may load as sub-flows (Run Flow, Sub Flow, flows as tools), and their checks."""

    def load_flow(self, id_or_name: str) -> dict[str, Any] | None:
        """``{"id", "name", "data"}`` of the run user's flow, or None when there is none."""
        ...

    def check_flow(self, flow: Mapping[str, Any]) -> None:
        """Raise :class:`core.engine.errors.PolicyRefused` to refuse a graph before the engine builds it."""
        ...


class Variables(Protocol):
    """Values of ``load_from_db`` fields (API keys...); request variables are the context's and win."""

    def variable(self, name: str, field: str) -> str | None:
        """The variable's value, or None when it is not found."""
        ...


class MessageStore(Protocol):
    """Where a run's chat messages are kept, and the history memory components read."""

    def store_messages(self, messages: list[dict[str, Any]]) -> None:
        """Keep ``messages`` (a run's batch, in order)."""
        ...

    def history(self, flow_id: str | None, session_id: str, limit: int) -> list[dict[str, Any]]:
        """The session's last ``limit`` messages, oldest first."""
        ...


class FileStore(Protocol):
    """The run user's stored files (Read File, Write File, file inputs)."""

    def read_file(self, ref: str) -> bytes:
        """The file's bytes; ``FileNotFoundError`` when there is no such file."""
        ...

    def write_file(self, name: str, content: bytes, append: bool) -> dict[str, Any]:
        """Keep ``content`` as a file of the run's user: ``{id, name, path, size}``; ``OSError`` when it cannot."""
        ...


class RunRecorder(Protocol):
    """Vertex records (the editor's build records, the monitor's transactions)."""

    #: whole build records (with the vertex's data, artifacts and params) rather than transactions only
    builds: bool

    def record_vertex(self, record: dict[str, Any]) -> None:
        """One built vertex: :func:`vertex_record` or :func:`transaction_record`."""
        ...


@dataclass(slots=True)
class RunPorts:
    """Everything that differs between hosts, for one run (or several runs of the same user).

    Read-only by convention (not ``frozen``: one is made per run, and a frozen dataclass costs four times
    as much to make)."""

    flows: FlowLookup | None = None
    variables: Variables | None = None
    messages: MessageStore | None = None
    files: FileStore | None = None
    recorder: RunRecorder | None = None
    #: ``mcp_server(name)``: the user's stored MCP server config, or None (raises when a policy refuses it)
    mcp_server: Callable[[str], dict[str, Any] | None] | None = None
    #: ``provider_allowed(provider_id)``: the model-provider policy (None: every provider allowed)
    provider_allowed: Callable[[str], bool] | None = None
    egress: EgressPolicy = field(default_factory=EgressPolicy)
    hardening: Hardening = field(default_factory=Hardening)
    #: seconds a run may take (None: no limit)
    time_limit: float | None = None
    #: the deployment's shared store (None when the engine runs alone)
    shared: Any = None
    #: makes a callback work from any thread or greenlet that runs a vertex (None: callbacks work anywhere)
    bind: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None


def vertex_record(payload: Mapping[str, Any], *, build_record: bool = True) -> dict[str, Any]:
    """A vertex's record from its ``end_vertex`` payload (``build_record``: with data, artifacts and params)."""
    build = payload.get("build_data") or {}
    data = build.get("data") or {}
    outputs = data.get("outputs") or {}
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
    return {
        "vertex_id": build.get("id"),
        "valid": bool(build.get("valid", True)),
        "outputs": outputs,
        "error": error,
        "target_id": (build.get("next_vertices_ids") or [None])[0],
        "build": build_record,
        "data": data,
        "artifacts": data.get("artifacts") or {},
        "params": build.get("params"),
    }


def transaction_record(event: VertexFinished) -> dict[str, Any]:
    """The transaction record of a vertex straight from its result: what :func:`vertex_record` gives with
    ``build_record=False``, without building the ``end_vertex`` payload (2% of a simple run's instructions)."""
    vr = event.result
    assert vr is not None
    return {
        "vertex_id": vr.id,
        "valid": bool(vr.valid),
        "outputs": output_logs(vr),
        "error": None if vr.valid else str(vr.error),
        "target_id": event.next_ids[0] if event.next_ids else None,
        "build": False,
    }
