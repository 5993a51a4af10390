"""Monitor logic: messages and sessions, shared messages, vertex builds, transactions.

Every query starts from the caller's ``user_id``: rows of other users are
invisible (a missing id and someone else's id are the same 404).
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from core import db, groupcommit
from core.auth import Actor
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
    s: Session, actor: Actor, query: Mapping[str, Any], *, flow_id: uuid.UUID | None = None
) -> list[Message]:
    q = _owned_messages(actor)
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
    return db.page(s, q, Message.id, order, query.get("offset") or 0, query.get("limit"))


def delete_messages(s: Session, actor: Actor, ids: list[uuid.UUID]) -> int:
    result = s.execute(sa.delete(Message).where(Message.user_id == actor.id, Message.id.in_(ids)))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def update_message(
    s: Session, actor: Actor, message_id: str, changes: Mapping[str, Any], *, flow_id: uuid.UUID | None = None
) -> Message:
    key = _uuid(message_id)
    q = _owned_messages(actor).where(Message.id == key)
    if flow_id is not None:
        q = q.where(Message.flow_id == flow_id)
    message = s.scalar(q) if key is not None else None
    if message is None:
        raise ApiError(404, "Message not found")
    for name in UPDATABLE:
        if name in changes and changes[name] is not None:
            setattr(message, name, changes[name])
    if "text" in changes and changes["text"] is not None:
        message.edit = True
        message.properties = {**(message.properties or {}), "edited": True}
    s.flush()
    return message


def rename_session(s: Session, actor: Actor, old: str, new: str, *, flow_id: uuid.UUID | None = None) -> list[Message]:
    if not new:
        raise ApiError(422, [{"loc": ["query", "new_session_id"], "msg": "must not be empty", "type": "value_error"}])
    q = _owned_messages(actor).where(Message.session_id == old)
    if flow_id is not None:
        q = q.where(Message.flow_id == flow_id)
    messages = list(s.scalars(q.order_by(Message.timestamp)))
    if not messages:
        raise ApiError(404, "Session not found")
    for m in messages:
        m.session_id = new
    s.flush()
    return messages


def delete_session(s: Session, actor: Actor, session_id: str, *, flow_id: uuid.UUID | None = None) -> int:
    q = sa.delete(Message).where(Message.user_id == actor.id, Message.session_id == session_id)
    if flow_id is not None:
        q = q.where(Message.flow_id == flow_id)
    return int(s.execute(q).rowcount or 0)  # type: ignore[attr-defined]


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
def vertex_builds(s: Session, actor: Actor, flow_id: uuid.UUID) -> dict[str, list[dict[str, Any]]]:
    rows = s.scalars(
        sa.select(VertexBuild)
        .where(VertexBuild.user_id == actor.id, VertexBuild.flow_id == flow_id)
        .order_by(VertexBuild.timestamp)
    )
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


def delete_vertex_builds(s: Session, actor: Actor, flow_id: uuid.UUID) -> None:
    s.execute(sa.delete(VertexBuild).where(VertexBuild.user_id == actor.id, VertexBuild.flow_id == flow_id))


def transactions(s: Session, actor: Actor, flow_id: uuid.UUID, page: int, size: int) -> dict[str, Any]:
    base = sa.select(Transaction).where(Transaction.user_id == actor.id, Transaction.flow_id == flow_id)
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
