"""Request bodies of the MCP settings operations (marshmallow; extra keys ignored, as the reference does)."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate


class _Lenient(Schema):
    class Meta:
        unknown = EXCLUDE


class MCPToolSettingSchema(_Lenient):
    id = fields.UUID(required=True)
    mcp_enabled = fields.Boolean(load_default=False)
    action_name = fields.String(allow_none=True, validate=validate.Length(max=255))
    action_description = fields.String(allow_none=True)
    name = fields.String(allow_none=True)
    description = fields.String(allow_none=True)


class MCPAuthSettingsSchema(_Lenient):
    auth_type = fields.String(load_default="none", validate=validate.OneOf(["none", "apikey", "oauth"]))
    oauth_host = fields.String(allow_none=True)
    oauth_port = fields.String(allow_none=True)
    oauth_server_url = fields.String(allow_none=True)
    oauth_callback_path = fields.String(allow_none=True)
    oauth_callback_url = fields.String(allow_none=True)
    oauth_client_id = fields.String(allow_none=True)
    oauth_client_secret = fields.String(allow_none=True, load_only=True)
    oauth_auth_url = fields.String(allow_none=True)
    oauth_token_url = fields.String(allow_none=True)
    oauth_mcp_scope = fields.String(allow_none=True)
    oauth_provider_scope = fields.String(allow_none=True)


class MCPProjectUpdateRequestSchema(_Lenient):
    settings = fields.List(fields.Nested(MCPToolSettingSchema), required=True)
    auth_settings = fields.Nested(MCPAuthSettingsSchema, allow_none=True, load_default=None)


class MCPListToolsQuerySchema(_Lenient):
    mcp_enabled = fields.Boolean(load_default=True)


class MCPInstallRequestSchema(_Lenient):
    client = fields.String(required=True)
    transport = fields.String(allow_none=True, load_default=None)


# --- response shapes (documentation: the views answer plain dicts in exactly these shapes) -------------------
class MCPToolSchema(Schema):
    """A flow of the project as an MCP tool."""

    id = fields.String()
    mcp_enabled = fields.Boolean(allow_none=True)
    action_name = fields.String(allow_none=True)
    action_description = fields.String(allow_none=True)
    name = fields.String(allow_none=True)
    description = fields.String(allow_none=True)


class MCPProjectToolsSchema(Schema):
    tools = fields.List(fields.Nested(MCPToolSchema))
    auth_settings = fields.Dict(allow_none=True, metadata={"description": "auth_type and OAuth settings, no secret"})
    server_name = fields.String()


class MCPSettingsUpdatedSchema(Schema):
    message = fields.String(required=True)
    error_message = fields.String(metadata={"description": "set when OAuth is chosen (no MCP Composer here)"})


class MCPComposerUrlSchema(Schema):
    project_id = fields.String()
    uses_composer = fields.Boolean()
    streamable_http_url = fields.String()
    legacy_sse_url = fields.String()
    error_message = fields.String(allow_none=True)


class MCPInstallResultSchema(Schema):
    message = fields.String()
    client = fields.String()
    transport = fields.String()
    config = fields.Dict(metadata={"description": "the JSON the client's config file takes (API key as placeholder)"})
    written = fields.Boolean()


class MCPInstalledClientSchema(Schema):
    name = fields.String()
    installed = fields.Boolean()
    available = fields.Boolean()


class MCPServerOutSchema(Schema):
    """A stored server config; header and environment values are masked."""

    id = fields.String(required=True)
    name = fields.String(required=True)
    transport = fields.String()
    url = fields.String()
    headers = fields.Dict(keys=fields.String(), values=fields.String())
    command = fields.String()
    args = fields.List(fields.String())
    env = fields.Dict(keys=fields.String(), values=fields.String())
    toolsCount = fields.Integer(allow_none=True)
    error = fields.String(allow_none=True)


class MCPServerToolSchema(Schema):
    name = fields.String(required=True)
    description = fields.String(allow_none=True)
    inputSchema = fields.Dict()


class MCPMessageSchema(Schema):
    message = fields.String(required=True)
