"""Safe concurrent editing: the ``version_token`` precondition of a flow's graph writes (issue 31).

Every write that changes a flow's ``data`` rotates ``Flow.version_token``. A client sends the token
it last read in ``If-Match``; when the stored token moved on, the write is refused with 409 and a
body naming both sides (the reference 1.13's ``flow_version_conflict`` members, plus ``current``: the
stored flow as it is now, and ``submitted``: the graph that was refused), so nothing is lost. Without
the header a write behaves as before. Only a graph change takes the token: a rename leaves it alone.

The claim is one conditional ``UPDATE ... WHERE version_token = :expected``, indivisible on SQLite and
PostgreSQL alike: of two writers holding the same token exactly one moves the row on.
"""

from __future__ import annotations

import uuid
from typing import Any, cast

import sqlalchemy as sa
from flask import g, has_request_context
from sqlalchemy.orm import Session

from core import appstate
from core.errors import ApiError
from service_flows.models import Flow

CONFLICT_CODE = "flow_version_conflict"
CONFLICT_MESSAGE = "This flow was changed by someone else after you loaded it."


def parse_if_match(raw: str | None) -> uuid.UUID | None:
    """The token of an ``If-Match`` header (quotes and ``W/`` accepted), None when absent; 400 when malformed."""
    if raw is None:
        return None
    token = raw.strip()
    if token.startswith("W/"):
        token = token[2:].strip()
    try:
        return uuid.UUID(token.strip('"'))
    except ValueError:
        raise ApiError(400, "Invalid If-Match header: expected a version token") from None


def _username(user_id: uuid.UUID | None) -> str | None:
    """The last writer's username (the core's ``user_names`` hook), None when unknown or deleted.

    The writer could save this flow, so the caller (its owner, or a member it is shared with) may see who.
    """
    if user_id is None:
        return None
    actor = g.get("actor") if has_request_context() else None
    if actor is not None and actor.id == user_id and actor.username:
        return str(actor.username)
    return appstate.hooks().user_names(user_ids=[str(user_id)]).get(str(user_id))


def conflict(s: Session, flow: Flow, expected: uuid.UUID, submitted: Any) -> ApiError:
    """The 409 for a stale ``expected`` token: the stored flow re-read (the winner's write) and the refused graph."""
    from service_flows import schemas, services

    s.refresh(flow)
    current = schemas.FlowReadSchema().dump(services.flow_out(flow))
    detail = {
        "code": CONFLICT_CODE,
        "message": CONFLICT_MESSAGE,
        "flow_id": str(flow.id),
        "expected_version_token": str(expected),
        "current_version_token": str(flow.version_token) if flow.version_token else None,
        "modified_by": {
            "id": str(flow.last_modified_by) if flow.last_modified_by else None,
            "username": _username(flow.last_modified_by),
        },
        "modified_at": current.get("updated_at"),
        "current": current,
        "submitted": submitted,
    }
    return ApiError(409, detail)


def claim(s: Session, flow: Flow, expected: uuid.UUID | None, author: uuid.UUID | None, submitted: Any) -> None:
    """Take the write turn for a graph change: rotate the token (atomically when ``expected`` is given)."""
    new = uuid.uuid4()
    if expected is not None and flow.version_token is not None:
        if flow.version_token != expected:
            raise conflict(s, flow, expected, submitted)
        result = cast(
            "sa.CursorResult[Any]",
            s.execute(
                sa.update(Flow)
                .where(Flow.id == flow.id, Flow.version_token == expected)
                .values(version_token=new)
                .execution_options(synchronize_session=False)
            ),
        )
        if result.rowcount == 0:
            raise conflict(s, flow, expected, submitted)
    flow.version_token = new
    flow.last_modified_by = author
