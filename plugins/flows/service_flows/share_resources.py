"""The shares API of flows: ``/api/v1/flows/{flow_id}/shares`` (create, list, delete the canonical share).

Not in the reference (its 1.12 shares API is not shown); shapes are ours, see docs/plugins/flows.md.
"""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from core import db
from core.auth import authenticated, current_actor
from service_flows import schemas, services, shares

shares_blp = Blueprint("flow_shares", __name__, url_prefix="/api/v1/flows", description="Anonymous public sharing")


@shares_blp.route("/<flow_id>/shares", methods=["GET"])
@shares_blp.response(200, schemas.ShareStatusSchema)
@authenticated("user")
def list_shares(flow_id: str):
    """The caller's flow's shares and the grant anonymous callers get (share, legacy grant, or none)."""
    s = db.session()
    return shares.status(s, services.own_flow(s, current_actor().id, flow_id))


@shares_blp.route("/<flow_id>/shares", methods=["POST"])
@shares_blp.arguments(schemas.ShareCreateSchema)
@shares_blp.response(201, schemas.ShareSchema)
@shares_blp.alt_response(200, schema=schemas.ShareSchema, description="the share already existed", success=True)
@authenticated("user")
def create_share(body: dict[str, Any], flow_id: str):
    """Share the caller's flow publicly (``execute`` at ``PUBLIC`` scope only; other levels are 422)."""
    with db.transaction() as s:
        out, created = shares.create(s, services.own_flow(s, current_actor().id, flow_id), body)
    return out, 201 if created else 200


@shares_blp.route("/<flow_id>/shares/<share_id>", methods=["DELETE"])
@shares_blp.response(204)
@authenticated("user")
def delete_share(flow_id: str, share_id: str):
    """Revoke a share: later starts and resumes are refused at once; runs already going continue.

    A legacy grant still set (``access_type`` PUBLIC, an A2A project with ``auth_type`` none) then
    becomes the effective grant: clear it too to revoke fully.
    """
    with db.transaction() as s:
        shares.delete(s, services.own_flow(s, current_actor().id, flow_id), share_id)
    return None
