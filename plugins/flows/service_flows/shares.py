"""Anonymous public sharing: canonical shares, the effective grant, and the authorization gate.

The effective anonymous grant of a flow is decided here and nowhere else: :func:`public_grant`
backs the ``find_flow(public=True)`` hook (the public build, ``POST /api/v2/workflows/public``,
resumes of public runs) and the sanitized public read. In the order of the spec's rule 2:

1. a canonical share (``flows_share``: ``execute`` at ``PUBLIC`` scope), else
2. a legacy grant: the flow's ``access_type`` is ``PUBLIC``, or it is an A2A-enabled flow in a
   project whose ``auth_settings.auth_type`` is ``none``.

Deleting the share falls back to a legacy grant still set (the spec's state table); clearing both
revokes. Every start and resume reads the database, so revocation holds at once on every process;
runs already going continue.

With ``SERVICE_AUTHZ_ENABLED=true`` a grant also needs the authorization plugins' allow for the
public principal (``permission_allowed`` with action :data:`PUBLIC_ACTION`): the default
``authz`` plugin denies; a deployment replaces it (see ``docs/plugins/authz.md``).
"""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from flask import has_request_context, request
from sqlalchemy.orm import Session

from core import appstate, audit
from core.auth import allowed
from core.errors import ApiError, ValidationFailed
from service_flows.models import Flow, Folder, Share

PUBLIC_ACTION = "flows.public_access"
PUBLIC_NOT_AUTHORIZED = "Public access to this flow is not authorized on this deployment"

#: what the shares API accepts for flows
SCOPES = ("PUBLIC",)
LEVELS = ("execute",)


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None


def grant_of(share: bool, access_type: str | None, a2a_enabled: bool | None, auth_settings: Any) -> str | None:
    """The effective grant from its parts: ``share``, ``access_type``, ``a2a_folder`` or None."""
    if share:
        return "share"
    if access_type == "PUBLIC":
        return "access_type"
    auth_type = auth_settings.get("auth_type") if isinstance(auth_settings, dict) else None
    if a2a_enabled and auth_type == "none":
        return "a2a_folder"
    return None


def public_grant(s: Session, flow_id: Any) -> tuple[str, dict[str, Any]] | None:
    """``(grant, flow row)`` when the flow is anonymously executable, else None. One query.

    Raises 403 when a grant exists but authorization is on and no plugin allows public principals.
    """
    key = _uuid(flow_id)
    if key is None:
        return None
    if has_request_context():
        from flask import current_app

        from service_flows.cleanup import SCHEDULER

        SCHEDULER.ensure(current_app._get_current_object())  # type: ignore[attr-defined]
    shared = sa.exists().where(Share.flow_id == Flow.id, Share.scope == "PUBLIC").label("shared")
    query = (
        sa.select(Flow.__table__, shared, Folder.auth_settings.label("folder_auth"))
        .outerjoin(Folder, Folder.id == Flow.folder_id)
        .where(Flow.id == key)
    )
    row = s.connection().execute(query).mappings().first()
    if row is None:
        return None
    grant = grant_of(bool(row["shared"]), row["access_type"], row["a2a_enabled"], row["folder_auth"])
    if grant is None:
        return None
    authorize(str(key), grant)
    return grant, dict(row)


def authorize(flow_id: str, grant: str) -> None:
    """With ``SERVICE_AUTHZ_ENABLED``: ask the authorization plugins about the public principal (403)."""
    if not appstate.settings().authz_enabled:
        return
    resource = {
        "flow_id": flow_id,
        "grant": grant,
        # the request's host is a lookup key for a deployment allowlist, never a tenant by itself
        "host": request.host if has_request_context() else None,
    }
    if not allowed(None, PUBLIC_ACTION, resource):
        raise ApiError(403, PUBLIC_NOT_AUTHORIZED)


# --- the shares API -----------------------------------------------------------------------------------
def _share_out(share: Share) -> dict[str, Any]:
    return {
        "id": str(share.id),
        "flow_id": str(share.flow_id),
        "scope": share.scope,
        "permission_level": share.permission_level,
        "created_at": share.created_at.isoformat() if share.created_at else None,
    }


def check_body(body: dict[str, Any]) -> None:
    """Flows accept ``execute`` at ``PUBLIC`` scope only (read, write, admin: 422)."""
    errors = []
    if body.get("scope", "PUBLIC") not in SCOPES:
        errors.append(
            {"loc": ["body", "scope"], "msg": "Flows can only be shared at PUBLIC scope", "type": "literal_error"}
        )
    if body.get("permission_level", "execute") not in LEVELS:
        errors.append(
            {
                "loc": ["body", "permission_level"],
                "msg": "Flows can only be shared with permission_level 'execute'",
                "type": "literal_error",
            }
        )
    if errors:
        raise ValidationFailed(errors)


def status(s: Session, flow: Flow) -> dict[str, Any]:
    """The flow's shares and the grant anonymous callers get (``effective_grant``)."""
    shares = list(s.scalars(sa.select(Share).where(Share.flow_id == flow.id).order_by(Share.created_at)))
    folder = s.get(Folder, flow.folder_id) if flow.folder_id else None
    grant = grant_of(bool(shares), flow.access_type, flow.a2a_enabled, folder.auth_settings if folder else None)
    return {
        "flow_id": str(flow.id),
        "shares": [_share_out(share) for share in shares],
        "effective_grant": grant,
        "public_url": f"/playground/{flow.id}" if grant else None,
    }


def create(s: Session, flow: Flow, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The flow's canonical PUBLIC share (created when missing; True when it was)."""
    check_body(body)
    existing = s.scalar(sa.select(Share).where(Share.flow_id == flow.id, Share.scope == "PUBLIC"))
    if existing is not None:
        return _share_out(existing), False
    share = Share(flow_id=flow.id, user_id=flow.user_id, scope="PUBLIC", permission_level="execute")
    s.add(share)
    s.flush()
    audit.record("share:create", "share", share.id, name=flow.name, user_id=flow.user_id,
                 details={"flow_id": str(flow.id), "scope": "PUBLIC", "permission_level": "execute"})  # fmt: skip
    return _share_out(share), True


def delete(s: Session, flow: Flow, share_id: Any) -> None:
    key = _uuid(share_id)
    found = s.scalar(sa.select(Share).where(Share.id == key, Share.flow_id == flow.id)) if key else None
    if found is None:
        raise ApiError(404, "Share not found")
    s.delete(found)
    audit.record("share:delete", "share", found.id, name=flow.name, user_id=flow.user_id,
                 details={"flow_id": str(flow.id)})  # fmt: skip


def delete_for_flows(s: Session, flow_ids: list[uuid.UUID]) -> None:
    if flow_ids:
        s.execute(sa.delete(Share).where(Share.flow_id.in_(flow_ids)))


def follow_owner(s: Session, flow_ids: list[uuid.UUID], user_id: uuid.UUID) -> None:
    """The flows changed owner (moved into a project shared with the mover): their shares are the new owner's."""
    if flow_ids:
        s.execute(sa.update(Share).where(Share.flow_id.in_(flow_ids)).values(user_id=user_id))


def delete_for_user(s: Session, user_id: uuid.UUID) -> None:
    s.execute(sa.delete(Share).where(Share.user_id == user_id))
