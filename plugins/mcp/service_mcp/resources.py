"""HTTP endpoints of the MCP plugin.

* ``/api/v1/mcp/project/{project_id}`` GET (tools) / PATCH (settings), ``.../composer-url``,
  ``.../install``, ``.../installed``: the owner's settings operations (bearer or API key), and those of a
  member of a team the project is shared with: reading needs ``read``, installing ``execute``, changing the
  tools ``write``, changing ``auth_type`` ``share`` (``services.acting_owner``: 404 / 403, core.auth).
* ``/api/v1/mcp/project/{project_id}/streamable`` (and ``/streamable/``), ``.../sse`` + ``POST
  /api/v1/mcp/project/{project_id}``: the project's MCP server (its own ``auth_settings``).
* ``/api/v1/mcp/streamable``, ``/api/v1/mcp/sse`` + ``POST /api/v1/mcp/``: the global server.
* ``/.well-known/oauth-protected-resource/api/v1/mcp/project/{project_id}/streamable`` (or ``/sse``):
  the RFC 9728 metadata of a project server with ``auth_type: oauth``.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from flask import Blueprint as FlaskBlueprint
from flask import request
from flask_smorest import Blueprint

from core import db
from core.auth import authenticated, current_actor
from core.openapi import json_response
from core.requests import body_limit
from service_mcp import admission, schemas, services, transport

projects_blp = Blueprint("mcp_projects", __name__, url_prefix="/api/v1/mcp", description="MCP project servers")
#: the MCP transports (the reference keeps them out of its OpenAPI document)
transport_bp = FlaskBlueprint("mcp_transport", __name__, url_prefix="/api/v1/mcp")

#: OAuth Protected Resource Metadata (RFC 9728) of the project servers with ``auth_type: oauth``
well_known_bp = FlaskBlueprint("mcp_well_known", __name__)

STREAM_METHODS = ["GET", "POST", "DELETE", "HEAD"]


@well_known_bp.route("/.well-known/oauth-protected-resource/api/v1/mcp/project/<project_id>/<kind>")
def oauth_protected_resource(project_id: str, kind: str) -> Any:
    return admission.protected_resource(project_id, kind)


@projects_blp.route("/project/<project_id>", methods=["GET"])
@projects_blp.response(200, description="see docs/plugins/mcp.md")
@projects_blp.arguments(schemas.MCPListToolsQuerySchema, location="query", as_kwargs=True)
@projects_blp.doc(responses={"200": json_response("The project's tools", schemas.MCPProjectToolsSchema)})
@authenticated("user")
def list_project_tools(project_id: str, mcp_enabled: bool = True) -> Any:
    """List Project Tools"""
    owner = services.acting_owner(current_actor(), project_id, "read")
    return services.list_tools(owner, project_id, mcp_enabled)


@projects_blp.route("/project/<project_id>", methods=["PATCH"])
@projects_blp.response(200, description="see docs/plugins/mcp.md")
@projects_blp.arguments(schemas.MCPProjectUpdateRequestSchema)
@projects_blp.doc(responses={"200": json_response("Updated", schemas.MCPSettingsUpdatedSchema)})
@authenticated("user")
def update_project_mcp_settings(body: dict[str, Any], project_id: str) -> Any:
    """Update Project Mcp Settings"""
    body["settings"] = [{**item, "id": str(item["id"])} for item in body["settings"]]
    actor = current_actor()
    owner = services.acting_owner(actor, project_id, services.settings_verb(actor, project_id, body))
    with db.transaction() as s:
        return services.update_settings(s, owner, project_id, body)


@projects_blp.route("/project/<project_id>/composer-url", methods=["GET"])
@projects_blp.response(200, description="see docs/plugins/mcp.md")
@projects_blp.doc(responses={"200": json_response("The project server's URLs", schemas.MCPComposerUrlSchema)})
@authenticated("user")
def get_project_composer_url(project_id: str) -> Any:
    """Get Project Composer Url"""
    owner = services.acting_owner(current_actor(), project_id, "read")
    return services.composer_url(owner, project_id, request.host_url)


@projects_blp.route("/project/<project_id>/install", methods=["POST"])
@projects_blp.response(200, description="see docs/plugins/mcp.md")
@projects_blp.arguments(schemas.MCPInstallRequestSchema)
@projects_blp.doc(
    responses={"200": json_response("The client config (written when local)", schemas.MCPInstallResultSchema)}
)
@authenticated("user")
def install_mcp_config(body: dict[str, Any], project_id: str) -> Any:
    """Install Mcp Config"""
    owner = services.acting_owner(current_actor(), project_id, "execute")
    return services.install(owner, project_id, body, request.host_url, _local_caller())


@projects_blp.route("/project/<project_id>/installed", methods=["GET"])
@projects_blp.response(200, description="see docs/plugins/mcp.md")
@projects_blp.doc(
    responses={
        "200": json_response(
            "Each client and whether the server is in its config", schemas.MCPInstalledClientSchema(many=True)
        )
    }
)
@authenticated("user")
def check_installed_mcp_servers(project_id: str) -> Any:
    """Check Installed Mcp Servers"""
    owner = services.acting_owner(current_actor(), project_id, "read")
    return json.loads(json.dumps(services.installed(owner, project_id)))


def _local_caller() -> bool:
    """The request comes from this machine (the only case where writing a client config makes sense)."""
    try:
        return ipaddress.ip_address(request.remote_addr or "").is_loopback
    except ValueError:
        return False


# --- the project servers -----------------------------------------------------------------------------
@transport_bp.route("/project/<project_id>/streamable", methods=STREAM_METHODS, strict_slashes=False)
@body_limit("raw")
def project_streamable(project_id: str) -> Any:
    scope, _ = admission.project_scope(project_id)
    return transport.streamable(scope)


@transport_bp.route("/project/<project_id>/sse", methods=["GET"])
def project_sse(project_id: str) -> Any:
    scope, _ = admission.project_scope(project_id)
    return transport.sse_open(scope, f"/api/v1/mcp/project/{project_id}")


@transport_bp.route("/project/<project_id>", methods=["POST"])
@body_limit("raw")
def project_sse_message(project_id: str) -> Any:
    scope, _ = admission.project_scope(project_id)
    return transport.sse_message(scope)


# --- the global server -------------------------------------------------------------------------------
@transport_bp.route("/streamable", methods=STREAM_METHODS, strict_slashes=False)
@body_limit("raw")
def global_streamable() -> Any:
    return transport.streamable(admission.global_scope())


@transport_bp.route("/sse", methods=["GET"])
def global_sse() -> Any:
    return transport.sse_open(admission.global_scope(), "/api/v1/mcp/")


@transport_bp.route("/", methods=["POST"])
def global_sse_message() -> Any:
    return transport.sse_message(admission.global_scope())
