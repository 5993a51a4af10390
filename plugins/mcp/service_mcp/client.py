"""List a stored server's tools: ``GET /api/v2/mcp/servers?action_count=true`` and ``.../{name}/tools``
(the editor's tool picker).

Like the bundle's client (plugins and bundles never import each other): connect with
the official ``mcp`` SDK, list the tools, disconnect; HTTP servers pass the egress rules first and the
SDK's HTTP client connects to the checked address only (no second DNS lookup: no rebinding window).
Stdio servers start inside the sandbox (:func:`core.sandbox.stdio_server`; refused without it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from core import appstate
from core.auth import Actor
from core.engine.egress import EgressPolicy, check_url, pinned_http_client
from core.sandbox import StdioSandbox, stdio_server

TIMEOUT = 10.0


def describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def mcp_http_client(host: str, address: str, verify_ssl: bool = True) -> Callable[..., Any]:
    """The SDK's HTTP client pinned to the egress check's address (:func:`core.engine.egress.pinned_http_client`),
    with the SDK's default timeouts."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return pinned_http_client(host, address, verify_ssl, default_timeout=timeout)


def list_tools(config: dict[str, Any], actor: Actor) -> list[dict[str, Any]]:
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    if config["transport"] == "stdio":
        return _list_stdio(config)
    settings = appstate.settings()
    _scheme, host, _port, address = check_url(
        config["url"], EgressPolicy.from_settings(settings.ssrf_protection_enabled, settings.ssrf_allowed_hosts)
    )
    factory = mcp_http_client(host, str(address))
    headers = config.get("headers") or {}
    transport: Any
    if config["transport"] == "sse":
        transport = sse_client(config["url"], headers=headers, httpx_client_factory=factory)
    else:
        transport = streamable_http_client(config["url"], http_client=factory(headers=headers))
    return _list(transport)


def _list_stdio(config: dict[str, Any]) -> list[dict[str, Any]]:
    """Start the server in the sandbox (``SandboxUnavailable`` without it), list, stop it."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    argv = [config["command"], *(config.get("args") or [])]
    policy = StdioSandbox.from_settings(appstate.settings())
    with stdio_server(argv, dict(config.get("env") or {}), policy) as launch:
        params = StdioServerParameters(command=launch.command, args=launch.args, env=launch.env or None)
        try:
            return _list(stdio_client(params))
        except Exception:
            if launch.killed:
                raise RuntimeError(f"the server was stopped: {launch.killed} (SERVICE_SANDBOX_DISK_MB)") from None
            raise


def _list(transport: Any) -> list[dict[str, Any]]:
    from mcp import Client

    async def main() -> list[dict[str, Any]]:
        with anyio.fail_after(TIMEOUT):
            async with Client(transport) as client:
                listed = await client.list_tools()
                return [
                    {"name": t.name, "description": t.description or "", "inputSchema": dict(t.input_schema or {})}
                    for t in listed.tools
                ]

    return anyio.run(main)
