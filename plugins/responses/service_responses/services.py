"""The reference's responses shapes over the run service: request -> RunRequest, events -> frames.

The stream carries the reference's frames (``response.chunk`` objects, one per
``token`` event, then the final chunk, ``event: response.completed`` and
``[DONE]``) and, interleaved, the typed events of OpenAI's Responses streaming
protocol (``response.created``, ``response.output_text.delta``, ...) so the
official ``openai`` SDK's ``responses.create(stream=True)`` and
``responses.stream(...)`` read it unchanged. The SDK ignores frames whose type it
does not know, and a reference client reads the ``response.chunk`` frames.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any, Protocol

from core import runs
from core.engine import TokenChunk
from core.errors import ApiError


class ResponseError(Exception):
    """Answered as HTTP 200 ``{"error": {message, type, code}}`` (as the reference does)."""

    def __init__(self, message: str, code: str, type_: str = "invalid_request_error"):
        super().__init__(message)
        self.body = {"error": {"message": message, "type": type_, "code": code}}


def request_for(body: dict[str, Any], user_id: str) -> runs.RunRequest:
    if not isinstance(body, dict):
        raise ResponseError("The request body must be a JSON object", "invalid_request")
    if body.get("tools"):
        raise ResponseError("Tools are not supported: the flow decides which tools it uses", "tools_not_supported")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ResponseError("'model' must name a flow (its id or endpoint name)", "invalid_flow_request")
    text = body.get("input")
    if isinstance(text, list):  # OpenAI input items: take the text of the last user item
        items = [i for i in text if isinstance(i, dict) and i.get("role", "user") == "user"]
        content = items[-1].get("content") if items else ""
        if isinstance(content, list):
            content = " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
        text = content
    if not isinstance(text, str):
        raise ResponseError("'input' must be a string or a list of input items", "invalid_request")
    session = body.get("previous_response_id") or str(uuid.uuid4())
    return runs.RunRequest(
        flow=model,
        user_id=user_id,
        surface="responses",
        inputs=[runs.RunInput(text, "chat")],
        session_id=str(session),
    )


class HasSession(Protocol):
    """What :func:`response_body` reads of a request: the response id is its session id."""

    @property
    def session_id(self) -> str | None: ...


def response_body(req: HasSession, body: dict[str, Any], text: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": req.session_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": body["model"],
        "output": [
            {
                "type": "message",
                "id": f"msg_{req.session_id}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ]
        if status == "completed"
        else [],
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": {},
    }


def run(req: runs.RunRequest, body: dict[str, Any]) -> dict[str, Any]:
    outcome = runs.execute(_prepare(req))
    if outcome.failed is not None:
        raise ResponseError(runs.failure_text(outcome.failed), "flow_failed", "server_error")
    return response_body(req, body, outcome.results[-1].answer() or "")


def admit(req: runs.RunRequest) -> None:
    """Before a background run is queued: the flow exists for the caller and they may run it (a viewer of a
    shared flow is refused here, not by a failed job)."""
    _prepare(req, resolve_only=True)


def _prepare(req: runs.RunRequest, *, resolve_only: bool = False) -> runs.PreparedRun:
    try:
        return runs.resolve(req) if resolve_only else runs.prepare(req)
    except runs.FlowNotFound as exc:
        raise ResponseError(f"Flow '{req.flow}' not found", "flow_not_found") from exc
    except ApiError as exc:
        if exc.status == 403:  # a flow shared with the caller whose role does not let them run it (viewer)
            raise ResponseError(str(exc.detail), "permission_denied", "permission_error") from exc
        raise ResponseError(str(exc.detail), "invalid_flow_request") from exc


def _frame(data: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n"


def stream(req: runs.RunRequest, body: dict[str, Any]) -> Iterator[str]:
    """The SSE frames of a streamed run (errors before the run starts are raised, not streamed)."""
    prepared = _prepare(req)
    created = int(time.time())
    rid = str(req.session_id)
    msg_id = f"msg_{rid}"
    seq = iter(range(1, 1_000_000))

    def chunk(content: str | None, status: str | None = None, finish: str | None = None) -> str:
        delta = {} if content is None else {"content": content}
        return _frame(
            {
                "id": rid,
                "object": "response.chunk",
                "created": created,
                "model": body["model"],
                "delta": delta,
                "status": status,
                "finish_reason": finish,
            }
        )

    def sdk(kind: str, **data: Any) -> str:
        return _frame({"type": kind, "sequence_number": next(seq), **data}, kind)

    shell = response_body(req, body, "", "in_progress")
    yield sdk("response.created", response=shell)
    yield chunk("")
    item = {"type": "message", "id": msg_id, "status": "in_progress", "role": "assistant", "content": []}
    yield sdk("response.output_item.added", output_index=0, item=item)
    part = {"type": "output_text", "text": "", "annotations": []}
    yield sdk("response.content_part.added", output_index=0, content_index=0, item_id=msg_id, part=part)
    streamed: list[str] = []
    outcome: Any = None
    for event in runs.stream(prepared, keep=lambda e: isinstance(e, TokenChunk)):
        if isinstance(event, TokenChunk):
            streamed.append(event.chunk)
            yield chunk(event.chunk)
            yield sdk(
                "response.output_text.delta",
                output_index=0,
                content_index=0,
                item_id=msg_id,
                delta=event.chunk,
                logprobs=[],
            )
        else:
            outcome = event
    if isinstance(outcome, BaseException) or outcome is None or outcome.failed is not None:
        failed = outcome.failed if isinstance(outcome, runs.RunOutcome) else None
        message = runs.failure_text(failed) if failed is not None else "The run failed"
        yield _frame({"error": {"message": message, "type": "server_error", "code": "flow_failed"}}, "error")
        yield "data: [DONE]\n\n"
        return
    text = outcome.results[-1].answer() or ""
    final = response_body(req, body, text)
    yield sdk("response.output_text.done", output_index=0, content_index=0, item_id=msg_id, text=text, logprobs=[])
    yield sdk("response.output_item.done", output_index=0, item={**final["output"][0], "status": "completed"})
    yield chunk(None, "completed", "stop")
    yield sdk("response.completed", response=final)
    yield "data: [DONE]\n\n"
