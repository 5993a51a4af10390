"""Project MCP settings: tools, auth settings (OAuth client secret encrypted), composer URLs,
client install snippets and the installed check. No request objects here."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from cryptography.fernet import InvalidToken, MultiFernet
from sqlalchemy.orm import Session

from core import appstate, secrets
from core.auth import Actor, check_access
from core.contracts import McpToolSettings, ProjectRecord, ResourceRef
from core.db import utcnow
from core.errors import ApiError
from service_mcp import hookspecs, oauth
from service_mcp.admission import server_name
from service_mcp.models import ProjectSecret, Server

TOOL_FIELDS = ("id", "mcp_enabled", "action_name", "action_description", "name", "description")
OAUTH_INCOMPLETE = (
    "OAuth needs the project's authorization server: set oauth_server_url (its issuer URL, with token "
    "introspection) or oauth_token_url; until then only the owner's API key is admitted"
)


def oauth_problem(auth: dict[str, Any] | None) -> str | None:
    """Why OAuth settings cannot admit anyone yet (the spec's 200-with-an-error-message), or None."""
    if not auth or auth.get("auth_type") != "oauth":
        return None
    return OAUTH_INCOMPLETE if oauth.issuer(auth) is None else None


CLIENTS = ("cursor", "windsurf", "claude", "vscode")
TRANSPORTS = ("streamablehttp", "sse")


def project(user_id: str, project_id: str) -> ProjectRecord:
    found = appstate.hooks().first(hookspecs.find_project, user_id=user_id, project_id=project_id)
    if found is None:
        raise ApiError(404, "Project not found")
    return found


def acting_owner(actor: Actor, project_id: str, verb: str) -> str:
    """Whose project settings a call reaches: the caller's own project, or another user's shared with them
    that lets them ``verb`` it (``core.auth.check_access``: 404 when they may not see it, 403 when they may
    see but not ``verb`` it). The operations below then act on that owner's project."""
    found = appstate.hooks().first(hookspecs.find_project, user_id=None, project_id=project_id)
    if found is None:
        raise ApiError(404, "Project not found")
    if str(found.user_id) != actor.owner_id:
        ref = ResourceRef("project", found.id, str(found.user_id), found.id)
        check_access(actor, verb, ref, not_found="Project not found")
    return str(found.user_id)


def settings_verb(actor: Actor, project_id: str, body: dict[str, Any]) -> str:
    """``write`` to change which flows are tools; ``share`` to change who is admitted (``auth_type``): that
    decides who may call the project's flows, as a share does."""
    auth = body.get("auth_settings")
    if not auth:
        return "write"
    found = appstate.hooks().first(hookspecs.find_project, user_id=None, project_id=project_id)
    current = found.auth_type if found is not None else None
    return "share" if auth.get("auth_type") not in (None, current) else "write"


def list_tools(user_id: str, project_id: str, mcp_enabled: bool) -> dict[str, Any]:
    proj = project(user_id, project_id)
    flows = (
        appstate.hooks().first(hookspecs.list_project_flows, user_id=user_id, project_id=project_id, with_data=False)
        or []
    )
    items = [{k: getattr(f, k) for k in TOOL_FIELDS} for f in flows if f.mcp_enabled or not mcp_enabled]
    return {"tools": items, "auth_settings": proj.auth_settings, "server_name": server_name(proj)}


def update_settings(s: Session, user_id: str, project_id: str, body: dict[str, Any]) -> dict[str, Any]:
    project(user_id, project_id)
    auth = body.get("auth_settings")
    if auth is not None:
        auth = {k: v for k, v in auth.items() if v is not None}
        secret = auth.pop("oauth_client_secret", None)
        if secret:
            _store_secret(s, user_id, project_id, secret)
    count = appstate.hooks().first(
        hookspecs.update_project_mcp,
        user_id=user_id,
        project_id=project_id,
        tools=[McpToolSettings.from_dict(item) for item in body["settings"]],
        auth_settings=auth,
    )
    if count is None:
        raise ApiError(404, "Project not found")
    out: dict[str, Any] = {"message": f"Updated MCP settings for {count} flows and project auth settings"}
    problem = oauth_problem(auth)
    if problem is not None:
        out["error_message"] = problem  # the reference's composer failure: 200 with a message
    return out


def _store_secret(s: Session, user_id: str, project_id: str, secret: str) -> None:
    token = secrets.fernet(appstate.settings()).encrypt(secret.encode()).decode()
    key = uuid.UUID(project_id)
    row = s.get(ProjectSecret, key)
    if row is None:
        s.add(ProjectSecret(project_id=key, user_id=uuid.UUID(user_id), oauth_client_secret=token, updated_at=utcnow()))
    else:
        row.oauth_client_secret, row.updated_at = token, utcnow()


def base_url(host_url: str) -> str:
    from service_mcp.config import settings

    return (settings().base_url or host_url).rstrip("/")


def composer_url(user_id: str, project_id: str, host_url: str) -> dict[str, Any]:
    proj = project(user_id, project_id)
    base = base_url(host_url)
    return {
        "project_id": proj.id,
        "uses_composer": False,
        "streamable_http_url": f"{base}/api/v1/mcp/project/{proj.id}/streamable",
        "legacy_sse_url": f"{base}/api/v1/mcp/project/{proj.id}/sse",
        "error_message": oauth_problem(dict(proj.auth_settings) if proj.auth_settings is not None else None),
    }


# --- client configs ----------------------------------------------------------------------------------
def client_config_path(client: str) -> Path:
    """Where each client keeps its MCP servers (fixed paths under the home directory)."""
    home = Path.home()
    return {
        "cursor": home / ".cursor" / "mcp.json",
        "windsurf": home / ".codeium" / "windsurf" / "mcp_config.json",
        "claude": home / ".config" / "Claude" / "claude_desktop_config.json",
        "vscode": home / ".vscode" / "mcp.json",
    }[client]


def snippet(client: str, transport: str, name: str, url: str, needs_key: bool) -> dict[str, Any]:
    """The exact JSON a client's config file takes for this server (the API key as a placeholder)."""
    headers = {"x-api-key": "<YOUR_API_KEY>"} if needs_key else {}
    if client == "claude":  # Claude Desktop speaks stdio only: bridge with mcp-proxy
        args = ["mcp-proxy"]
        if transport == "streamablehttp":
            args += ["--transport", "streamablehttp"]
        for key, value in headers.items():
            args += ["--headers", key, value]
        return {"mcpServers": {name: {"command": "uvx", "args": [*args, url]}}}
    entry: dict[str, Any] = {"serverUrl" if client == "windsurf" else "url": url}
    if client == "vscode":
        entry = {"type": "http" if transport == "streamablehttp" else "sse", **entry}
    if headers:
        entry["headers"] = headers
    return {"servers" if client == "vscode" else "mcpServers": {name: entry}}


def install(user_id: str, project_id: str, body: dict[str, Any], host_url: str, local: bool) -> dict[str, Any]:
    client = body["client"].lower()
    if client not in CLIENTS:
        raise ApiError(400, f"Unsupported client {body['client']!r}; supported: {', '.join(CLIENTS)}")
    transport = (body.get("transport") or "streamablehttp").lower()
    if transport not in TRANSPORTS:
        raise ApiError(400, f"Unsupported transport {body['transport']!r}; supported: {', '.join(TRANSPORTS)}")
    proj = project(user_id, project_id)
    urls = composer_url(user_id, project_id, host_url)
    url = urls["streamable_http_url"] if transport == "streamablehttp" else urls["legacy_sse_url"]
    needs_key = proj.auth_type != "none"
    name = server_name(proj)
    config = snippet(client, transport, name, url, needs_key)
    path = client_config_path(client)
    written = False
    from service_mcp.transport import config as mcp_config

    if mcp_config().write_client_config and local:
        _merge_into(path, config)
        written = True
    message = (
        f"Added {name} to the {client} config at {path}"
        if written
        else f"Copy this configuration into {client}'s MCP config ({path.name})"
    )
    return {"message": message, "client": client, "transport": transport, "config": config, "written": written}


def _merge_into(path: Path, config: dict[str, Any]) -> None:
    """Merge ``config``'s servers into the client's file (created if absent), atomically."""
    current: dict[str, Any] = {}
    if path.exists():
        try:
            current = json.loads(path.read_text() or "{}")
        except ValueError:
            raise ApiError(400, f"{path} is not valid JSON; fix it or add the server by hand") from None
        if not isinstance(current, dict):
            raise ApiError(400, f"{path} does not hold a JSON object")
    for section, servers in config.items():
        found = current.get(section)
        merged: dict[str, Any] = found if isinstance(found, dict) else {}
        current[section] = {**merged, **servers}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(current, indent=2))
    os.replace(tmp, path)


def installed(user_id: str, project_id: str) -> list[dict[str, Any]]:
    name = server_name(project(user_id, project_id))
    out = []
    for client in CLIENTS:
        path = client_config_path(client)
        found = False
        if path.exists():
            try:
                data = json.loads(path.read_text() or "{}")
                section = data.get("servers" if client == "vscode" else "mcpServers") or {}
                found = isinstance(section, dict) and name in section
            except (ValueError, OSError, AttributeError):
                found = False
        out.append({"name": client, "installed": found, "available": path.parent.exists()})
    return out


def reencrypt(s: Session, cipher: MultiFernet) -> int:
    """Every encrypted token of this plugin under a rotated key (``reencrypt_secrets``), in the caller's
    transaction: OAuth client secrets and MCP server secrets (headers, environment). Raises (the whole
    rotation rolls back) for a token no key reads."""
    count = 0
    for model, column in ((ProjectSecret, "oauth_client_secret"), (Server, "secret")):
        for row in s.scalars(sa.select(model).with_for_update()).all():
            token = getattr(row, column)
            if not token:
                continue
            try:
                setattr(row, column, cipher.rotate(token.encode()).decode())
            except InvalidToken:
                raise RuntimeError(
                    f"an MCP secret ({model.__tablename__}) cannot be decrypted with the old key"
                ) from None
            count += 1
    s.flush()
    return count
