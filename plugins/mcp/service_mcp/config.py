"""The MCP plugin's settings (``SERVICE_MCP_*``), a section of its own.

Every MCP setting, the spec's (``SERVICE_MCP_SERVER_DOCKER_HARDENING``,
``SERVICE_MCP_BASE_URL``, ``SERVICE_MCP_SERVERS_LOCKED``; ``/api/v1/config``
shows the last two through ``extend_config``) and this plugin's own. Read it
with :func:`settings`.

``SERVICE_MCP_STDIO_ALLOWED_COMMANDS`` (issue 26; default empty): stdio servers run a program on the
server, so only superusers define them; this list names the commands (exact ``command`` strings,
e.g. ``/opt/mcp/bin/mcp-server-time``) an ordinary user may name too. Every stdio server, allowed or
not, starts in the sandbox (core settings ``SERVICE_SANDBOX_STDIO_*``).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.appstate import SettingsReader
from core.records import SettingsSection


@dataclass(frozen=True)
class MCPConfig:
    # --- the spec's ----------------------------------------------------------------------------
    #: public base URL of the MCP endpoints shown to clients (empty: the request's own host)
    base_url: str = ""
    #: only superusers may add or change stdio MCP server configurations (the allow-list below does not apply)
    servers_locked: bool = False
    #: run stdio MCP servers under the Docker hardening flags
    server_docker_hardening: bool = False
    # --- this plugin's own ------------------------------------------------------------------------
    #: stdio commands an ordinary user may name (exact ``command``; empty: superusers only) (issue 26)
    stdio_allowed_commands: tuple[str, ...] = ()
    #: hand out ``Mcp-Session-Id`` sessions on ``initialize`` (state in the shared store); off: stateless
    sessions: bool = False
    #: answer Streamable HTTP requests with one JSON body instead of an SSE stream (the reference frames as SSE)
    json_response: bool = False
    #: serve the legacy SSE transport (``GET .../sse`` + ``POST`` messages); off answers 404
    sse_enabled: bool = True
    #: idle lifetime of a session (Streamable HTTP or SSE) in the shared store
    session_ttl_seconds: int = 3600
    #: how often an open SSE stream checks whether its tools changed (``notifications/tools/list_changed``)
    tools_poll_seconds: float = 2.0
    #: keep-alive comment interval of open SSE streams
    keepalive_seconds: float = 15.0
    #: let ``POST .../install`` write the MCP client's config file on this machine (off: only the snippet)
    write_client_config: bool = False


#: the section ``register_settings`` declares, and ``settings()``: the parsed one in force (typed)
SECTION = SettingsSection("mcp", MCPConfig, "SERVICE_MCP_")
settings = SettingsReader(MCPConfig)
