"""Request and response bodies of the flows and projects endpoints."""

from __future__ import annotations

import re
import uuid
from typing import Any

from marshmallow import EXCLUDE, Schema, ValidationError, fields, pre_load, validate, validates

from core.requests import MAX_PAGE

ENDPOINT_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
ENDPOINT_NAME_MSG = "Endpoint name must only contain letters, numbers, hyphens, and underscores"
FS_PATH_MSG = (
    "fs_path is not supported: this service never writes flows to a path named in a request "
    "(the reference's file-write weakness); leave it null"
)
NAME = validate.Length(min=1, max=255)


def check_endpoint_name(value: str | None) -> None:
    if value is None:
        return
    if len(value) > 255 or not ENDPOINT_NAME.match(value):
        raise ValidationError(ENDPOINT_NAME_MSG)
    try:
        uuid.UUID(value)
    except ValueError:
        return
    raise ValidationError("Endpoint name must not be a UUID (it would be ambiguous with flow ids)")


def check_data(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise ValidationError("Flow data must be an object")
    missing = [k for k in ("nodes", "edges") if k not in value]
    if missing:
        raise ValidationError(f"Flow data must contain {' and '.join(missing)}")
    for key in ("nodes", "edges"):
        if not isinstance(value[key], list):
            raise ValidationError(f"Flow data member {key} must be an array")


class Body(Schema):
    class Meta:
        unknown = EXCLUDE  # the reference ignores extra members (exports carry read-only ones)


class _FlowFields(Body):
    """Members shared by the create and update bodies, with their rules."""

    description = fields.String(allow_none=True)
    data = fields.Raw(
        allow_none=True,
        validate=check_data,
        metadata={"description": "graph: nodes, edges, viewport", "type": "object"},
    )
    endpoint_name = fields.String(
        allow_none=True,
        validate=check_endpoint_name,
        metadata={"description": "letters, digits, - and _; unique per user"},
    )
    folder_id = fields.UUID(allow_none=True)
    workspace_id = fields.UUID(allow_none=True)
    fs_path = fields.String(allow_none=True, metadata={"description": "refused unless null (see docs)"})
    locked = fields.Boolean(allow_none=True)
    mcp_enabled = fields.Boolean(allow_none=True)
    action_name = fields.String(allow_none=True, validate=validate.Length(max=255))
    action_description = fields.String(allow_none=True)
    access_type = fields.String(allow_none=True, validate=validate.OneOf(["PRIVATE", "PUBLIC"]))
    flow_type = fields.String(allow_none=True, validate=validate.OneOf(["workflow", "agent"]))
    a2a_enabled = fields.Boolean(allow_none=True)
    a2a_card_overrides = fields.Dict(allow_none=True)

    @pre_load
    def _blank_endpoint_is_none(self, data: Any, **_: Any) -> Any:
        if isinstance(data, dict) and data.get("endpoint_name") == "":
            data = {**data, "endpoint_name": None}
        return data

    @validates("fs_path")
    def _no_fs_path(self, value: str | None, **_: Any) -> None:
        if value not in (None, ""):
            raise ValidationError(FS_PATH_MSG)


class FlowCreateSchema(_FlowFields):
    """Body of create, batch create, upsert and upload."""

    name = fields.String(required=True, validate=NAME)
    id = fields.UUID(allow_none=True)
    user_id = fields.UUID(allow_none=True, metadata={"description": "ignored: the caller owns the flow"})
    icon = fields.String(allow_none=True, validate=validate.Length(max=255))
    icon_bg_color = fields.String(allow_none=True, validate=validate.Length(max=255))
    gradient = fields.String(allow_none=True, validate=validate.Length(max=255))
    is_component = fields.Boolean(allow_none=True)
    webhook = fields.Boolean(allow_none=True)
    tags = fields.List(fields.String(), allow_none=True)
    updated_at = fields.Raw(allow_none=True, metadata={"description": "ignored"})


class FlowUpdateSchema(_FlowFields):
    """PATCH body: every member optional; null means unchanged."""

    name = fields.String(allow_none=True, validate=NAME)


class FlowBatchSchema(Body):
    flows = fields.List(fields.Nested(FlowCreateSchema), required=True)


class FlowReadSchema(Schema):
    name = fields.String(required=True)
    description = fields.String(allow_none=True)
    icon = fields.String(allow_none=True)
    icon_bg_color = fields.String(allow_none=True)
    gradient = fields.String(allow_none=True)
    data = fields.Raw(allow_none=True, metadata={"type": "object"})
    is_component = fields.Boolean()
    updated_at = fields.DateTime(allow_none=True)
    webhook = fields.Boolean()
    endpoint_name = fields.String(allow_none=True)
    tags = fields.List(fields.String(), allow_none=True)
    locked = fields.Boolean()
    mcp_enabled = fields.Boolean()
    action_name = fields.String(allow_none=True)
    action_description = fields.String(allow_none=True)
    access_type = fields.String()
    flow_type = fields.String()
    a2a_enabled = fields.Boolean()
    a2a_card_overrides = fields.Dict(allow_none=True)
    id = fields.UUID(required=True)
    user_id = fields.UUID(allow_none=True)
    folder_id = fields.UUID(allow_none=True)
    workspace_id = fields.UUID(allow_none=True)
    name_key = fields.String(allow_none=True)
    version_token = fields.UUID(
        allow_none=True, metadata={"description": "Token identifying the version this response carries"}
    )
    shared_role = fields.String(
        metadata={"description": "On a flow shared with the caller (not theirs): viewer, run-only, developer or admin"}
    )


class FlowPublicAccessSchema(Schema):
    can_read = fields.Boolean()
    can_execute = fields.Boolean()


class PublicFlowSchema(FlowReadSchema):
    public_access = fields.Nested(FlowPublicAccessSchema)


class FlowHeaderSchema(Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    folder_id = fields.UUID(allow_none=True)
    is_component = fields.Boolean()
    endpoint_name = fields.String(allow_none=True)
    description = fields.String(allow_none=True)
    data = fields.Raw(allow_none=True, metadata={"description": "only for components", "type": "object"})
    access_type = fields.String()
    tags = fields.List(fields.String(), allow_none=True)
    mcp_enabled = fields.Boolean()
    flow_type = fields.String()
    a2a_enabled = fields.Boolean()
    a2a_card_overrides = fields.Dict(allow_none=True)
    action_name = fields.String(allow_none=True)
    action_description = fields.String(allow_none=True)
    shared_role = fields.String(
        metadata={"description": "On a flow shared with the caller (not theirs): viewer, run-only, developer or admin"}
    )


class FlowPageSchema(Schema):
    items = fields.List(fields.Nested(FlowReadSchema), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    size = fields.Integer(required=True)
    pages = fields.Integer(required=True)


class FlowListQuerySchema(Schema):
    remove_example_flows = fields.Boolean(load_default=False)
    components_only = fields.Boolean(load_default=False)
    get_all = fields.Boolean(load_default=True)
    folder_id = fields.UUID(load_default=None, allow_none=True)
    flow_type = fields.String(load_default=None, validate=validate.OneOf(["workflow", "agent"]))
    header_flows = fields.Boolean(load_default=False)
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=MAX_PAGE))
    size = fields.Integer(load_default=50, validate=validate.Range(min=1, max=100))


class FlowIncludeBlockedQuerySchema(Schema):
    include_blocked = fields.Boolean(load_default=False)


class FlowUploadQuerySchema(Schema):
    folder_id = fields.UUID(load_default=None, allow_none=True)


class FlowMessageSchema(Schema):
    message = fields.String(required=True)


class FlowsDeletedSchema(Schema):
    deleted = fields.Integer(required=True)


class StarterProjectSchema(Schema):
    data = fields.Raw(metadata={"type": "object"})
    is_component = fields.Boolean()
    name = fields.String()
    name_key = fields.String(allow_none=True)
    description = fields.String(allow_none=True)
    endpoint_name = fields.String(allow_none=True)


# --- projects -------------------------------------------------------------------------------------
class ProjectCreateSchema(Body):
    name = fields.String(required=True, validate=NAME)
    description = fields.String(allow_none=True)
    auth_settings = fields.Dict(allow_none=True)
    components_list = fields.List(fields.UUID(), load_default=list, allow_none=True)
    flows_list = fields.List(fields.UUID(), load_default=list, allow_none=True)


class ProjectUpdateSchema(Body):
    name = fields.String(allow_none=True, validate=NAME)
    description = fields.String(allow_none=True)
    parent_id = fields.UUID(allow_none=True)
    components = fields.List(fields.UUID(), allow_none=True)
    flows = fields.List(fields.UUID(), allow_none=True)
    auth_settings = fields.Dict(allow_none=True)


class ProjectSchema(Schema):
    name = fields.String(required=True)
    description = fields.String(allow_none=True)
    auth_settings = fields.Dict(allow_none=True)
    id = fields.UUID(required=True)
    parent_id = fields.UUID(allow_none=True)


class ProjectListItemSchema(ProjectSchema):
    owner_username = fields.String(allow_none=True)
    is_owner = fields.Boolean()
    shared_role = fields.String(
        metadata={"description": "Only on a project shared with the caller: viewer, run-only, developer or admin"}
    )


class ProjectReadQuerySchema(Schema):
    page = fields.Integer(load_default=None, validate=validate.Range(min=1, max=MAX_PAGE))
    size = fields.Integer(load_default=None, validate=validate.Range(min=1, max=100))
    is_component = fields.Boolean(load_default=False)
    is_flow = fields.Boolean(load_default=False)
    search = fields.String(load_default="")


class ProjectWithFlowsSchema(ProjectSchema):
    flows = fields.List(fields.Nested(FlowReadSchema))


class ProjectPageSchema(Schema):
    folder = fields.Nested(ProjectSchema)
    flows = fields.Nested(FlowPageSchema)


def one_of_doc(description: str, *page_members: str, array: bool = True) -> dict[str, Any]:
    """An OpenAPI response whose body is a list of objects or one object (two shapes on one status)."""
    shapes: list[dict[str, Any]] = [{"type": "object", "properties": {m: {} for m in page_members}}]
    if array:
        shapes.insert(0, {"type": "array", "items": {"type": "object"}})
    else:
        shapes.append({"type": "object"})
    return {
        "description": description,
        "content": {"application/json": {"schema": {"anyOf": shapes} if len(shapes) > 1 else shapes[0]}},
    }


# --- shares ---------------------------------------------------------------------------------------------
class ShareCreateSchema(Body):
    """Only ``execute`` at ``PUBLIC`` scope is accepted for flows (checked by ``shares.check_body``)."""

    scope = fields.String(load_default="PUBLIC")
    permission_level = fields.String(load_default="execute")


class ShareSchema(Schema):
    id = fields.String()
    flow_id = fields.String()
    scope = fields.String()
    permission_level = fields.String()
    created_at = fields.String(allow_none=True)


class ShareStatusSchema(Schema):
    flow_id = fields.String()
    shares = fields.List(fields.Nested(ShareSchema))
    effective_grant = fields.String(
        allow_none=True, metadata={"description": "share | access_type | a2a_folder | null"}
    )
    public_url = fields.String(allow_none=True)
