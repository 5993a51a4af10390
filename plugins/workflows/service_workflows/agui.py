"""The typed run events as AG-UI events (``ag_ui.core`` models, ``ag_ui.encoder.EventEncoder``).

One :class:`Translator` per stream. It turns each :mod:`core.engine.events` record (live from
``core.runs.stream``, or decoded from a background job's stored stream) into AG-UI events:

=========================  ==========================================================
run event                  AG-UI events
=========================  ==========================================================
(stream opens)             ``RUN_STARTED {threadId: session id, runId}``, ``STATE_SNAPSHOT {nodes: {}}``
VertexStarted              ``STEP_STARTED {stepName: component id}``, ``STATE_DELTA`` (node ``running``)
VertexFinished             ``STEP_FINISHED``, ``STATE_DELTA`` (node ``completed`` + ``output`` | ``failed``)
TokenChunk                 ``TEXT_MESSAGE_START`` (first chunk of a message), ``TEXT_MESSAGE_CONTENT``
MessageAdded (not User)    ``TEXT_MESSAGE_START/CONTENT/END`` (``END`` only, when it was streamed) [#]_
StateChanged               ``STATE_DELTA`` (RFC 6902 patch from the previous state, ``jsonpatch``)
ToolCall                   ``TOOL_CALL_START {parentMessageId}/ARGS/END/RESULT``
Suspended                  ``CUSTOM service.human_input_required``, ``RUN_FINISHED``
RunFailed                  ``RUN_ERROR {message}``
RunFinished                ``STATE_SNAPSHOT`` (the final state), ``RUN_FINISHED {threadId, runId}``
job ``cancelled``          ``CUSTOM service.run.cancelled``, ``RUN_FINISHED``
=========================  ==========================================================

.. [#] A stored message whose text is exactly what an open message streamed (a model streams, Chat
   Output stores a copy under its own id) ends that stream instead of being sent a second time.

Every ``STATE_DELTA`` is an RFC 6902 JSON Patch against the state the previous events built (the
first ``STATE_SNAPSHOT``, then each patch in order); the run's last ``STATE_SNAPSHOT`` is the state
they add up to. Anonymous (public) runs carry node statuses only, no outputs or errors.

The user's own message is not echoed (as in the reference).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonpatch
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

#: the ``CUSTOM`` event a run that paused for a human decision ends with (the reference's name)
HUMAN_INPUT_REQUIRED = "service.human_input_required"
_ENCODER = EventEncoder()


def frame(event: BaseEvent, seq: Any) -> str:
    """One AG-UI event as the reference frames it: the encoder's ``data:`` line, then ``id: <seq>``."""
    return _ENCODER.encode(event).rstrip("\n") + f"\nid: {seq}\n\n"


class Translator:
    """Stateful: the open text messages, the run state the ``STATE_DELTA`` patches build, the end.

    Text messages and tool calls never interleave on the wire: a tool call that starts while its
    agent message is streaming ends that message first, and the call's ``parentMessageId`` is it;
    the agent's later text goes on in a new message (``<message id>:<n>``). Calls that start with
    no text streamed before them get a parent of their own (``<message id>:tools:<n>``), shared by
    the calls the model asked for together. The final message keeps the stored message's id
    whenever it is the first text of the run's agent message.
    """

    def __init__(self, thread_id: str, run_id: str, *, public: bool = False, job_id: str | None = None) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.job_id = job_id or run_id
        self.public = public
        self.open: set[str] = set()  # wire ids of the text messages started and not ended
        self.texts: dict[str, int] = {}  # message id -> text segments started
        self.current: dict[str, str] = {}  # message id -> wire id of its open text segment
        self.streamed: dict[str, list[str]] = {}  # wire id of an open streamed segment -> its chunks
        self.parents: dict[str, str] = {}  # message id -> parent of the calls being started
        self.tool_groups: dict[str, int] = {}
        self.state: dict[str, Any] = {"nodes": {}}
        self.ended = False

    def started(self) -> Iterator[BaseEvent]:
        yield RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)
        yield StateSnapshotEvent(snapshot={"nodes": {}})  # what the STATE_DELTA patches apply to

    def finished(self, result: Any = None) -> Iterator[BaseEvent]:
        if not self.ended:
            self.ended = True
            yield from self._close_messages()
            yield StateSnapshotEvent(snapshot=copy.deepcopy(self.state))  # the final state, whole
            yield RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, result=result)

    def error(self, message: str) -> Iterator[BaseEvent]:
        if not self.ended:
            self.ended = True
            yield from self._close_messages()
            yield RunErrorEvent(message=message)

    def _close_messages(self) -> Iterator[BaseEvent]:
        for wire_id in sorted(self.open):
            yield TextMessageEndEvent(message_id=wire_id)
        self.open.clear()
        self.current.clear()
        self.streamed.clear()

    # -- run state -------------------------------------------------------------------------------------
    def _node(self, vertex_id: str, value: dict[str, Any]) -> BaseEvent:
        """``STATE_DELTA``: one RFC 6902 operation setting ``/nodes/<id>`` (add, or replace a known node)."""
        nodes = self.state["nodes"]
        op = "replace" if vertex_id in nodes else "add"
        nodes[vertex_id] = value
        operation: Any = {"op": op, "path": f"/nodes/{_pointer(vertex_id)}", "value": value}  # pydantic validates it
        return StateDeltaEvent(delta=[operation])

    def _finished_node(self, event: VertexFinished) -> dict[str, Any]:
        if not event.valid:
            value: dict[str, Any] = {"status": "failed"}
            if not self.public:
                value["error"] = event.error or "failed"
            return value
        value = {"status": "completed"}
        if not self.public:  # an anonymous caller sees the answer, never the intermediate results
            params = (event.payload().get("build_data") or {}).get("params")
            if isinstance(params, str):
                value["output"] = params
        return value

    def _state(self, state: dict[str, Any]) -> Iterator[BaseEvent]:
        """A component published run state: the patch from the state as it was to ``state`` + nodes."""
        new = {**copy.deepcopy(state), "nodes": copy.deepcopy(self.state["nodes"])}
        patch = jsonpatch.make_patch(self.state, new).patch
        self.state = new
        if patch:
            yield StateDeltaEvent(delta=patch)

    # -- events ----------------------------------------------------------------------------------------
    def translate(self, event: RunEvent) -> Iterator[BaseEvent]:
        if isinstance(event, VertexStarted):
            yield StepStartedEvent(step_name=event.vertex_id)
            yield self._node(event.vertex_id, {"status": "running"})
        elif isinstance(event, VertexFinished):
            yield StepFinishedEvent(step_name=event.vertex_id)
            yield self._node(event.vertex_id, self._finished_node(event))
        elif isinstance(event, TokenChunk):
            yield from self._token(event)
        elif isinstance(event, MessageAdded):
            yield from self._message(event.message)
        elif isinstance(event, StateChanged):
            yield from self._state(event.state)
        elif isinstance(event, ToolCall):
            yield from self._tool(event)
        elif isinstance(event, Suspended):
            yield from self._suspended(event)
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

    def _suspended(self, event: Suspended) -> Iterator[BaseEvent]:
        """``CUSTOM service.human_input_required`` (what to answer, and where), then ``RUN_FINISHED``."""
        request = event.request
        value: dict[str, Any] = {
            "request_id": event.request_id,
            "job_id": self.job_id,
            "vertex_id": event.vertex_id,
            "type": request.get("type"),
            "tool": request.get("tool"),
            "tool_call_id": request.get("tool_call_id"),
            "arguments": request.get("arguments"),
            "actions": request.get("actions"),
            "resume_url": f"/api/v2/workflows/{self.job_id}/resume",
            "request": request,
        }
        yield CustomEvent(name=HUMAN_INPUT_REQUIRED, value={k: v for k, v in value.items() if v is not None})
        yield from self.finished({"status": "suspended", "request_id": event.request_id, "job_id": self.job_id})

    # -- text messages -----------------------------------------------------------------------------------
    def _start_text(self, message_id: str) -> tuple[str, BaseEvent]:
        n = self.texts.get(message_id, 0) + 1
        self.texts[message_id] = n
        wire_id = message_id if n == 1 else f"{message_id}:{n}"
        self.current[message_id] = wire_id
        self.open.add(wire_id)
        self.parents.pop(message_id, None)  # text after tool calls: the next calls get a new parent
        return wire_id, TextMessageStartEvent(message_id=wire_id, role="assistant")

    def _end_text(self, message_id: str) -> Iterator[BaseEvent]:
        wire_id = self.current.pop(message_id, None)
        if wire_id is not None and wire_id in self.open:
            self.open.discard(wire_id)
            self.streamed.pop(wire_id, None)
            yield TextMessageEndEvent(message_id=wire_id)

    def _streamed_as(self, text: Any) -> str | None:
        """The message id whose open streamed segment carried exactly ``text``, if one did."""
        if not isinstance(text, str) or not text:
            return None
        for message_id, wire_id in self.current.items():
            chunks = self.streamed.get(wire_id)
            if chunks and "".join(chunks) == text:
                return message_id
        return None

    def _token(self, event: TokenChunk) -> Iterator[BaseEvent]:
        if not event.chunk:
            return
        wire_id = self.current.get(event.message_id)
        if wire_id is None:
            wire_id, start = self._start_text(event.message_id)
            yield start
        self.streamed.setdefault(wire_id, []).append(event.chunk)
        yield TextMessageContentEvent(message_id=wire_id, delta=event.chunk)

    def _message(self, message: dict[str, Any]) -> Iterator[BaseEvent]:
        if str(message.get("sender") or "") == "User":
            return
        message_id = str(message.get("id") or "")
        if not message_id:
            return
        if message_id in self.current:  # streamed token by token: the final message closes it
            yield from self._end_text(message_id)
            return
        text = message.get("text")
        streamed = self._streamed_as(text)
        if streamed is not None:
            # the streamed answer stored by another component (a model streams, Chat Output stores a copy
            # under its own id): the stream was this message, it ends here instead of being sent twice
            yield from self._end_text(streamed)
            return
        wire_id, start = self._start_text(message_id)
        yield start
        if isinstance(text, str) and text:
            yield TextMessageContentEvent(message_id=wire_id, delta=text)
        yield from self._end_text(message_id)

    # -- tool calls --------------------------------------------------------------------------------------
    def _parent(self, event: ToolCall) -> str | None:
        """The AG-UI message a starting call belongs to (see the class notes)."""
        owner = event.message_id
        if not owner:
            return None
        streaming = self.current.get(owner)
        if streaming is not None:  # the text the model wrote with its tool calls: their message
            self.parents[owner] = streaming
            return streaming
        parent = self.parents.get(owner)
        if parent is None:
            n = self.tool_groups.get(owner, 0) + 1
            self.tool_groups[owner] = n
            parent = self.parents[owner] = f"{owner}:tools:{n}"
        return parent

    def _tool(self, event: ToolCall) -> Iterator[BaseEvent]:
        if event.phase == "start":
            parent = self._parent(event)
            if event.message_id:
                yield from self._end_text(event.message_id)
            yield ToolCallStartEvent(
                tool_call_id=event.call_id, tool_call_name=event.tool or "tool", parent_message_id=parent
            )
        elif event.phase == "args" and event.arguments:
            yield ToolCallArgsEvent(tool_call_id=event.call_id, delta=event.arguments)
        elif event.phase == "end":
            yield ToolCallEndEvent(tool_call_id=event.call_id)
        elif event.phase == "result":
            if event.message_id:  # the calls asked together are done: later calls get a new parent
                self.parents.pop(event.message_id, None)
            content = event.result if isinstance(event.result, str) else _json(event.result)
            yield ToolCallResultEvent(
                message_id=f"{event.call_id}:result", tool_call_id=event.call_id, content=content, role="tool"
            )


def _pointer(part: str) -> str:
    """A JSON-pointer path segment (RFC 6901 escaping)."""
    return part.replace("~", "~0").replace("/", "~1")


def _json(value: Any) -> str:
    import json

    return json.dumps(value, default=str)
