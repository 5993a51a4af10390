"""``A2A Agent``: send the input to a remote A2A agent and stream its answer as tokens.

The card is resolved from the agent URL (a card URL, or the agent's base URL whose
``/.well-known/agent-card.json`` is read) and checked with the a2a-sdk models; the
message goes out as ``message/stream`` (``message/send`` when the card says it cannot
stream), each frame checked with the SDK's v0.3 models. Every request goes through the
core egress helper (SSRF rules, per-read timeout, a size cap). The remote ``contextId``
is kept per session (the deployment's shared store), so a conversation goes on remotely
as it does here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from typing import TYPE_CHECKING, Any

from core.engine import Component, ComponentError, Message, Output
from core.engine.egress import EgressError, EgressPolicy, request, stream
from core.engine.inputs import Input, IntInput, MessageTextInput, SecretStrInput, StrInput, TabInput
from core.engine.lazy import lazy_import
from core.engine.types import to_text

if TYPE_CHECKING:
    import pydantic
    from a2a.compat.v0_3 import types as v03
else:  # the A2A SDK's models (about 0.2 s) when the component first runs, not when the catalog loads
    v03 = lazy_import("a2a.compat.v0_3.types")
    pydantic = lazy_import("pydantic")

CARD_PATH = "/.well-known/agent-card.json"
#: the largest card, and the largest answer stream, read from a remote agent
MAX_CARD_BYTES = 1024 * 1024
MAX_ANSWER_BYTES = 8 * 1024 * 1024
#: how long the remote contextId of a session is remembered
CONTEXT_TTL_SECONDS = 7 * 24 * 3600


class DataDisplayInput(Input):
    """A read-only display of data in the editor (the reference's ``data_display`` field: the resolved card)."""

    input_type = "DataDisplayInput"
    field_type = "data_display"
    default: Any = None


class A2AAgent(Component):
    key = "A2AAgent"
    display_name = "A2A Agent"
    description = "Send a message to an agent over the Agent2Agent (A2A) protocol and return its answer."
    icon = "Bot"
    category = "models_and_agents"
    inputs = [
        TabInput("mode", "Mode", "External", options=["Internal", "External"]),
        StrInput("agent_name_selected", "Agent", "", show=False),
        MessageTextInput("agent_url", "Agent URL", "", info="The agent's card URL, or its base URL."),
        DataDisplayInput("agent_card", "Agent Card", None, show=False),
        MessageTextInput("input_value", "Input", "", required=True),
        SecretStrInput("api_key", "API Key", "", advanced=True, load_from_db=True, info="Sent as x-api-key."),
        IntInput("timeout", "Timeout", 60, advanced=True, info="Seconds to wait for the agent (each read)."),
    ]
    outputs = [Output("response", "Response", "send_to_agent", ["Message"])]

    # -- the call --------------------------------------------------------------------------------
    def send_to_agent(self) -> Message:
        if to_text(self.mode) == "Internal":
            raise ComponentError(
                "Internal mode is not available yet: use External mode with the agent's card URL "
                "(GET /api/v1/a2a/agents lists your agents' card URLs)"
            )
        text = to_text(self.input_value)
        if not text.strip():
            raise ComponentError("The input is empty")
        card_url = self._card_url(to_text(self.agent_url).strip())
        timeout = float(max(1, min(int(self.timeout or 60), 600)))
        headers = {"x-api-key": to_text(self.api_key)} if to_text(self.api_key) else {}
        card = self._card(card_url, headers, timeout)
        self.agent_card = card.model_dump(mode="json", by_alias=True, exclude_none=True)
        context_key = self._context_key(card_url)
        message = v03.Message(
            role=v03.Role.user,
            message_id=str(uuid.uuid4()),
            parts=[v03.Part(root=v03.TextPart(text=text))],
            context_id=self._remembered(context_key),
        )
        streaming = bool(card.capabilities and card.capabilities.streaming)
        if streaming:
            answer, context_id = self._stream(card.url, message, headers, timeout)
        else:
            answer, context_id = self._send(card.url, message, headers, timeout)
        if context_id:
            self._remember(context_key, context_id)
        self.status = answer
        return Message(text=answer)

    def _card_url(self, url: str) -> str:
        if not url:
            raise ComponentError("Agent URL is required")
        return url if url.endswith(".json") else url.rstrip("/") + CARD_PATH

    def _policy(self, max_bytes: int) -> EgressPolicy:
        policy = self.context.egress
        return dataclasses.replace(policy, max_bytes=min(policy.max_bytes, max_bytes))

    def _card(self, card_url: str, headers: dict[str, str], timeout: float) -> v03.AgentCard:
        try:
            resp = request(
                "GET",
                card_url,
                policy=self._policy(MAX_CARD_BYTES),
                headers={"Accept": "application/json", **headers},
                timeout=timeout,
                deadline=self.context.deadline,
            )
        except EgressError as exc:
            raise ComponentError(f"Could not read the agent card at {card_url}: {exc}") from None
        if resp.status_code != 200:
            raise ComponentError(f"The agent card at {card_url} answered HTTP {resp.status_code}")
        try:
            return v03.AgentCard.model_validate_json(resp.content)
        except pydantic.ValidationError as exc:
            raise ComponentError(f"The agent card at {card_url} is not a valid A2A 0.3 card: {_first(exc)}") from None

    def _body(self, method: str, message: v03.Message) -> str:
        request_model = (v03.SendStreamingMessageRequest if method == "message/stream" else v03.SendMessageRequest)(
            id=str(uuid.uuid4()), params=v03.MessageSendParams(message=message)
        )
        return request_model.model_dump_json(by_alias=True, exclude_none=True)

    def _send(self, url: str, message: v03.Message, headers: dict[str, str], timeout: float) -> tuple[str, str | None]:
        try:
            resp = request(
                "POST",
                url,
                policy=self._policy(MAX_ANSWER_BYTES),
                headers={"Content-Type": "application/json", "Accept": "application/json", **headers},
                body=self._body("message/send", message),
                timeout=timeout,
                deadline=self.context.deadline,
            )
        except EgressError as exc:
            raise ComponentError(f"The agent at {url} could not be reached: {exc}") from None
        _check_status(url, resp.status_code)
        try:
            reply = v03.SendMessageResponse.model_validate_json(resp.content).root
        except pydantic.ValidationError as exc:
            raise ComponentError(f"The agent at {url} answered an invalid response: {_first(exc)}") from None
        if isinstance(reply, v03.JSONRPCErrorResponse):
            raise ComponentError(f"The agent answered an error: {reply.error.message}")
        result = reply.result
        if isinstance(result, v03.Message):
            return _text(result.parts), result.context_id
        _check_task_state(result.status)
        return "".join(_text(a.parts) for a in result.artifacts or []), result.context_id

    def _stream(
        self, url: str, message: v03.Message, headers: dict[str, str], timeout: float
    ) -> tuple[str, str | None]:
        chunks: list[str] = []
        context_id: str | None = None
        token_id = str(uuid.uuid4())
        try:
            with stream(
                "POST",
                url,
                policy=self._policy(MAX_ANSWER_BYTES),
                headers={"Content-Type": "application/json", "Accept": "text/event-stream", **headers},
                body=self._body("message/stream", message),
                timeout=timeout,
            ) as resp:
                _check_status(url, resp.status_code)
                if not resp.headers.get("content-type", "").startswith("text/event-stream"):
                    raise ComponentError(f"The agent at {url} did not answer an event stream")
                for line in resp.lines():
                    self.context.check()  # cancelled, or out of time
                    if not line.startswith(b"data:"):
                        continue
                    event = _frame(url, line[5:])
                    context_id = getattr(event, "context_id", None) or context_id
                    if isinstance(event, v03.TaskArtifactUpdateEvent):
                        chunk = _text(event.artifact.parts)
                        if not event.append:
                            chunks.clear()
                        if chunk:
                            chunks.append(chunk)
                            self.emit_token(chunk, token_id)
                    elif isinstance(event, v03.Message):
                        chunks.append(_text(event.parts))
                    elif isinstance(event, v03.TaskStatusUpdateEvent):
                        _check_task_state(event.status)
                        if event.final:
                            break
                    elif isinstance(event, v03.Task):
                        _check_task_state(event.status)
        except EgressError as exc:
            raise ComponentError(f"The agent at {url} could not be reached: {exc}") from None
        return "".join(chunks), context_id

    # -- the remote context of this session ------------------------------------------------------
    def _context_key(self, card_url: str) -> str:
        ctx = self.context
        raw = f"{ctx.user_id}|{ctx.flow_id}|{ctx.session_id}|{self.vertex.id}|{card_url}"
        return "a2a-ctx:" + hashlib.sha256(raw.encode()).hexdigest()[:40]

    def _remembered(self, key: str) -> str | None:
        store = self.context.shared  # the run carries it: a vertex on a pool thread has no app of its own
        return store.get(key) if store is not None else None

    def _remember(self, key: str, context_id: str) -> None:
        store = self.context.shared
        if store is not None:
            store.put(key, context_id[:255], ttl=CONTEXT_TTL_SECONDS)


def _frame(url: str, data: bytes) -> Any:
    try:
        reply = v03.SendStreamingMessageResponse.model_validate_json(data).root
    except pydantic.ValidationError as exc:
        raise ComponentError(f"The agent at {url} streamed an invalid event: {_first(exc)}") from None
    if isinstance(reply, v03.JSONRPCErrorResponse):
        raise ComponentError(f"The agent answered an error: {reply.error.message}")
    return reply.result


def _check_status(url: str, status: int) -> None:
    if status == 401:
        raise ComponentError(f"The agent at {url} requires a valid API key (HTTP 401)")
    if status >= 400:
        raise ComponentError(f"The agent at {url} answered HTTP {status}")


def _check_task_state(status: v03.TaskStatus) -> None:
    if status.state in (v03.TaskState.failed, v03.TaskState.rejected, v03.TaskState.canceled):
        reason = _text(status.message.parts) if status.message else status.state.value
        raise ComponentError(f"The agent's task ended {status.state.value}: {reason}")
    if status.state in (v03.TaskState.input_required, v03.TaskState.auth_required):
        raise ComponentError(f"The agent's task needs {status.state.value.replace('-', ' ')}, which is not supported")


def _text(parts: list[v03.Part]) -> str:
    out = []
    for part in parts:
        root = part.root
        if isinstance(root, v03.TextPart):
            out.append(root.text)
        elif isinstance(root, v03.DataPart):
            out.append(json.dumps(root.data))
    return "".join(out)


def _first(exc: pydantic.ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error.get('loc', ()))}: {error.get('msg')}"
