"""Hook implementations of the MCP plugin (thin: the logic is in services, tools, transport)."""

from __future__ import annotations

from pathlib import Path

from core import hookimpl
from core.contracts import McpServerConfig
from core.records import Migrations

#: the hooks this plugin publishes: what it asks of projects and flows (the flows plugin answers)
HOOKSPECS = "service_mcp.hookspecs"


@hookimpl
def register_settings():
    from service_mcp.config import SECTION

    return [SECTION]


@hookimpl
def register_blueprints():
    from service_mcp.resources import projects_blp, transport_bp, well_known_bp
    from service_mcp.servers import servers_blp

    return [projects_blp, transport_bp, well_known_bp, servers_blp]


@hookimpl
def register_migrations():
    return [Migrations("mcp", Path(__file__).parent / "migrations")]


@hookimpl
def on_app_created(app):
    """Warn about stored stdio servers that will not start (an ordinary user's, from before issue 26)."""
    from core import db
    from service_mcp import servers

    with app.app_context():
        servers.warn_unapproved_stdio_servers(db.session())


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from core import db
    from service_mcp import servers

    servers.delete_user_rows(db.session(), user_id)


@hookimpl
def mcp_server_config(user_id: str, name: str) -> McpServerConfig | None:
    from core import db
    from service_mcp import servers

    config = servers.config_for_run(db.session(), user_id, name)
    if config is None:
        return None
    args = config.get("args")
    return McpServerConfig(
        name=str(config.get("name") or name),
        transport=str(config.get("transport") or ("stdio" if config.get("command") else "streamablehttp")),
        url=config.get("url"),
        headers=config.get("headers"),
        command=config.get("command"),
        args=tuple(args) if args is not None else None,
        env=config.get("env"),
    )


@hookimpl(optionalhook=True)  # the variables plugin publishes it (service secret-key rotate)
def reencrypt_secrets(cipher):
    from core import db
    from service_mcp import services

    return services.reencrypt(db.session(), cipher)


@hookimpl
def extend_config(actor, public):
    """``mcp_base_url`` and ``mcp_servers_locked`` of ``/api/v1/config`` (``SERVICE_MCP_*``)."""
    from service_mcp.config import settings

    cfg = settings()
    return {"mcp_base_url": cfg.base_url, "mcp_servers_locked": cfg.servers_locked}
