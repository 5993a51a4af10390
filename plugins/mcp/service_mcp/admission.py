"""Who may use a project's MCP server (its ``auth_settings``) and whose flows the tools run.

* ``auth_type`` ``none``: anyone who has the URL; the tools run as the project's owner.
* anything else (``apikey``, ``oauth``, or no settings at all): the owner's credentials, as a
  bearer token, a bearer API key or ``x-api-key``. OAuth settings are stored, but admission
  stays the owner's key: the reference needs its external "MCP Composer" for OAuth, which this
  service does not run (the composer URL answer says so).
* another user's project is 404, exactly like a missing one. Cookies are not accepted (the
  reference's MCP routes take a bearer token or an API key only).
"""

from __future__ import annotations

from typing import Any

from flask import Request, request

from core.app import state
from core.auth import Actor
from core.errors import ApiError
from service_mcp.tools import Scope, sanitize

NOT_FOUND = "Project not found"


def caller() -> Actor | None:
    """The request's caller from a bearer token, a bearer API key or ``x-api-key`` (no cookie)."""
    environ = {k: v for k, v in request.environ.items() if k != "HTTP_COOKIE"}
    kind, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    if kind.lower() == "bearer" and token and token.count(".") != 2:  # not a JWT: an API key
        environ.pop("HTTP_AUTHORIZATION", None)
        environ["HTTP_X_API_KEY"] = token
    actor: Actor | None = state().host.hook.actor_from_request(request=Request(environ), scheme="optional")
    return actor


def need_credentials() -> ApiError:
    return ApiError(
        401, "Authentication required: an API key (x-api-key) or bearer token", {"WWW-Authenticate": "Bearer"}
    )


def project_scope(project_id: str) -> tuple[Scope, dict[str, Any]]:
    """Admit the caller to project ``project_id``'s MCP server; 401 / 403 / 404 otherwise."""
    project = state().host.hook.find_project(user_id=None, project_id=project_id)
    if project is None:
        raise ApiError(404, NOT_FOUND)
    auth = project.get("auth_settings") or {}
    owner = str(project["user_id"])
    scope = Scope(owner, str(project["id"]), f"service-mcp-project-{project['id']}")
    if auth.get("auth_type") == "none":
        return scope, project
    actor = caller()
    if actor is None:
        raise need_credentials()
    if actor.owner_id != owner:
        raise ApiError(404, NOT_FOUND)
    return scope, project


def global_scope() -> Scope:
    """The global server: every flow of the caller (credentials required)."""
    actor = caller()
    if actor is None:
        raise need_credentials()
    return Scope(actor.owner_id, None, "service-mcp-global")


def server_name(project: dict[str, Any]) -> str:
    """The name a client config keys this project's server by (reference: ``svc-starter_project``)."""
    return f"svc-{sanitize(project['name'])}"[:64]
