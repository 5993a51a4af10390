"""Who may use a project's MCP server (its ``auth_settings``) and whose flows the tools run.

* ``auth_type`` ``none``: anyone who has the URL; the tools run as the project's owner.
* ``apikey`` or no settings at all: the owner's credentials, as a bearer token, a bearer API key
  or ``x-api-key``.
* ``oauth``: the owner's credentials as above, or a bearer access token the project's OAuth
  authorization server vouches for (token introspection, :mod:`service_mcp.oauth`); the tools run
  as the owner. A refusal is 401 with ``WWW-Authenticate: Bearer resource_metadata=...`` (the
  RFC 9728 document, served by this plugin) so MCP clients find the authorization server.
* another user's project is 404, exactly like a missing one. Cookies are not accepted (the
  reference's MCP routes take a bearer token or an API key only).
"""

from __future__ import annotations

from typing import Any

from flask import Request, request

from core.app import state
from core.auth import Actor
from core.contracts import ProjectRecord
from core.errors import ApiError
from service_mcp import hookspecs, oauth
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
    return state().host.hooks.actor_from_request(request=Request(environ), scheme="optional")


def need_credentials(metadata_url: str | None = None, error: str | None = None) -> ApiError:
    """401 with the RFC 6750 challenge (``resource_metadata`` of RFC 9728 for OAuth projects)."""
    challenge = "Bearer"
    parts = []
    if error:
        parts += ['error="invalid_token"', f'error_description="{error}"']
    if metadata_url:
        parts.append(f'resource_metadata="{metadata_url}"')
    if parts:
        challenge += " " + ", ".join(parts)
    message = "Authentication required: an API key (x-api-key) or bearer token"
    return ApiError(401, f"Invalid token: {error}" if error else message, {"WWW-Authenticate": challenge})


def server_paths(project_id: str) -> list[str]:
    """The project server's resource paths (an OAuth token's audience may name either)."""
    return [f"/api/v1/mcp/project/{project_id}/streamable", f"/api/v1/mcp/project/{project_id}/sse"]


def _base() -> str:
    from service_mcp.config import settings

    return (settings().base_url or request.host_url).rstrip("/")


def metadata_url(project_id: str) -> str:
    return f"{_base()}/.well-known/oauth-protected-resource{server_paths(project_id)[0]}"


def _bearer() -> str | None:
    kind, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() or None if kind.lower() == "bearer" else None


def _oauth_scope(project: ProjectRecord, auth: dict[str, Any], owner: str, scope: Scope) -> Scope:
    """Admit the owner's own credentials, else a token the project's authorization server vouches for."""
    project_id = project.id
    try:
        actor = caller()
    except ApiError:  # not one of this service's credentials: maybe the authorization server's token
        actor = None
    if actor is not None:
        if actor.owner_id != owner:
            raise ApiError(404, NOT_FOUND)
        return scope
    token = _bearer()
    if token is None:
        raise need_credentials(metadata_url(project_id))
    resources = [f"{_base()}{p}" for p in server_paths(project_id)]
    try:
        oauth.admit(project_id, auth, oauth.client_secret(project_id), token, resources)
    except oauth.Refused as exc:
        raise need_credentials(metadata_url(project_id), str(exc)) from None
    return scope


def project_scope(project_id: str) -> tuple[Scope, ProjectRecord]:
    """Admit the caller to project ``project_id``'s MCP server; 401 / 403 / 404 otherwise."""
    project = state().host.hooks.first(hookspecs.find_project, user_id=None, project_id=project_id)
    if project is None:
        raise ApiError(404, NOT_FOUND)
    auth = dict(project.auth_settings or {})
    owner = project.user_id
    scope = Scope(owner, project.id, f"service-mcp-project-{project.id}")
    if auth.get("auth_type") == "none":
        return scope, project
    if auth.get("auth_type") == "oauth":
        return _oauth_scope(project, auth, owner, scope), project
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


def server_name(project: ProjectRecord) -> str:
    """The name a client config keys this project's server by (reference: ``svc-starter_project``)."""
    return f"svc-{sanitize(project.name)}"[:64]


def protected_resource(project_id: str, kind: str) -> dict[str, Any]:
    """The RFC 9728 metadata of an OAuth project's server (``kind`` ``streamable`` or ``sse``); else 404."""
    project = state().host.hooks.first(hookspecs.find_project, user_id=None, project_id=project_id)
    auth = dict(project.auth_settings or {}) if project is not None else {}
    if project is None or kind not in ("streamable", "sse") or auth.get("auth_type") != "oauth":
        raise ApiError(404, "Not Found")
    return oauth.resource_metadata(auth, f"{_base()}/api/v1/mcp/project/{project.id}/{kind}")
