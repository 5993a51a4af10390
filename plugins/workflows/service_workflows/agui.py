"""The typed run events as AG-UI events (``ag_ui.core`` models, ``ag_ui.encoder.EventEncoder``).

One :class:`Translator` per stream. It turns each :mod:`core.engine.events` record (live from
``core.runs.stream``, or decoded from a background job's stored stream) into AG-UI events:

=========================  ==========================================================
run event                  AG-UI events
=========================  ==========================================================
(stream opens)             ``RUN_STARTED {threadId: session id, runId}``, ``STATE_SNAPSHOT {nodes: {}}``
VertexStarted              ``STEP_STARTED {stepName: component id}``
VertexFinished             ``STEP_FINISHED``, then ``STATE_DELTA`` (JSON patch of ``/nodes/<id>``)
TokenChunk                 ``TEXT_MESSAGE_START`` (first chunk of a message), ``TEXT_MESSAGE_CONTENT``
MessageAdded (not User)    ``TEXT_MESSAGE_START/CONTENT/END`` (``END`` only, when it was streamed)
StateChanged               ``STATE_SNAPSHOT {snapshot: state + nodes}``
ToolCall                   ``TOOL_CALL_START/ARGS/END/RESULT``
Suspended                  ``CUSTOM service.human_input_required``, ``RUN_FINISHED``
RunFailed                  ``RUN_ERROR {message}``
RunFinished                ``RUN_FINISHED {threadId, runId}``
job ``cancelled``          ``CUSTOM service.run.cancelled``, ``RUN_FINISHED``
=========================  ==========================================================

The user's own message is not echoed (as in the reference).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from core.engine import RunEvent
from core.engine.events import (
    MessageAdded,
    RunFailed,
    RunFinished,
    StateChanged,
    Suspended,
    TokenChunk,
    ToolCall,
    VertexFinished,
    VertexStarted,
)

MEDIA_TYPE = "text/event-stream"
_ENCODER = EventEncoder()


def frame(event: BaseEvent, seq: Any) -> str:
    """One AG-UI event as the reference frames it: the encoder's ``data:`` line, then ``id: <seq>``."""
    return _ENCODER.encode(event).rstrip("\n") + f"\nid: {seq}\n\n"


class Translator:
    """Stateful: it remembers which text messages are open and whether the run has ended."""

    def __init__(self, thread_id: str, run_id: str, *, public: bool = False) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.public = public
        self.open: set[str] = set()
        self.nodes: dict[str, Any] = {}
        self.ended = False

    def started(self) -> Iterator[BaseEvent]:
        yield RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)
        yield StateSnapshotEvent(snapshot={"nodes": {}})  # what the STATE_DELTA patches apply to

    def finished(self, result: Any = None) -> Iterator[BaseEvent]:
        if not self.ended:
            self.ended = True
            yield from self._close_messages()
            yield RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, result=result)

    def error(self, message: str) -> Iterator[BaseEvent]:
        if not self.ended:
            self.ended = True
            yield from self._close_messages()
            yield RunErrorEvent(message=message)

    def _close_messages(self) -> Iterator[BaseEvent]:
        for message_id in sorted(self.open):
            yield TextMessageEndEvent(message_id=message_id)
        self.open.clear()

    def translate(self, event: RunEvent) -> Iterator[BaseEvent]:
        if isinstance(event, VertexStarted):
            yield StepStartedEvent(step_name=event.vertex_id)
        elif isinstance(event, VertexFinished):
            yield StepFinishedEvent(step_name=event.vertex_id)
            value = {"status": "completed" if event.valid else "failed"}
            self.nodes[event.vertex_id] = value
            path = f"/nodes/{_pointer(event.vertex_id)}"
            yield StateDeltaEvent(delta=[{"op": "add", "path": path, "value": value}])
        elif isinstance(event, TokenChunk):
            if not event.chunk:
                return
            if event.message_id not in self.open:
                self.open.add(event.message_id)
                yield TextMessageStartEvent(message_id=event.message_id, role="assistant")
            yield TextMessageContentEvent(message_id=event.message_id, delta=event.chunk)
        elif isinstance(event, MessageAdded):
            yield from self._message(event.message)
        elif isinstance(event, StateChanged):
            yield StateSnapshotEvent(snapshot={**event.state, "nodes": dict(self.nodes)})
        elif isinstance(event, ToolCall):
            yield from self._tool(event)
        elif isinstance(event, Suspended):
            yield CustomEvent(
                name="service.human_input_required",
                value={"request_id": event.request_id, "vertex_id": event.vertex_id, "request": event.request},
            )
            yield from self.finished({"status": "suspended", "request_id": event.request_id})
        elif isinstance(event, RunFailed):
            yield from self.error("Flow execution failed" if self.public else event.message)
        elif isinstance(event, RunFinished):
            yield from self.finished()

    def job_end(self, name: str, data: Any) -> Iterator[BaseEvent]:
        """The end event of a background job's stream (after the run's own events)."""
        if name == "cancelled":
            yield CustomEvent(name="service.run.cancelled", value={"run_id": self.run_id})
            yield from self.finished({"status": "cancelled"})
        elif name == "suspended" and isinstance(data, dict):
            yield from self.translate(Suspended.from_payload(data))
        elif name == "error":
            message = data.get("error") if isinstance(data, dict) else None
            yield from self.error(str(message or "Flow execution failed"))
        else:
            yield from self.finished()

    def _message(self, message: dict[str, Any]) -> Iterator[BaseEvent]:
        if str(message.get("sender") or "") == "User":
            return
        message_id = str(message.get("id") or "")
        if not message_id:
            return
        if message_id in self.open:  # streamed token by token: the final message closes it
            self.open.discard(message_id)
            yield TextMessageEndEvent(message_id=message_id)
            return
        yield TextMessageStartEvent(message_id=message_id, role="assistant")
        text = message.get("text")
        if isinstance(text, str) and text:
            yield TextMessageContentEvent(message_id=message_id, delta=text)
        yield TextMessageEndEvent(message_id=message_id)

    def _tool(self, event: ToolCall) -> Iterator[BaseEvent]:
        if event.phase == "start":
            yield ToolCallStartEvent(tool_call_id=event.call_id, tool_call_name=event.tool or "tool")
        elif event.phase == "args" and event.arguments:
            yield ToolCallArgsEvent(tool_call_id=event.call_id, delta=event.arguments)
        elif event.phase == "end":
            yield ToolCallEndEvent(tool_call_id=event.call_id)
        elif event.phase == "result":
            content = event.result if isinstance(event.result, str) else _json(event.result)
            yield ToolCallResultEvent(message_id=f"tool-{event.call_id}", tool_call_id=event.call_id, content=content)


def _pointer(part: str) -> str:
    """A JSON-pointer path segment (RFC 6901 escaping)."""
    return part.replace("~", "~0").replace("/", "~1")


def _json(value: Any) -> str:
    import json

    return json.dumps(value, default=str)
