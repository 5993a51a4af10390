"""The JSON-RPC side of A2A: requests checked by the a2a-sdk models, answers and SSE frames built by them.

v0.3 methods (``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel``,
``tasks/resubscribe``) are parsed with the SDK's v0.3 pydantic models. The A2A 1.0
names (``SendMessage``, ``SendStreamingMessage``, ``GetTask``, ``CancelTask``,
``SubscribeToTask``) are parsed with the SDK's 1.0 protobuf messages, converted to
v0.3 by the SDK's own ``a2a.compat.v0_3.conversions``, handled the same way, and
answered in the 1.0 shapes (converted back). Errors are JSON-RPC errors at HTTP 200.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format
from pydantic import BaseModel, ValidationError

from core.contracts import FlowRecord
from core.errors import ApiError, ValidationFailed
from core.requests import parse_json
from service_a2a import services, tasks
from service_a2a.services import Access

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003

#: v0.3 method -> (request model, handler name)
V03: dict[str, tuple[type[BaseModel], str]] = {
    "message/send": (v03.SendMessageRequest, "send"),
    "message/stream": (v03.SendStreamingMessageRequest, "stream"),
    "tasks/get": (v03.GetTaskRequest, "get"),
    "tasks/cancel": (v03.CancelTaskRequest, "cancel"),
    "tasks/resubscribe": (v03.TaskResubscriptionRequest, "resubscribe"),
}
#: A2A 1.0 method -> (protobuf request, converter to the v0.3 request, handler name)
V10: dict[str, tuple[Any, Callable[[Any, Any], BaseModel], str]] = {
    "SendMessage": (pb.SendMessageRequest, conversions.to_compat_send_message_request, "send"),
    "SendStreamingMessage": (pb.SendMessageRequest, conversions.to_compat_send_message_request, "stream"),
    "GetTask": (pb.GetTaskRequest, conversions.to_compat_get_task_request, "get"),
    "CancelTask": (pb.CancelTaskRequest, conversions.to_compat_cancel_task_request, "cancel"),
    "SubscribeToTask": (pb.SubscribeToTaskRequest, conversions.to_compat_subscribe_to_task_request, "resubscribe"),
}
PUSH_METHODS = (
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
)


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None, rid: Any = None) -> None:
        super().__init__(message)
        self.rid = rid  # the request's id, when the body had one
        self.code = code
        self.message = message
        self.data = data


def error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body = v03.JSONRPCErrorResponse(id=rid, error=v03.JSONRPCError(code=code, message=message, data=data))
    return body.model_dump(mode="json", by_alias=True, exclude_none=True) | {"id": rid}


def success(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


@dataclass
class Call:
    """A checked JSON-RPC call: its id, the handler, its v0.3 params, and whether it came in 1.0 names."""

    rid: Any
    handler: str
    params: Any
    v10: bool

    @property
    def streaming(self) -> bool:
        return self.handler in ("stream", "resubscribe")


def parse(raw: bytes) -> Call:
    """Check a JSON-RPC body with the SDK models (raises :class:`RpcError` with the standard code)."""
    try:
        body = parse_json(raw)  # the core's hardened parser (depth, number size, lone surrogates)
    except (ValidationFailed, ValueError, UnicodeDecodeError):
        raise RpcError(PARSE_ERROR, "Parse error") from None
    if not isinstance(body, dict):
        raise RpcError(INVALID_REQUEST, "Request payload validation error")
    rid = body.get("id")
    method = body.get("method")
    if body.get("jsonrpc") != "2.0" or not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, "Request payload validation error", rid=rid)
    if method in PUSH_METHODS:
        raise RpcError(PUSH_NOT_SUPPORTED, "Push Notification is not supported", rid=rid)
    if method in V03:
        model, handler = V03[method]
        try:
            request = model.model_validate(body)
        except ValidationError as exc:
            raise RpcError(INVALID_PARAMS, "Invalid parameters", _errors(exc), rid) from None
        return Call(rid, handler, request.params, False)  # type: ignore[attr-defined]
    if method in V10:
        message_type, convert, handler = V10[method]
        try:
            core_request = json_format.ParseDict(body.get("params") or {}, message_type())
            request = convert(core_request, rid if rid is not None else 0)
        except (json_format.ParseError, ValidationError, ValueError, TypeError) as exc:
            raise RpcError(INVALID_PARAMS, "Invalid parameters", str(exc)[:500], rid) from None
        return Call(rid, handler, request.params, True)  # type: ignore[attr-defined]
    raise RpcError(METHOD_NOT_FOUND, "Method not found", rid=rid)


def _errors(exc: ValidationError) -> list[dict[str, Any]]:
    return [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in exc.errors()[:10]]


# --- shapes out ---------------------------------------------------------------------------------------
def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def task_result(row: Any, v10: bool, history_length: int | None = None) -> dict[str, Any]:
    """A task as the result of ``tasks/get`` / ``tasks/cancel``, checked with the SDK's ``Task`` model."""
    out = services.task_json(row, history_length)
    task = v03.Task.model_validate(out)  # the outgoing payload, validated once (the dict is what it dumps to)
    if v10:
        return json_format.MessageToDict(conversions.to_core_task(task))
    return out


def send_result(row: Any, v10: bool) -> dict[str, Any]:
    """A task as the result of ``message/send`` (1.0: a ``SendMessageResponse`` holding it)."""
    out = services.task_json(row)
    task = v03.Task.model_validate(out)
    if v10:
        return json_format.MessageToDict(pb.SendMessageResponse(task=conversions.to_core_task(task)))
    return out


def frame(row: Any, update: tasks.Update, v10: bool) -> dict[str, Any]:
    """One streamed event (status-update / artifact-update) as a JSON-RPC result."""
    if update.kind == "artifact":
        event = v03.TaskArtifactUpdateEvent(
            task_id=str(row.id),
            context_id=row.context_id,
            artifact=services.artifact(row, update.text or ""),
            append=update.append,
            last_chunk=update.last,
        )
        if v10:
            core = conversions.to_core_task_artifact_update_event(event)
            return json_format.MessageToDict(pb.StreamResponse(artifact_update=core))
        return _dump(event)
    status = services.status(update.row or row)
    status = status.model_copy(update={"state": v03.TaskState(update.state)})
    if not update.final:
        status = status.model_copy(update={"message": None})
    event_s = v03.TaskStatusUpdateEvent(
        task_id=str(row.id), context_id=row.context_id, status=status, final=update.final
    )
    if v10:
        core_s = conversions.to_core_task_status_update_event(event_s)
        return json_format.MessageToDict(pb.StreamResponse(status_update=core_s))
    return _dump(event_s)


def first_frame(task: v03.Task, v10: bool) -> dict[str, Any]:
    if v10:
        return json_format.MessageToDict(pb.StreamResponse(task=conversions.to_core_task(task)))
    return _dump(task)


# --- handlers -----------------------------------------------------------------------------------------
def _task_or_error(flow_id: str, task_id: str) -> Any:
    row = tasks.get(flow_id, task_id)
    if row is None:
        raise RpcError(TASK_NOT_FOUND, "Task not found")
    return row


def _start(
    access: Access, params: v03.MessageSendParams, *, inline: bool = False, flow: FlowRecord | None = None
) -> Any:
    """A new task, or the answer to an ``input-required`` one (``message.taskId``): resumed through the run service.

    ``inline``: run the new task (or the answered one) in this request (a blocking send); otherwise it is a job.
    """
    try:
        if params.message.task_id:
            row = _task_or_error(access.flow_id, params.message.task_id)
            try:
                return tasks.resume(row, access, params.message, inline=inline)
            except tasks.NotWaiting as exc:
                raise RpcError(INVALID_PARAMS, str(exc)) from None
        if inline:
            return tasks.run_blocking(access, params.message, flow)
        return tasks.start(access, params.message)
    except ApiError as exc:
        raise RpcError(INVALID_PARAMS, str(exc.detail)) from None


def handle(call: Call, access: Access, flow: FlowRecord | None = None) -> dict[str, Any]:
    """Answer a non-streaming call (the result of a JSON-RPC response); ``flow``: the agent as read for this request."""
    if call.handler == "send":
        config = call.params.configuration
        blocking = config is None or config.blocking is not False
        # a blocking send without a push notification config runs in this request (no job), a new task or the
        # answer of one waiting for input; the others are jobs, followed to their end when the caller waits
        inline = blocking and (config is None or config.push_notification_config is None)
        row = _start(access, call.params, inline=inline, flow=flow)
        if blocking and row.state not in services.TERMINAL:
            for _update in tasks.follow(row):
                pass
            row = tasks.view(row)
        return send_result(row, call.v10)
    if call.handler == "get":
        row = tasks.view(_task_or_error(access.flow_id, call.params.id))
        return task_result(row, call.v10, call.params.history_length)
    if call.handler == "cancel":
        row = _task_or_error(access.flow_id, call.params.id)
        try:
            row = tasks.cancel(row)
        except tasks.TaskNotCancelable:
            raise RpcError(TASK_NOT_CANCELABLE, "Task cannot be canceled") from None
        return task_result(row, call.v10)
    raise RpcError(METHOD_NOT_FOUND, "Method not found")


def open_stream(call: Call, access: Access) -> Any:
    """Start (or find) the task of a streaming call, before the response starts (errors stay plain JSON)."""
    if call.handler == "stream":
        return _start(access, call.params)
    return _task_or_error(access.flow_id, call.params.id)


def stream(call: Call, row: Any) -> Iterator[str]:
    """SSE frames: the task (submitted), status working, artifact chunks, the final status."""

    def sse(result: dict[str, Any]) -> str:
        return f"data: {json.dumps(success(call.rid, result))}\n\n"

    # a resubscription replays the task from its start, as the stream of message/stream showed it
    first = services.task_model(row).model_copy(
        update={"status": v03.TaskStatus(state=v03.TaskState.submitted), "artifacts": None}
    )
    yield sse(first_frame(first, call.v10))
    try:
        for update in tasks.follow(row):
            yield sse(frame(row, update, call.v10))
    except Exception:  # the stream already started: end it with a JSON-RPC error frame, never a traceback
        tasks.log.exception("A2A stream of task %s failed", row.id)
        yield f"data: {json.dumps(error(call.rid, INTERNAL_ERROR, 'Internal error'))}\n\n"
