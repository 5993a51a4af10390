"""Who may use a project's MCP server (its ``auth_settings``) and whose flows the tools run.

The decision is the run service's one rule for MCP and A2A (:func:`core.runs.admission.admit`); this
module reads MCP's credentials and renders the refusals in MCP's shape:

* the caller's credentials: a bearer token, a bearer API key or ``x-api-key`` (cookies are not
  accepted: the reference's MCP routes take a bearer token or an API key only); for ``oauth``, also
  a bearer access token the project's OAuth authorization server vouches for (token introspection,
  :mod:`service_mcp.oauth`);
* ``auth_type`` ``none``: anyone who has the URL; the tools run as the owner for the owner's
  credentials, else as each flow's anonymous principal, with no argument beyond the message and
  the session (:attr:`Scope.anonymous <service_mcp.tools.Scope>`);
* credentials required (``apikey``, no settings): 401 with ``WWW-Authenticate: Bearer`` (for
  ``oauth`` with ``resource_metadata=...``, the RFC 9728 document served by this plugin, so MCP
  clients find the authorization server); credentials that are not valid: the accounts plugin's
  refusal (403 for an unknown API key); another user's project: 404, exactly like a missing one;
  an auth type neither ``none``, ``apikey`` nor ``oauth``: 403.
"""

from __future__ import annotations

from typing import Any

from flask import Request, request

from core import appstate
from core.auth import NOT_ENOUGH_PRIVILEGES, Actor, can
from core.contracts import ProjectRecord, ResourceRef
from core.errors import ApiError
from core.runs import admission
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
    return appstate.hooks().actor_from_request(request=Request(environ), scheme="optional")


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


def _credentials() -> tuple[Actor | None, ApiError | None]:
    """The caller and, when the credentials sent are not valid ones of this service, why."""
    try:
        return caller(), None
    except ApiError as exc:
        return None, exc


def _presented() -> bool:
    return bool(
        request.headers.get("Authorization") or request.headers.get("x-api-key") or request.args.get("x-api-key")
    )


def _vouched(project_id: str, auth: dict[str, Any], actor: Actor | None) -> bool:
    """An ``oauth`` project called without this service's credentials: whether the bearer token is one
    the project's authorization server vouches for (401 with the metadata challenge when it is not)."""
    if actor is not None:
        return False
    token = _bearer()
    if token is None:
        return False
    resources = [f"{_base()}{p}" for p in server_paths(project_id)]
    try:
        oauth.admit(project_id, auth, oauth.client_secret(project_id), token, resources)
    except oauth.Refused as exc:
        raise need_credentials(metadata_url(project_id), str(exc)) from None
    return True


def project_scope(project_id: str) -> tuple[Scope, ProjectRecord]:
    """Admit the caller to project ``project_id``'s MCP server; 401 / 403 / 404 otherwise."""
    project = appstate.hooks().first(hookspecs.find_project, user_id=None, project_id=project_id)
    if project is None:
        raise ApiError(404, NOT_FOUND)
    auth = dict(project.auth_settings or {})
    pid = project.id
    actor, error = _credentials()
    oauth_project = admission.auth_type_of(auth) == "oauth"
    member = _member(actor, project)
    try:
        admitted = admission.admit(
            auth,
            project.user_id,
            actor,
            presented=_presented(),
            vouched=oauth_project and _vouched(pid, auth, actor),
            member=member,
        )
    except admission.Refused as refused:
        raise _refusal(refused, error, pid) from None
    return Scope(admitted.owner_id, pid, f"service-mcp-project-{pid}", anonymous=admitted.anonymous), project


def _member(actor: Actor | None, project: ProjectRecord) -> bool:
    """A non-owner the project's roles let run its flows (teams); one who may only read it is 403."""
    if actor is None or actor.owner_id == str(project.user_id):
        return False
    ref = ResourceRef("project", str(project.id), str(project.user_id), str(project.id))
    if can(actor, "execute", ref):
        return True
    if can(actor, "read", ref):
        raise ApiError(403, NOT_ENOUGH_PRIVILEGES)
    return False


def _refusal(refused: admission.Refused, error: ApiError | None, project_id: str) -> ApiError:
    """A refusal in MCP's shape (see the module doc)."""
    if refused.reason == admission.NOT_OWNER:
        return ApiError(404, NOT_FOUND)
    if refused.reason == admission.UNSUPPORTED:
        return ApiError(403, f"Unsupported project auth type {refused.auth_type!r} for MCP")
    if refused.auth_type == "oauth":
        return need_credentials(metadata_url(project_id))
    if refused.reason == admission.INVALID_CREDENTIALS and error is not None:
        return error
    return need_credentials()


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
    project = appstate.hooks().first(hookspecs.find_project, user_id=None, project_id=project_id)
    auth = dict(project.auth_settings or {}) if project is not None else {}
    if project is None or kind not in ("streamable", "sse") or auth.get("auth_type") != "oauth":
        raise ApiError(404, "Not Found")
    return oauth.resource_metadata(auth, f"{_base()}/api/v1/mcp/project/{project.id}/{kind}")
