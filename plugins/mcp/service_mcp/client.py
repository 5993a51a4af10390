"""List a stored server's tools: ``GET /api/v2/mcp/servers?action_count=true`` and ``.../{name}/tools``
(the editor's tool picker).

Like the bundle's client (plugins and bundles never import each other): connect with
the official ``mcp`` SDK, list the tools, disconnect; HTTP servers pass the egress rules first and the
SDK's HTTP client connects to the checked address only (no second DNS lookup: no rebinding window).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from core.app import state
from core.auth import Actor
from core.engine.egress import EgressPolicy, check_url, pinned_http_client

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
    from mcp import Client
    from mcp.client.sse import sse_client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if config["transport"] == "stdio":
        transport: Any = stdio_client(
            StdioServerParameters(
                command=config["command"], args=config.get("args") or [], env=config.get("env") or None
            )
        )
    else:
        settings = state().settings
        _scheme, host, _port, address = check_url(
            config["url"], EgressPolicy.from_settings(settings.ssrf_protection_enabled, settings.ssrf_allowed_hosts)
        )
        factory = mcp_http_client(host, str(address))
        headers = config.get("headers") or {}
        if config["transport"] == "sse":
            transport = sse_client(config["url"], headers=headers, httpx_client_factory=factory)
        else:
            transport = streamable_http_client(config["url"], http_client=factory(headers=headers))

    async def main() -> list[dict[str, Any]]:
        with anyio.fail_after(TIMEOUT):
            async with Client(transport) as client:
                listed = await client.list_tools()
                return [
                    {"name": t.name, "description": t.description or "", "inputSchema": dict(t.input_schema or {})}
                    for t in listed.tools
                ]

    return anyio.run(main)
