"""Record a change in the audit log: one call by the plugin that owns the changed thing.

``record("variable:create", "variable", var.id, name=var.name, user_id=owner)`` builds a
:class:`core.contracts.AuditEntry` (who from the request's actor, a request id, the time) and
notifies the core's ``on_audit`` hook; the plugin that keeps the log queues it and writes it off
the request's critical path (docs/versions.md). A change made inside the request session's open
transaction is told when that transaction commits, and never when it rolls back. Without such a
plugin nothing happens. ``details`` carries names and ids only: never put a secret value in it.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from typing import Any

from flask import g, has_request_context

from core import appstate
from core.contracts import AuditEntry

__all__ = ["record"]


def _actor() -> tuple[str, str | None]:
    if not has_request_context():
        return "system", None
    actor = g.get("actor")
    if actor is None:
        return "unknown", None
    if getattr(actor, "api_key_id", None) is not None or getattr(actor, "via", "") == "api_key":
        return "api_key", str(actor.api_key_id) if actor.api_key_id else str(actor.id)
    return ("user" if actor.kind == "user" else str(actor.kind)), str(actor.id)


def _request_id() -> str:
    if not has_request_context():
        return str(uuid.uuid4())
    rid = g.get("_audit_request_id")
    if rid is None:
        rid = g._audit_request_id = str(uuid.uuid4())
    return str(rid)


def record(
    action: str,
    resource_type: str,
    resource_id: Any,
    *,
    name: str | None = None,
    user_id: Any = None,
    operation: str | None = None,
    details: Mapping[str, Any] | None = None,
    result: str = "succeeded",
    error_code: str | None = None,
) -> None:
    """Notify ``on_audit`` of one change (``operation`` defaults from the action's verb)."""
    verb = action.rsplit(":", 1)[-1]
    if operation is None:
        operation = {"create": "create", "delete": "delete"}.get(verb, "patch")
    actor_type, actor_id = _actor()
    if user_id is None and has_request_context() and g.get("actor") is not None:
        user_id = g.actor.id
    entry = AuditEntry(
        id=str(uuid.uuid4()),
        timestamp=dt.datetime.now(dt.UTC).isoformat(timespec="microseconds"),
        action=action,
        operation=operation,
        resource_type=resource_type,
        resource_id=None if resource_id is None else str(resource_id),
        resource_name=name,
        user_id=None if user_id is None else str(user_id),
        actor_type=actor_type,
        actor_id=actor_id,
        request_id=_request_id(),
        result=result,
        error_code=error_code,
        details=dict(details or {}),
    )
    try:
        hooks = appstate.hooks()
    except RuntimeError:  # no application (a script): nothing keeps a log
        return
    pending = _open_transaction_entries()
    if pending is not None:  # told once the change commits; a rollback drops it (it never happened)
        pending.append(entry)
        return
    hooks.on_audit(entry=entry)


_PENDING = "service.audit.pending"


def _open_transaction_entries() -> list[AuditEntry] | None:
    """The entries waiting for this thread's request session to commit (None: no transaction is open)."""
    from core import db

    try:
        s = db.session()
    except RuntimeError:  # outside an application context
        return None
    if not s.in_transaction():
        return None
    _listen()
    pending: list[AuditEntry] = s.info.setdefault(_PENDING, [])
    return pending


_listening = False


def _listen() -> None:
    """Hook the session's commit and rollback once per process (SQLAlchemy session events)."""
    global _listening
    if _listening:
        return
    import sqlalchemy as sa
    from sqlalchemy.orm import Session

    sa.event.listen(Session, "after_commit", _committed)
    sa.event.listen(Session, "after_rollback", _rolled_back)
    _listening = True


def _committed(session: Any) -> None:
    entries = session.info.pop(_PENDING, None)
    if not entries:
        return
    try:
        hooks = appstate.hooks()
    except RuntimeError:
        return
    for entry in entries:
        hooks.on_audit(entry=entry)


def _rolled_back(session: Any) -> None:
    session.info.pop(_PENDING, None)
