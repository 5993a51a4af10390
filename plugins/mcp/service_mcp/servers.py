"""``/api/v2/mcp/servers``: a user's MCP server configs (for the ``MCP Tools`` component).

A config is a Streamable HTTP / SSE ``url`` with ``headers``, or a stdio ``command`` with
``args`` and ``env``. Header and environment values are secrets: stored Fernet-encrypted
(``core.secrets``), answered masked (``"********"``); an update that sends the mask back keeps
the stored value.

A stdio server runs a program on the server: only superusers add or change one (403 otherwise), unless
its exact command is in the admin's ``SERVICE_MCP_STDIO_ALLOWED_COMMANDS`` (not with
``SERVICE_MCP_SERVERS_LOCKED``, which keeps stdio servers to superusers). ``SERVICE_MCP_SERVER_DOCKER_HARDENING``
refuses risky ``docker run`` arguments (:mod:`service_mcp.docker_args`). The component reads a config
through the ``mcp_server_config`` hook (``RunContext.mcp_server``), which applies these policies again
at every start: a stdio config an ordinary user stored before (``added_by_superuser`` false) never
starts; :func:`unapproved_stdio_servers` lists them (logged at start-up). Every stdio server starts in
the sandbox (:func:`core.sandbox.stdio_server`).
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from typing import Any

import sqlalchemy as sa
from flask_smorest import Blueprint
from marshmallow import EXCLUDE, Schema, fields
from sqlalchemy.orm import Session

from core import appstate, db, secrets
from core.auth import Actor, allowed, authenticated, current_actor
from core.db import utcnow
from core.errors import ApiError, validation_error
from core.openapi import json_response
from core.sandbox import SandboxUnavailable
from service_mcp import docker_args, schemas
from service_mcp.models import Server

servers_blp = Blueprint("mcp_servers", __name__, url_prefix="/api/v2/mcp", description="MCP server configs")

MASK = "********"
_NAME = re.compile(r"^[A-Za-z0-9_. -]{1,100}$")


class MCPServerConfigSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    url = fields.String(allow_none=True)
    transport = fields.String(allow_none=True)
    headers = fields.Dict(keys=fields.String(), values=fields.String(), allow_none=True)
    command = fields.String(allow_none=True)
    args = fields.List(fields.String(), allow_none=True)
    env = fields.Dict(keys=fields.String(), values=fields.String(), allow_none=True)


class MCPServersQuerySchema(Schema):
    class Meta:
        unknown = EXCLUDE

    action_count = fields.Boolean(load_default=False)


def _cipher() -> Any:
    return secrets.fernet(appstate.settings())


def _check_name(name: str) -> None:
    if not _NAME.match(name or ""):
        raise validation_error(["path", "server_name"], "letters, digits, space, '_', '-' and '.' only (1-100)")


def normalise(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(``config`` without secret values, ``secret`` = {headers, env}); 422 when neither url nor command."""
    url, command = body.get("url"), body.get("command")
    if bool(url) == bool(command):
        raise validation_error(["body"], "give either url (HTTP/SSE server) or command (stdio server)")
    if url:
        if not re.match(r"^https?://", url):
            raise validation_error(["body", "url"], "must be an http(s) URL")
        transport = (body.get("transport") or ("sse" if url.rstrip("/").endswith("/sse") else "streamablehttp")).lower()
        if transport not in ("streamablehttp", "sse"):
            raise validation_error(["body", "transport"], "streamablehttp or sse")
        config = {"url": url, "transport": transport, "headers": sorted((body.get("headers") or {}).keys())}
        return config, {"headers": dict(body.get("headers") or {})}
    config = {"command": command, "args": list(body.get("args") or []), "transport": "stdio"}
    config["env"] = sorted((body.get("env") or {}).keys())
    return config, {"env": dict(body.get("env") or {})}


def stdio_refusal(command: str, by_superuser: bool) -> str | None:
    """Why a stdio server with ``command`` may not be defined or started (None: it may)."""
    from service_mcp.config import settings

    cfg = settings()
    if by_superuser:
        return None
    if cfg.servers_locked:
        return "Only superusers may add stdio MCP servers (SERVICE_MCP_SERVERS_LOCKED)"
    if command in cfg.stdio_allowed_commands:
        return None
    return (
        "Only superusers may define stdio MCP servers (they run a program on the server): use an HTTP/SSE "
        "server, or ask an admin to add it or to allow its command in SERVICE_MCP_STDIO_ALLOWED_COMMANDS"
    )


def _guard_stdio(actor: Actor, config: dict[str, Any]) -> None:
    if config["transport"] != "stdio":
        return
    config["added_by_superuser"] = allowed(actor, "admin")  # checked again at every start (config_for_run)
    from service_mcp.config import settings

    problem = stdio_refusal(config["command"], config["added_by_superuser"])
    if problem:
        raise ApiError(403, problem)
    if settings().server_docker_hardening:
        problem = docker_args.check([config["command"], *config["args"]])
        if problem:
            raise ApiError(400, problem)


def out(row: Server, tools_count: int | None = None, error: str | None = None) -> dict[str, Any]:
    config = {k: v for k, v in row.config.items() if k != "added_by_superuser"}
    for key in ("headers", "env"):
        if key in config:
            config[key] = {name: MASK for name in config[key]}
    return {"id": str(row.id), "name": row.name, **config, "toolsCount": tools_count, "error": error}


def _row(s: Session, actor: Actor, name: str) -> Server | None:
    return s.scalar(sa.select(Server).where(Server.user_id == actor.id, Server.name == name))


def decrypted(row: Server) -> dict[str, Any]:
    """The full config (secrets in clear) for a connection; never answered to a client."""
    secret = json.loads(_cipher().decrypt(row.secret.encode())) if row.secret else {}
    config = {k: v for k, v in row.config.items() if k not in ("headers", "env")}
    return {**config, **secret}


def get_config(s: Session, user_id: str, name: str) -> dict[str, Any] | None:
    try:
        owner = uuid.UUID(str(user_id))
    except ValueError:
        return None
    row = s.scalar(sa.select(Server).where(Server.user_id == owner, Server.name == name))
    return None if row is None else {"name": row.name, **decrypted(row)}


def config_for_run(s: Session, user_id: str, name: str) -> dict[str, Any] | None:
    """The ``mcp_server_config`` hook: the config, re-checked against today's policies."""
    config = get_config(s, user_id, name)
    if config is None or config.get("transport") != "stdio":
        return config
    from service_mcp.config import settings as mcp_settings

    settings = mcp_settings()
    # added by a superuser who still is one: a demoted or deactivated owner's stdio servers stop starting
    by_superuser = config.get("added_by_superuser") is True and _superuser_now(user_id)
    problem = stdio_refusal(str(config.get("command")), by_superuser)
    if problem:
        raise ApiError(403, f"MCP server '{name}' was not added by a current superuser and may not start. {problem}")
    if settings.server_docker_hardening:
        problem = docker_args.check([config["command"], *config.get("args", [])])
        if problem:
            raise ApiError(403, problem)
    return config


def _superuser_now(user_id: str) -> bool:
    """Whether the config's owner is a superuser today (the accounts plugin answers; no answer: no)."""
    from core import appstate
    from service_mcp import hookspecs

    return appstate.hooks().first(hookspecs.user_is_superuser, user_id=str(user_id)) is True


def unapproved_stdio_servers(s: Session) -> list[dict[str, Any]]:
    """Stored stdio configs that may not start (an ordinary user's, stored before issue 26, whose command
    no allow-list names): ``[{name, user_id, command}]``. Logged as a warning at start-up."""
    out = []
    for row in s.scalars(sa.select(Server).order_by(Server.name)).all():
        config = row.config or {}
        if config.get("transport") != "stdio":
            continue
        if stdio_refusal(str(config.get("command")), config.get("added_by_superuser") is True):
            out.append({"name": row.name, "user_id": str(row.user_id), "command": config.get("command")})
    return out


def warn_unapproved_stdio_servers(s: Session) -> list[dict[str, Any]]:
    """Log one warning listing :func:`unapproved_stdio_servers` (none: nothing logged)."""
    found = unapproved_stdio_servers(s)
    if found:
        listed = "; ".join(f"'{f['name']}' of user {f['user_id']} ({f['command']})" for f in found)
        logging.getLogger(__name__).warning(
            "%d stored stdio MCP server(s) were added by ordinary users and will not start (only superusers "
            "or SERVICE_MCP_STDIO_ALLOWED_COMMANDS may define them): %s",
            len(found),
            listed,
        )
    return found


def delete_user_rows(s: Session, user_id: str) -> None:
    s.execute(sa.delete(Server).where(Server.user_id == uuid.UUID(str(user_id))))


@servers_blp.route("/servers", methods=["GET"])
@servers_blp.response(200, description="see docs/plugins/mcp.md")
@servers_blp.arguments(MCPServersQuerySchema, location="query", as_kwargs=True)
@servers_blp.doc(responses={"200": json_response("The caller's servers", schemas.MCPServerOutSchema(many=True))})
@authenticated("user")
def get_servers(action_count: bool = False) -> Any:
    """Get Servers"""
    actor = current_actor()
    rows = db.session().scalars(sa.select(Server).where(Server.user_id == actor.id).order_by(Server.name)).all()
    if not action_count:
        return [out(r) for r in rows]
    from service_mcp import client

    answers = []
    for row in rows:
        try:
            config = config_for_run(db.session(), actor.owner_id, row.name)  # policies apply here too
            db.session().close()  # connecting may take seconds: give the connection back
            answers.append(out(row, len(client.list_tools(config or {}, actor)), None))
        except ApiError as exc:
            answers.append(out(row, None, str(exc.detail)))
        except Exception as exc:  # an unreachable server is reported, not a failed listing
            answers.append(out(row, None, client.describe(exc)))
    return answers


@servers_blp.route("/servers/<server_name>", methods=["GET"])
@servers_blp.response(200, description="see docs/plugins/mcp.md")
@servers_blp.doc(responses={"200": json_response("The server", schemas.MCPServerOutSchema)})
@authenticated("user")
def get_server_endpoint(server_name: str) -> Any:
    """Get Server Endpoint"""
    row = _row(db.session(), current_actor(), server_name)
    if row is None:
        raise ApiError(404, f"Server '{server_name}' not found")
    return out(row)


@servers_blp.route("/servers/<server_name>/tools", methods=["GET"])
@servers_blp.response(200, description="the server's tools: [{name, description, inputSchema}]")
@servers_blp.doc(responses={"200": json_response("The server's tools", schemas.MCPServerToolSchema(many=True))})
@authenticated("user")
def get_server_tools(server_name: str) -> Any:
    """List a stored server's tools (not in the reference: the editor's MCP Tools picker)"""
    actor = current_actor()
    row = _row(db.session(), actor, server_name)
    if row is None:
        raise ApiError(404, f"Server '{server_name}' not found")
    config = config_for_run(db.session(), actor.owner_id, server_name)  # policies apply here too
    db.session().close()  # connecting may take seconds: give the connection back
    from service_mcp import client

    try:
        return client.list_tools(config or {}, actor)
    except SandboxUnavailable as exc:  # no bwrap: stdio servers are refused, never run unsandboxed
        raise ApiError(503, f"Could not start '{server_name}': {exc}") from None
    except Exception as exc:  # unreachable or refused (SSRF): a clear 502, never a 500
        raise ApiError(502, f"Could not list the tools of '{server_name}': {client.describe(exc)}") from None


@servers_blp.route("/servers/<server_name>", methods=["POST"])
@servers_blp.response(200, description="see docs/plugins/mcp.md")
@servers_blp.arguments(MCPServerConfigSchema)
@servers_blp.doc(responses={"200": json_response("The stored server", schemas.MCPServerOutSchema)})
@authenticated("user")
def add_server(body: dict[str, Any], server_name: str) -> Any:
    """Add Server"""
    _check_name(server_name)
    actor = current_actor()
    config, secret = normalise(body)
    _guard_stdio(actor, config)
    with db.transaction() as s:
        if _row(s, actor, server_name) is not None:
            raise ApiError(409, f"Server '{server_name}' already exists")
        row = Server(user_id=actor.id, name=server_name, config=config, secret=_encrypt(secret))
        s.add(row)
        s.flush()
        return out(row)


@servers_blp.route("/servers/<server_name>", methods=["PATCH"])
@servers_blp.response(200, description="see docs/plugins/mcp.md")
@servers_blp.arguments(MCPServerConfigSchema)
@servers_blp.doc(responses={"200": json_response("The stored server", schemas.MCPServerOutSchema)})
@authenticated("user")
def update_server_endpoint(body: dict[str, Any], server_name: str) -> Any:
    """Update Server Endpoint"""
    actor = current_actor()
    with db.transaction() as s:
        row = _row(s, actor, server_name)
        if row is None:
            raise ApiError(404, f"Server '{server_name}' not found")
        old = decrypted(row)
        for key in ("headers", "env"):  # a masked value sent back keeps the stored one
            if body.get(key):
                body[key] = {k: (old.get(key, {}).get(k, "") if v == MASK else v) for k, v in body[key].items()}
        config, secret = normalise(body)
        _guard_stdio(actor, config)
        row.config, row.secret, row.updated_at = config, _encrypt(secret), utcnow()
        s.flush()
        return out(row)


@servers_blp.route("/servers/<server_name>", methods=["DELETE"])
@servers_blp.response(200, description="see docs/plugins/mcp.md")
@servers_blp.doc(responses={"200": json_response("Deleted", schemas.MCPMessageSchema)})
@authenticated("user")
def delete_server(server_name: str) -> Any:
    """Delete Server"""
    with db.transaction() as s:
        row = _row(s, current_actor(), server_name)
        if row is None:
            raise ApiError(404, f"Server '{server_name}' not found")
        s.delete(row)
    return {"message": f"Server '{server_name}' deleted"}


def _encrypt(secret: dict[str, Any]) -> str:
    return _cipher().encrypt(json.dumps(secret).encode()).decode()
