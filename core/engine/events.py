"""Typed run events: the one vocabulary the engine, the run service and every wire adapter share.

The engine hands each event to ``RunContext.emit`` as an instance of a
:class:`RunEvent` subclass. Each event knows its reference name (``name``,
the build stream's event name) and builds its reference payload
(:meth:`RunEvent.payload`) only when a wire adapter asks for it, so a surface
that never writes the build framing (AG-UI, A2A, MCP progress) does not pay
for it. Events stored in a job's stream are ``(name, payload)`` pairs and come
back typed through :func:`decode`.

Names (the reference's build events, plus our own):

========================  ======================================================
``vertices_sorted``       the run's plan (first layer, every vertex to run)
``build_start``           the run starts
``vertex_start``          a vertex starts (ours: AG-UI ``STEP_STARTED``)
``end_vertex``            a vertex finished (``{build_data, output_meta}``)
``add_message``           a chat message was produced (and stored)
``token``                 a streamed chunk of a message (``{chunk, id}``)
``tool_call``             an agent's tool call moved (start/args/end/result)
``state``                 a component published run state (snapshot)
``suspended``             the run paused for outside input (human in the loop)
``error``                 the run failed (a vertex, the time limit)
``end``                   the run completed
========================  ======================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "EVENT_TYPES",
    "BuildStarted",
    "MessageAdded",
    "RunEvent",
    "RunFailed",
    "RunFinished",
    "StateChanged",
    "Suspended",
    "TokenChunk",
    "ToolCall",
    "VertexFinished",
    "VertexStarted",
    "VerticesSorted",
    "decode",
]


class RunEvent:
    """Base of every run event; subclasses are frozen slotted dataclasses."""

    __slots__ = ()
    name: ClassVar[str] = ""

    def payload(self) -> dict[str, Any]:
        """The reference's event data (JSON-serialisable)."""
        raise NotImplementedError

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> RunEvent:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class VerticesSorted(RunEvent):
    name: ClassVar[str] = "vertices_sorted"
    ids: list[str]
    to_run: list[str]

    def payload(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "to_run": list(self.to_run)}

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> VerticesSorted:
        return cls(list(data.get("ids") or []), list(data.get("to_run") or []))


@dataclass(frozen=True, slots=True)
class BuildStarted(RunEvent):
    name: ClassVar[str] = "build_start"

    def payload(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> BuildStarted:
        return cls()


@dataclass(frozen=True, slots=True)
class VertexStarted(RunEvent):
    name: ClassVar[str] = "vertex_start"
    vertex_id: str
    display_name: str
    key: str

    def payload(self) -> dict[str, Any]:
        return {"id": self.vertex_id, "display_name": self.display_name, "vertex_type": self.key}

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> VertexStarted:
        return cls(str(data.get("id")), str(data.get("display_name")), str(data.get("vertex_type")))


@dataclass(frozen=True, slots=True)
class VertexFinished(RunEvent):
    """A vertex ended. ``build`` makes the reference's ``end_vertex`` payload on demand (it is big)."""

    name: ClassVar[str] = "end_vertex"
    vertex_id: str
    display_name: str
    valid: bool
    error: str | None = None
    build: Callable[[], dict[str, Any]] | None = field(default=None, compare=False, repr=False)
    data: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    #: in the process that ran the vertex: its ``VertexResult`` and the vertices it leads to, so a consumer
    #: that needs a few fields (the transaction record) reads them without building the whole payload
    result: Any = field(default=None, compare=False, repr=False)
    next_ids: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def payload(self) -> dict[str, Any]:
        if self.data is not None:
            return self.data
        built = self.build() if self.build is not None else {}
        object.__setattr__(self, "data", built)  # made once, whoever asks first
        return built

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> VertexFinished:
        build = data.get("build_data") or {}
        meta = data.get("output_meta") or {}
        return cls(str(build.get("id")), str(meta.get("display_name") or ""), bool(build.get("valid", True)), data=data)


@dataclass(frozen=True, slots=True)
class MessageAdded(RunEvent):
    name: ClassVar[str] = "add_message"
    message: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return self.message

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> MessageAdded:
        return cls(data)


@dataclass(frozen=True, slots=True)
class TokenChunk(RunEvent):
    name: ClassVar[str] = "token"
    chunk: str
    message_id: str

    def payload(self) -> dict[str, Any]:
        return {"chunk": self.chunk, "id": self.message_id}

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> TokenChunk:
        return cls(str(data.get("chunk") or ""), str(data.get("id") or ""))


@dataclass(frozen=True, slots=True)
class ToolCall(RunEvent):
    """An agent's tool call: ``phase`` is ``start`` (name), ``args`` (arguments), ``end`` or ``result``.

    ``message_id`` is the agent's message the call belongs to (its content blocks record the call);
    wire adapters link the call to it (AG-UI ``parentMessageId``).
    """

    name: ClassVar[str] = "tool_call"
    call_id: str
    phase: str
    tool: str = ""
    arguments: str = ""
    result: Any = None
    vertex_id: str | None = None
    message_id: str | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "id": self.call_id,
            "phase": self.phase,
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "vertex_id": self.vertex_id,
            "message_id": self.message_id,
        }

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            str(data.get("id")),
            str(data.get("phase")),
            str(data.get("tool") or ""),
            str(data.get("arguments") or ""),
            data.get("result"),
            data.get("vertex_id"),
            data.get("message_id"),
        )


@dataclass(frozen=True, slots=True)
class StateChanged(RunEvent):
    name: ClassVar[str] = "state"
    state: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return {"state": self.state}

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> StateChanged:
        return cls(dict(data.get("state") or {}))


@dataclass(frozen=True, slots=True)
class Suspended(RunEvent):
    """The run paused at ``vertex_id`` waiting for an answer to ``request`` (its id is ``request_id``)."""

    name: ClassVar[str] = "suspended"
    vertex_id: str
    request_id: str
    request: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return {"vertex_id": self.vertex_id, "request_id": self.request_id, "request": self.request}

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> Suspended:
        return cls(str(data.get("vertex_id")), str(data.get("request_id")), dict(data.get("request") or {}))


@dataclass(frozen=True, slots=True)
class RunFailed(RunEvent):
    """The run failed; ``data`` is the reference's ``error`` payload (an error message dict)."""

    name: ClassVar[str] = "error"
    message: str
    vertex_id: str | None = None
    display_name: str | None = None
    data: dict[str, Any] | None = field(default=None, compare=False)

    def payload(self) -> dict[str, Any]:
        return self.data if self.data is not None else {"error": self.message, "text": self.message}

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> RunFailed:
        text = data.get("text") or data.get("error") or "Error"
        return cls(str(text), data.get("vertex_id"), None, data=data)


@dataclass(frozen=True, slots=True)
class RunFinished(RunEvent):
    name: ClassVar[str] = "end"
    build_duration: float = 0.0

    def payload(self) -> dict[str, Any]:
        return {"build_duration": self.build_duration}

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> RunFinished:
        return cls(float(data.get("build_duration") or 0.0))


EVENT_TYPES: dict[str, type[RunEvent]] = {
    cls.name: cls
    for cls in (
        VerticesSorted,
        BuildStarted,
        VertexStarted,
        VertexFinished,
        MessageAdded,
        TokenChunk,
        ToolCall,
        StateChanged,
        Suspended,
        RunFailed,
        RunFinished,
    )
}


def decode(name: str, data: Any) -> RunEvent | None:
    """The typed event of a stored ``(name, payload)`` pair; None for names that are not run events."""
    cls = EVENT_TYPES.get(name)
    if cls is None or not isinstance(data, dict):
        return None
    return cls.from_payload(data)
