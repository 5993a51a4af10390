"""Routes that exist because two people can edit one flow (the reference 1.13's paths and shapes).

Each answers the flow's owner and anyone it is shared with at the level the route needs (read for the
state and a fork, write for an overwrite, as for ``PATCH``); anyone else gets 404.

* ``GET /api/v1/flows/{id}/version-state``: which version is current and who last changed it
* ``POST /api/v1/flows/{id}/fork``: an inert copy (no endpoint, webhook, MCP or public access),
  optionally with the caller's own graph: the conflict dialog's way out that never fails
* ``POST /api/v1/flows/{id}/overwrite``: write a merged graph over the version the caller reviewed
  (``If-Match`` required: 428 without, 409 when the flow moved again). The replaced graph stays in
  the history (the versions plugin recorded it when it was saved).
"""

from __future__ import annotations

from typing import Any

from flask import request
from flask_smorest import Blueprint
from marshmallow import Schema, fields

from core import db
from core.auth import authenticated, current_actor
from core.errors import ApiError
from core.requests import body_limit
from service_flows import concurrency, governance, schemas, services

conflict_blp = Blueprint("flow_conflicts", __name__, url_prefix="/api/v1/flows", description="Flows")


class FlowVersionStateSchema(Schema):
    version_token = fields.UUID(allow_none=True)
    last_modified_by = fields.UUID(allow_none=True)
    last_modified_by_username = fields.String(allow_none=True)
    updated_at = fields.DateTime(allow_none=True)


class FlowForkSchema(Schema):
    name = fields.String(load_default=None, allow_none=True)
    data = fields.Dict(load_default=None, allow_none=True)


class FlowOverwriteSchema(Schema):
    data = fields.Dict(required=True)


@conflict_blp.route("/<flow_id>/version-state", methods=["GET"])
@conflict_blp.response(200, FlowVersionStateSchema)
@authenticated("user")
def version_state(flow_id):
    """Report which version of a flow is current, and who last changed it."""
    flow = services.own_flow(db.session(), current_actor().id, flow_id, "read")
    return {
        "version_token": flow.version_token,
        "last_modified_by": flow.last_modified_by,
        "last_modified_by_username": concurrency._username(flow.last_modified_by),
        "updated_at": services._aware(flow.updated_at),
    }


@conflict_blp.route("/<flow_id>/fork", methods=["POST"])
@body_limit("flow")
@conflict_blp.arguments(FlowForkSchema)
@conflict_blp.response(201, schemas.FlowReadSchema)
@authenticated("user")
def fork_flow(body: dict[str, Any], flow_id):
    """An inert copy of the flow owned by the caller, with the caller's graph when given."""
    user_id = current_actor().id
    with db.transaction() as s:
        source = services.own_flow(s, user_id, flow_id, "read")
        payload = {
            "name": body.get("name") or f"{source.name} (copy)",
            "description": source.description,
            "data": body["data"] if body.get("data") is not None else source.data,
            "icon": source.icon,
            "icon_bg_color": source.icon_bg_color,
            "gradient": source.gradient,
            "is_component": source.is_component,
            "tags": source.tags,
            "flow_type": source.flow_type,
            "folder_id": source.folder_id,
            "endpoint_name": None,
            "webhook": False,
            "mcp_enabled": False,
            "locked": False,
            "access_type": "PRIVATE",
        }
        out = services.flow_out(services.create_flow(s, user_id, payload, foreign_folder="default"))
    return out, 201, governance.mark_headers(out)


@conflict_blp.route("/<flow_id>/overwrite", methods=["POST"])
@body_limit("flow")
@conflict_blp.arguments(FlowOverwriteSchema)
@conflict_blp.response(200, schemas.FlowReadSchema)
@authenticated("user")
def overwrite_flow(body: dict[str, Any], flow_id):
    """Replace the flow's graph with a merged one, over the version the caller reviewed (``If-Match``)."""
    expected = concurrency.parse_if_match(request.headers.get("If-Match"))
    if expected is None:
        raise ApiError(
            428,
            "Overwriting requires an If-Match header naming the version you reviewed. "
            "Without it this write would silently discard anyone who saved in the meantime.",
        )
    with db.transaction() as s:
        flow = services.own_flow(s, current_actor().id, flow_id, "write")
        out = services.flow_out(
            services.apply_changes(s, flow, {"data": body["data"]}, ("data",), expected_token=expected, autosave=False)
        )
    return out, 200, governance.mark_headers(out)
