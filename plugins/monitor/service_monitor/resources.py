"""HTTP endpoints of the monitor plugin at the reference's paths (``/api/v1/monitor/...``, ``/logs*``).

Every route requires a signed-in caller and reads only the caller's rows, except for another user's flow shared
with the caller (``core.auth.foreign_flow``): its messages, vertex builds and transactions are every user's runs
(``read``), deleting its builds needs ``write``; another user's message of a flow the caller may ``write`` can
be edited (``PUT /messages/{id}``) and one of a flow they may ``delete`` deleted (``DELETE /messages``); with
``flow_id``, a session of a flow the caller may ``write`` can be renamed and one of a flow they may ``delete``
deleted, every user's messages of it (``PATCH``/``DELETE /messages/session/{id}``).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

from flask import Response
from flask_smorest import Blueprint
from marshmallow import fields

from core import appstate, db, openapi
from core.auth import authenticated, check_access, current_actor, flow_ref, foreign_flow
from core.errors import ApiError
from core.requests import json_list
from core.runs import shared_flow_id, sse
from service_monitor import hookspecs, logbuffer, schemas, services
from service_monitor.config import settings as monitor_settings

blp = Blueprint("monitor", __name__, url_prefix="/api/v1/monitor", description="Messages, builds, transactions")
logs_blp = Blueprint("logs", __name__, description="Server logs (superusers; off by default)")


#: documented shapes of bodies that are plain JSON arrays/objects (no marshmallow schema)
STRING_LIST = {
    "description": "session ids",
    "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}},
}
LOG_LINES = {
    "description": "log lines by epoch milliseconds",
    "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {"type": "string"}}}},
}


def _no_content() -> Response:
    return Response(status=204)


# --- vertex builds and transactions --------------------------------------------------------------
@blp.route("/builds", methods=["GET"])
@blp.arguments(schemas.FlowIdSchema, location="query")
@blp.response(200, schemas.VertexBuildsSchema)
@authenticated("user")
def get_vertex_builds(query):
    """Vertex builds of one of the caller's flows, grouped by vertex id; of another user's flow shared with the
    caller (``read``; 404 when they may not see it) every user's builds of it."""
    actor = current_actor()
    shared = foreign_flow(actor, query["flow_id"], "read")
    return {"vertex_builds": services.vertex_builds(db.session(), actor, query["flow_id"], everyone=bool(shared))}


@blp.route("/builds", methods=["DELETE"])
@blp.arguments(schemas.FlowIdSchema, location="query")
@blp.response(204)
@authenticated("user")
def delete_vertex_builds(query):
    """Forget the vertex builds of a flow: the caller's; of a shared flow (``write``: 403 for readers) every user's."""
    actor = current_actor()
    shared = foreign_flow(actor, query["flow_id"], "write")
    with db.transaction() as s:
        services.delete_vertex_builds(s, actor, query["flow_id"], everyone=bool(shared))
    return _no_content()


@blp.route("/transactions", methods=["GET"])
@blp.arguments(schemas.TransactionQuerySchema, location="query")
@blp.response(200, schemas.TransactionPageSchema)
@authenticated("user")
def get_transactions(query):
    """Transactions of a flow, newest first, in pages: the caller's; of a flow shared with them (``read``) every
    user's; another user's flow they may not see is 404."""
    actor = current_actor()
    shared = foreign_flow(actor, query["flow_id"], "read")
    return services.transactions(
        db.session(), actor, query["flow_id"], query["page"], query["size"], everyone=bool(shared)
    )


# --- messages ------------------------------------------------------------------------------------------
#: the cursor of the next page of a full page of messages (``cursor`` query parameter): keyset pagination
NEXT_CURSOR = "X-Next-Cursor"
NEXT_CURSOR_DOC = {
    NEXT_CURSOR: {
        "description": "present when the page is full: pass it as `cursor` (same filter and order) for the next",
        "schema": {"type": "string"},
    }
}


def _message_page(rows: list, query) -> tuple[list, int, dict[str, str]]:  # type: ignore[type-arg,no-untyped-def]
    cursor = services.next_cursor(rows, query)
    return [services.message_dict(m) for m in rows], 200, ({NEXT_CURSOR: cursor} if cursor else {})


@blp.route("/messages", methods=["GET"])
@blp.arguments(schemas.MessageQuerySchema, location="query")
@blp.response(200, schemas.ChatMessageSchema(many=True), headers=NEXT_CURSOR_DOC)
@authenticated("user")
def get_messages(query):
    """The caller's messages, filtered and ordered: by ``offset``, or after the ``cursor`` of the previous page;
    for another user's flow shared with the caller (``flow_id``, ``read``: 404 when they may not see it) the
    messages of every user's runs of it."""
    actor = current_actor()
    shared = foreign_flow(actor, query["flow_id"], "read") if query.get("flow_id") is not None else None
    return _message_page(services.list_messages(db.session(), actor, query, everyone=shared is not None), query)


@blp.route("/messages", methods=["DELETE"])
@blp.response(204)
@blp.doc(requestBody=openapi.ID_LIST_BODY, responses={"422": openapi.response_name(422)})
@authenticated("user")
def delete_messages():
    """Delete messages by id (a JSON array of UUIDs): the caller's, and others' of flows the caller may delete
    (403 for a flow they may only read; ids they may not see are skipped, as unknown ones)."""
    ids = json_list(fields.UUID())
    with db.transaction() as s:
        services.delete_messages(s, current_actor(), ids)
    return _no_content()


@blp.route("/messages/sessions", methods=["GET"])
@blp.arguments(schemas.OptionalFlowIdSchema, location="query")
@blp.response(200)
@blp.doc(responses={"200": STRING_LIST})
@authenticated("user")
def get_sessions(query):
    """Session ids of a flow (all the caller's sessions without ``flow_id``), newest first."""
    return services.sessions(db.session(), current_actor(), query.get("flow_id"), any_flow=True)


@blp.route("/messages/sessions", methods=["DELETE"])
@blp.response(200, schemas.DeleteSessionsSchema)
@blp.doc(
    requestBody={
        "required": True,
        "description": "A JSON array of session ids (at most 500).",
        "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}, "maxItems": 500}}},
    },
    responses={"422": openapi.response_name(422)},
)
@authenticated("user")
def delete_sessions():
    """Delete up to 500 sessions at once (a JSON array of session ids); 400 above that."""
    ids = json_list(fields.String())
    with db.transaction() as s:
        count = services.delete_sessions(s, current_actor(), ids)
    if not ids:
        return {"message": "No sessions to delete", "deleted_count": 0}
    return {"message": f"Messages deleted successfully for {count} sessions", "deleted_count": count}


def _flow_session(flow_id: uuid.UUID | None, verb: str) -> services.SessionScope | None:
    """The scope of a session route given ``flow_id``: None without one (the caller's messages of every flow, as
    the reference); the flow id alone when it names no stored flow (the caller's messages of it); the flow id
    and every user's messages of it when the caller owns the flow or may ``verb`` it through a share
    (``core.auth.check_access``, deny wins: 404 when they may not even read it, 403 when they may only read
    or run it)."""
    if flow_id is None:
        return None
    actor = current_actor()
    found = appstate.hooks().find_flow(user_id=None, flow_id_or_name=str(flow_id), public=False, draft=True)
    if found is None or found.id != str(flow_id):
        return services.SessionScope(flow_id, everyone=False)
    if str(found.user_id) != actor.owner_id:
        check_access(actor, verb, flow_ref(found), not_found="Flow not found")
    return services.SessionScope(flow_id, everyone=True)


@blp.route("/messages/session/<path:session_id>", methods=["DELETE"])
@blp.arguments(schemas.FlowSessionSchema, location="query")
@blp.response(204)
@authenticated("user")
def delete_session(query, session_id):
    """Delete every message of one of the caller's sessions; with ``flow_id``, of that flow's session only, every
    user's messages of it for its owner or a team member who may ``delete`` the flow (403/404 otherwise)."""
    scope = _flow_session(query.get("flow_id"), "delete")
    with db.transaction() as s:
        services.delete_session(s, current_actor(), session_id, scope=scope)
    return _no_content()


@blp.route("/messages/session/<path:old_session_id>", methods=["PATCH"])
@blp.arguments(schemas.FlowSessionRenameSchema, location="query")
@blp.response(200, schemas.ChatMessageSchema(many=True))
@blp.doc(requestBody=openapi.no_body("the new session id is the new_session_id query parameter"))
@authenticated("user")
def rename_session(query, old_session_id):
    """Move a session's messages to a new session id; with ``flow_id``, that flow's session only, every user's
    messages of it for its owner or a team member who may ``write`` the flow (403/404 otherwise)."""
    scope = _flow_session(query.get("flow_id"), "write")
    with db.transaction() as s:
        messages = services.rename_session(s, current_actor(), old_session_id, query["new_session_id"], scope=scope)
        return [services.message_dict(m) for m in messages]


@blp.route("/messages/<message_id>", methods=["PUT"])
@blp.arguments(schemas.ChatMessageUpdateSchema)
@blp.response(200, schemas.ChatMessageSchema)
@authenticated("user")
def update_message(body, message_id):
    """Edit a message (editing the text marks it edited): the caller's, or another user's of a flow the caller
    may write (403 when they may only read it, 404 when not even that)."""
    with db.transaction() as s:
        return services.message_dict(services.update_message(s, current_actor(), message_id, body))


# --- shared messages (the caller's conversations with flows shared with them) -----------------------------------
def _shared(source_flow_id):  # type: ignore[no-untyped-def]
    return shared_flow_id(current_actor().id, source_flow_id)


@blp.route("/messages/shared", methods=["GET"])
@blp.arguments(schemas.SharedMessageQuerySchema, location="query")
@blp.response(200, schemas.ChatMessageSchema(many=True), headers=NEXT_CURSOR_DOC)
@authenticated("user")
def get_shared_messages(query):
    """Messages the caller exchanged with a shared flow (kept under a virtual flow id)."""
    query = {**query, "flow_id": None}
    rows = services.list_messages(db.session(), current_actor(), query, flow_id=_shared(query["source_flow_id"]))
    return _message_page(rows, query)


@blp.route("/messages/shared/sessions", methods=["GET"])
@blp.arguments(schemas.SourceFlowSchema, location="query")
@blp.response(200)
@blp.doc(responses={"200": STRING_LIST})
@authenticated("user")
def get_shared_sessions(query):
    """Session ids of the caller's conversations with a shared flow."""
    return services.sessions(db.session(), current_actor(), _shared(query["source_flow_id"]))


@blp.route("/messages/shared/session/<path:session_id>", methods=["DELETE"])
@blp.arguments(schemas.SourceFlowSchema, location="query")
@blp.response(204)
@authenticated("user")
def delete_shared_session(query, session_id):
    """Delete one of the caller's sessions with a shared flow."""
    with db.transaction() as s:
        services.delete_session(s, current_actor(), session_id, flow_id=_shared(query["source_flow_id"]))
    return _no_content()


@blp.route("/messages/shared/session/<path:old_session_id>", methods=["PATCH"])
@blp.arguments(schemas.SharedRenameSessionSchema, location="query")
@blp.response(200, schemas.ChatMessageSchema(many=True))
@blp.doc(requestBody=openapi.no_body("the new session id is the new_session_id query parameter"))
@authenticated("user")
def rename_shared_session(query, old_session_id):
    """Rename one of the caller's sessions with a shared flow."""
    with db.transaction() as s:
        messages = services.rename_session(
            s, current_actor(), old_session_id, query["new_session_id"], flow_id=_shared(query["source_flow_id"])
        )
        return [services.message_dict(m) for m in messages]


@blp.route("/messages/shared/<message_id>", methods=["PUT"])
@blp.arguments(schemas.SourceFlowSchema, location="query")
@blp.arguments(schemas.ChatMessageUpdateSchema)
@blp.response(200, schemas.ChatMessageSchema)
@authenticated("user")
def update_shared_message(query, body, message_id):
    """Edit one of the caller's messages with a shared flow."""
    with db.transaction() as s:
        message = services.update_message(
            s, current_actor(), message_id, body, flow_id=_shared(query["source_flow_id"])
        )
        return services.message_dict(message)


# --- logs -------------------------------------------------------------------------------------------------------
#: ``/logs-stream`` polls the buffer this often and writes ``keepalive`` after this many idle polls in all
#: (the reference: every second, a keep-alive per five idle polls)
STREAM_POLL_SECONDS = 1.0
STREAM_IDLE_POLLS_BEFORE_KEEPALIVE = 5
LOG_STREAM = {
    "description": (
        'blocks of `{"<epoch_ms>": "<line>"}` each followed by a blank line (no `data:` prefix, as the '
        "reference writes them), starting with the lines logged after the stream opened; `keepalive` after "
        "every five idle seconds. Each worker streams its own lines."
    ),
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}
DISABLED = {"description": "Log retrieval is disabled (`SERVICE_ENABLE_LOG_RETRIEVAL`)"}


def _log_buffer() -> logbuffer.LogBuffer:
    if not monitor_settings().enable_log_retrieval:
        raise ApiError(501, "Log retrieval is disabled")
    return logbuffer.install(monitor_settings().log_retrieval_buffer_size)


@logs_blp.route("/logs", methods=["GET"])
@logs_blp.arguments(schemas.LogQuerySchema, location="query")
@logs_blp.response(200)
@logs_blp.doc(responses={"200": LOG_LINES, "400": {"description": "contradictory query"}, "501": DISABLED})
@authenticated("superuser")
def get_logs(query):
    """This worker's recent log lines as ``{epoch_ms: line}`` (``SERVICE_ENABLE_LOG_RETRIEVAL``)."""
    buffer = _log_buffer()
    if query["lines_before"] and query["lines_after"]:
        raise ApiError(400, "Cannot request logs before and after the timestamp")
    if query["lines_after"] and not query["timestamp"]:
        raise ApiError(400, "Timestamp is required when requesting logs after the timestamp")
    return buffer.read(
        lines_before=query["lines_before"], lines_after=query["lines_after"], timestamp=query["timestamp"]
    )


def _stream_lines(buffer: logbuffer.LogBuffer, last: int) -> Iterator[str]:
    idle = 0
    yield ""  # the WSGI server sends the headers now, not with the first line (up to five seconds later)
    while True:
        fresh = buffer.since(last)
        for stamp, line in fresh:
            yield json.dumps({str(stamp): line}) + "\n\n"
        if fresh:
            last = fresh[-1][0]
        else:
            idle += 1
            if idle == STREAM_IDLE_POLLS_BEFORE_KEEPALIVE:
                idle = 0
                yield "keepalive\n\n"
        time.sleep(STREAM_POLL_SECONDS)  # cooperative under gevent; a closed client ends the generator


@logs_blp.route("/logs-stream", methods=["GET"])
@logs_blp.doc(responses={"200": LOG_STREAM, "501": DISABLED})
@authenticated("superuser")
def stream_logs():
    """New log lines of this worker as they are written (``SERVICE_ENABLE_LOG_RETRIEVAL``)."""
    buffer = _log_buffer()
    return sse.response(_stream_lines(buffer, buffer.latest()))  # the request's connection goes back first


# --- job queue metrics --------------------------------------------------------------------------------
@blp.route("/job_queue", methods=["GET"])
@blp.doc(
    responses={
        "200": {"description": "job queue metrics", "content": {"application/json": {"schema": {"type": "object"}}}}
    }
)
@authenticated("superuser")
def job_queue():
    """Backend, active jobs, counters; plus what plugins add through ``job_queue_metrics`` (the build counters)."""
    metrics = dict(appstate.jobs().metrics())
    for extra in appstate.hooks().each(hookspecs.job_queue_metrics):
        metrics.update(extra)
    return metrics
