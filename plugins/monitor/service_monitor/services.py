"""Monitor logic: messages and sessions, shared messages, vertex builds, transactions.

Every query starts from the caller's ``user_id``: rows of other users are
invisible (a missing id and someone else's id are the same 404).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core import db, groupcommit
from core.auth import Actor, flow_access
from core.contracts import MessageRecord
from core.db import utcnow
from core.errors import ApiError
from service_monitor.models import Message, Transaction, VertexBuild

MAX_SESSIONS_PER_DELETE = 500
ORDERABLE = {"timestamp", "sender", "sender_name", "session_id", "text", "id"}
UPDATABLE = (
    "category",
    "content_blocks",
    "context_id",
    "edit",
    "error",
    "files",
    "properties",
    "sender",
    "sender_name",
    "session_id",
    "session_metadata",
    "text",
)


def _uuid(value: Any) -> uuid.UUID | None:
    if value is None or value == "":
        return None
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        return None


# --- storing (hook side) ---------------------------------------------------------------------------
def store_messages(engine: sa.Engine, user_id: str, messages: Iterable[MessageRecord]) -> None:
    """One ``INSERT ... ON CONFLICT (id) DO UPDATE`` for all messages of a run.

    A message id seen again (the final text of a streamed answer) updates its
    row; the owner never changes. No SELECT first, no ORM unit of work: this
    runs inside every run request.
    """
    owner = uuid.UUID(str(user_id))
    rows = []
    previous = None
    for m in messages:
        stamp = _timestamp(m.timestamp)
        if previous is not None and stamp <= previous:
            # a run's messages keep the order they were produced in, even within one microsecond
            stamp = previous + dt.timedelta(microseconds=1)
        previous = stamp
        rows.append(
            dict(
                id=_uuid(m.id) or db.new_id(),
                user_id=owner,
                flow_id=_uuid(m.flow_id),
                run_id=_uuid(m.run_id),
                timestamp=stamp,
                sender=m.sender,
                sender_name=m.sender_name,
                session_id=m.session_id,
                context_id=m.context_id,
                text=m.text,
                category=m.category,
                files=list(m.files),
                edit=m.edit,
                error=m.error,
                duration=m.duration,
                properties=dict(m.properties),
                content_blocks=list(m.content_blocks),
                session_metadata=dict(m.session_metadata),
            )
        )
    rows = list({row["id"]: row for row in rows}.values())  # one row per id: the last version wins
    if not rows:
        return
    # A Core (table) statement on the driver's connection (core.db.Prepared): an ORM-entity insert
    # through ``Session.execute`` took the ORM bulk-persistence path (0.3 ms more per run), and the
    # session's execution layer cost several times the driver's work. Written with the messages of the
    # runs that end now, in one transaction (core.groupcommit; on the request session's connection,
    # committed, when that has a transaction open).
    groupcommit.submit(engine, [(_upsert(engine.dialect.name), rows)])


_upserts: dict[str, db.Prepared] = {}
MESSAGE_COLUMNS = (
    "id", "user_id", "flow_id", "run_id", "timestamp", "sender", "sender_name", "session_id", "context_id",
    "text", "category", "files", "edit", "error", "duration", "properties", "content_blocks", "session_metadata",
)  # fmt: skip


def _upsert(dialect: str) -> db.Prepared:
    """The message upsert for ``dialect``, built once (building it cost more than running it)."""
    statement = _upserts.get(dialect)
    if statement is None:
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
        table = cast(sa.Table, Message.__table__)
        base = insert(table)
        updatable = [c.name for c in table.columns if c.name not in ("id", "user_id")]
        statement = _upserts[dialect] = db.Prepared(
            base.on_conflict_do_update(
                index_elements=[table.c.id],
                set_={name: base.excluded[name] for name in updatable},
                where=table.c.user_id == base.excluded.user_id,
            ),
            column_keys=list(MESSAGE_COLUMNS),
        )
    return statement


def _timestamp(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, str) and value:
        text = value.replace(" UTC", "+00:00").replace("Z", "+00:00")
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            pass
    return utcnow()


def history(s: Session, user_id: str, flow_id: str | None, session_id: str, limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` messages of a session, oldest first, as message dicts."""
    return [message_dict(m) for m in _history(s, user_id, flow_id, session_id, limit)]


def history_records(s: Session, user_id: str, flow_id: str | None, session_id: str, limit: int) -> list[MessageRecord]:
    """:func:`history` as the ``message_history`` hook answers it."""
    return [message_record(m) for m in _history(s, user_id, flow_id, session_id, limit)]


def _history(s: Session, user_id: str, flow_id: str | None, session_id: str, limit: int) -> list[Message]:
    query = sa.select(Message).where(Message.user_id == uuid.UUID(str(user_id)), Message.session_id == session_id)
    flow = _uuid(flow_id)
    if flow is not None:
        query = query.where(Message.flow_id == flow)
    rows = list(s.scalars(query.order_by(Message.timestamp.desc(), Message.id.desc()).limit(max(limit, 0))))
    return list(reversed(rows))


def message_record(m: Message) -> MessageRecord:
    """A stored message as the ``message_history`` hook answers it (the values of :func:`message_dict`)."""
    return MessageRecord(
        id=m.id,
        flow_id=m.flow_id,
        run_id=m.run_id,
        timestamp=m.timestamp,
        sender=m.sender,
        sender_name=m.sender_name,
        session_id=m.session_id,
        context_id=m.context_id,
        text=m.text,
        files=tuple(m.files or ()),
        edit=m.edit,
        error=m.error,
        duration=m.duration,
        properties=m.properties or {},
        category=m.category,
        content_blocks=tuple(m.content_blocks or ()),
        session_metadata=m.session_metadata or {},
    )


# --- reading and editing messages --------------------------------------------------------------------------
def message_dict(m: Message) -> dict[str, Any]:
    return {
        "id": m.id,
        "flow_id": m.flow_id,
        "run_id": m.run_id,
        "timestamp": m.timestamp,
        "sender": m.sender,
        "sender_name": m.sender_name,
        "session_id": m.session_id,
        "context_id": m.context_id,
        "text": m.text,
        "files": m.files or [],
        "edit": m.edit,
        "error": m.error,
        "duration": m.duration,
        "properties": m.properties or {},
        "category": m.category,
        "content_blocks": m.content_blocks or [],
        "session_metadata": m.session_metadata or {},
    }


def _owned_messages(actor: Actor) -> sa.Select[Any]:
    return sa.select(Message).where(Message.user_id == actor.id)


def list_messages(
    s: Session, actor: Actor, query: Mapping[str, Any], *, flow_id: uuid.UUID | None = None, everyone: bool = False
) -> list[Message]:
    """The caller's messages in the query's filter and order: a page by ``offset``, or after ``cursor``
    (:func:`next_cursor` of the previous page's last message: keyset pagination, every page the same cost); with
    ``everyone`` (a flow shared with the caller, ``core.auth.foreign_flow``) the messages of every user's runs of
    that flow: the flow's log, as its team sees it."""
    q = sa.select(Message) if everyone else _owned_messages(actor)
    flow = flow_id if flow_id is not None else _uuid(query.get("flow_id"))
    if query.get("flow_id") is not None and flow is None:
        return []
    if flow is not None:
        q = q.where(Message.flow_id == flow)
    for name in ("session_id", "sender", "sender_name"):
        if query.get(name) is not None:
            q = q.where(getattr(Message, name) == query[name])
    order_by = query.get("order_by") or "timestamp"
    if order_by not in ORDERABLE:
        raise ApiError(
            422, [{"loc": ["query", "order_by"], "msg": f"must be one of {sorted(ORDERABLE)}", "type": "value_error"}]
        )
    column = getattr(Message, order_by)
    # newest first is oldest first reversed, ties included: one index serves both (read backwards)
    descending = str(query.get("order") or "ASC").upper() == "DESC"
    order = (column.desc(), Message.id.desc()) if descending else (column.asc(), Message.id)
    if query.get("cursor"):
        if query.get("offset"):
            raise ApiError(
                422, [{"loc": ["query", "offset"], "msg": "give either offset or cursor", "type": "value_error"}]
            )
        value, after = _decode_cursor(query["cursor"], order_by, descending)
        # (column, id) after the cursor's, written so that the index's range starts at the cursor's value
        # (``column >= v``) and only its ties are filtered (a row-value comparison is not a range on PostgreSQL
        # with a DESC order, nor on older SQLite)
        if descending:
            q = q.where(column <= value, sa.or_(column < value, Message.id < after))
        else:
            q = q.where(column >= value, sa.or_(column > value, Message.id > after))
        return list(s.scalars(q.order_by(*order).limit(query.get("limit"))))
    return db.page(s, q, Message.id, order, query.get("offset") or 0, query.get("limit"))


def next_cursor(messages: list[Message], query: Mapping[str, Any]) -> str | None:
    """The cursor of the page after ``messages`` (None unless the page is full: there may be more)."""
    limit = query.get("limit")
    if not limit or len(messages) < limit:
        return None
    last = messages[-1]
    order_by = query.get("order_by") or "timestamp"
    value = getattr(last, order_by)
    if value is None:  # NULLs do not compare: such an order pages by offset only
        return None
    if isinstance(value, dt.datetime):
        value = value.isoformat()
    elif isinstance(value, uuid.UUID):
        value = value.hex
    descending = str(query.get("order") or "ASC").upper() == "DESC"
    raw = json.dumps([order_by, "d" if descending else "a", value, last.id.hex], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str, order_by: str, descending: bool) -> tuple[Any, uuid.UUID]:
    bad = ApiError(
        422,
        [{"loc": ["query", "cursor"], "msg": "not a cursor of this list and order", "type": "value_error"}],
    )
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        name, direction, value, after = json.loads(raw)
        if name != order_by or direction != ("d" if descending else "a"):
            raise bad
        key = uuid.UUID(hex=after)
        if order_by == "timestamp":
            value = dt.datetime.fromisoformat(value)
        elif order_by == "id":
            value = uuid.UUID(hex=value)
        elif not isinstance(value, str):
            raise bad
    except ApiError:
        raise
    except Exception:
        raise bad from None
    return value, key


MESSAGE_NOT_FOUND = "Message not found"


def delete_messages(s: Session, actor: Actor, ids: list[uuid.UUID]) -> int:
    """Delete the caller's messages among ``ids``, and other users' messages of flows the caller may ``delete``
    (a shared flow's team log; the owner of a flow, its members' runs). An id that is nobody's, or the message
    of a flow the caller may not even read, is skipped (no existence leak, as the reference answers 204 for
    unknown ids); a flow they may read but not ``delete`` refuses the whole request (403) before anything goes."""
    unique = sorted(set(ids))
    if not unique:
        return 0
    others = s.execute(
        sa.select(Message.id, Message.flow_id).where(Message.id.in_(unique), Message.user_id != actor.id)
    ).all()
    allowed: list[uuid.UUID] = []
    by_flow: dict[uuid.UUID | None, list[uuid.UUID]] = {}
    for message_id, flow_id in others:
        by_flow.setdefault(flow_id, []).append(message_id)
    for flow_id, message_ids in by_flow.items():
        if flow_id is None:
            continue
        try:
            flow_access(actor, flow_id, "delete", not_found=MESSAGE_NOT_FOUND)
        except ApiError as refused:
            if refused.status == 404:
                continue
            raise
        allowed.extend(message_ids)
    mine = Message.user_id == actor.id
    where = sa.or_(mine, Message.id.in_(allowed)) if allowed else mine
    result = s.execute(sa.delete(Message).where(where, Message.id.in_(unique)))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def update_message(
    s: Session, actor: Actor, message_id: str, changes: Mapping[str, Any], *, flow_id: uuid.UUID | None = None
) -> Message:
    """Edit the caller's message; without ``flow_id`` (not the shared-conversation route) also another user's
    message of a flow the caller may ``write`` (:func:`core.auth.flow_access`: 404 when they may not read the
    flow, 403 when they may only read it)."""
    key = _uuid(message_id)
    q = _owned_messages(actor).where(Message.id == key)
    if flow_id is not None:
        q = q.where(Message.flow_id == flow_id)
    message = s.scalar(q) if key is not None else None
    if message is None and key is not None and flow_id is None:
        message = s.scalar(sa.select(Message).where(Message.id == key))
        if message is not None and message.flow_id is None:
            message = None
        if message is not None:
            flow_access(actor, message.flow_id, "write", not_found=MESSAGE_NOT_FOUND)
    if message is None:
        raise ApiError(404, MESSAGE_NOT_FOUND)
    for name in UPDATABLE:
        if name in changes and changes[name] is not None:
            setattr(message, name, changes[name])
    if "text" in changes and changes["text"] is not None:
        message.edit = True
        message.properties = {**(message.properties or {}), "edited": True}
    s.flush()
    return message


@dataclass(frozen=True)
class SessionScope:
    """A session route's ``flow_id``: that flow's messages only; ``everyone``: every user's messages of it (the
    caller owns the flow or may change it, checked by the route), else the caller's."""

    flow_id: uuid.UUID
    everyone: bool


def _session_where(actor: Actor, session_id: str, flow_id: uuid.UUID | None, scope: SessionScope | None) -> list[Any]:
    where: list[Any] = [Message.session_id == session_id]
    if scope is not None:
        where.append(Message.flow_id == scope.flow_id)
        if not scope.everyone:
            where.append(Message.user_id == actor.id)
    else:
        where.append(Message.user_id == actor.id)
        if flow_id is not None:
            where.append(Message.flow_id == flow_id)
    return where


def rename_session(
    s: Session,
    actor: Actor,
    old: str,
    new: str,
    *,
    flow_id: uuid.UUID | None = None,
    scope: SessionScope | None = None,
) -> list[Message]:
    """Move the caller's messages of session ``old`` (of ``flow_id``: a shared conversation's) to ``new``; with
    ``scope`` the session's messages of that flow only (every user's when ``scope.everyone``). 404 when none."""
    if not new:
        raise ApiError(422, [{"loc": ["query", "new_session_id"], "msg": "must not be empty", "type": "value_error"}])
    where = _session_where(actor, old, flow_id, scope)
    messages = list(s.scalars(sa.select(Message).where(*where).order_by(Message.timestamp, Message.id)))
    if not messages:
        raise ApiError(404, "Session not found")
    for m in messages:
        m.session_id = new
    s.flush()
    return messages


def delete_session(
    s: Session, actor: Actor, session_id: str, *, flow_id: uuid.UUID | None = None, scope: SessionScope | None = None
) -> int:
    """Delete the caller's messages of a session (see :func:`rename_session` for ``flow_id`` and ``scope``)."""
    where = _session_where(actor, session_id, flow_id, scope)
    return int(s.execute(sa.delete(Message).where(*where)).rowcount or 0)  # type: ignore[attr-defined]


def delete_sessions(s: Session, actor: Actor, session_ids: list[str]) -> int:
    if len(session_ids) > MAX_SESSIONS_PER_DELETE:
        raise ApiError(400, f"At most {MAX_SESSIONS_PER_DELETE} session ids can be deleted at once")
    unique = sorted(set(session_ids))
    if not unique:
        return 0
    present = set(
        s.scalars(
            sa.select(Message.session_id).distinct().where(Message.user_id == actor.id, Message.session_id.in_(unique))
        )
    )
    s.execute(sa.delete(Message).where(Message.user_id == actor.id, Message.session_id.in_(unique)))
    return len(present)


def sessions(s: Session, actor: Actor, flow_id: uuid.UUID | None, *, any_flow: bool = False) -> list[str]:
    q = sa.select(Message.session_id, sa.func.max(Message.timestamp).label("last")).where(Message.user_id == actor.id)
    if flow_id is not None:
        q = q.where(Message.flow_id == flow_id)
    elif not any_flow:
        return []
    q = q.group_by(Message.session_id).order_by(sa.desc("last"))
    return [row[0] for row in s.execute(q)]


# --- vertex builds and transactions -------------------------------------------------------------------
def vertex_builds(
    s: Session, actor: Actor, flow_id: uuid.UUID, *, everyone: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """The caller's vertex builds of ``flow_id``; with ``everyone`` (a flow shared with the caller) every user's."""
    query = sa.select(VertexBuild).where(VertexBuild.flow_id == flow_id)
    if not everyone:
        query = query.where(VertexBuild.user_id == actor.id)
    rows = s.scalars(query.order_by(VertexBuild.timestamp))
    grouped: dict[str, list[dict[str, Any]]] = {}
    for b in rows:
        grouped.setdefault(b.id, []).append(
            {
                "id": b.id,
                "build_id": b.build_id,
                "flow_id": b.flow_id,
                "job_id": b.job_id,
                "timestamp": b.timestamp,
                "valid": b.valid,
                "data": b.data,
                "artifacts": b.artifacts,
                "params": b.params,
            }
        )
    return grouped


def delete_vertex_builds(s: Session, actor: Actor, flow_id: uuid.UUID, *, everyone: bool = False) -> None:
    """Forget the caller's vertex builds of ``flow_id``; with ``everyone`` (a shared flow) every user's."""
    where = [VertexBuild.flow_id == flow_id] + ([] if everyone else [VertexBuild.user_id == actor.id])
    s.execute(sa.delete(VertexBuild).where(*where))


def transactions(
    s: Session, actor: Actor, flow_id: uuid.UUID, page: int, size: int, *, everyone: bool = False
) -> dict[str, Any]:
    """A page of the caller's transactions of ``flow_id``; with ``everyone`` (a shared flow) every user's."""
    base = sa.select(Transaction).where(Transaction.flow_id == flow_id)
    if not everyone:
        base = base.where(Transaction.user_id == actor.id)
    total = s.scalar(sa.select(sa.func.count()).select_from(base.subquery())) or 0
    order = (Transaction.timestamp.desc(), Transaction.id.desc())  # the index read backwards
    items = db.page(s, base, Transaction.id, order, (page - 1) * size, size)
    return {
        "items": items,
        "total": total,
        "page": page,
        "size": size,
        "pages": math.ceil(total / size) if total else 0,
    }


def delete_user_rows(s: Session, user_id: str) -> None:
    owner = uuid.UUID(str(user_id))
    for model in (Message, VertexBuild, Transaction):
        s.execute(sa.delete(model).where(model.user_id == owner))
