"""List a stored server's tools: ``GET /api/v2/mcp/servers?action_count=true`` and ``.../{name}/tools``
(the editor's tool picker).

A small copy of the bundle's client (plugins and bundles never import each other): connect with
the official ``mcp`` SDK, list the tools, disconnect; HTTP servers pass the egress rules first.
"""

from __future__ import annotations

from typing import Any

import anyio

from core.app import state
from core.auth import Actor
from core.engine.egress import EgressPolicy, check_url

TIMEOUT = 10.0


def describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def list_tools(config: dict[str, Any], actor: Actor) -> list[dict[str, Any]]:
    from mcp import Client
    from mcp.client.sse import sse_client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    if config["transport"] == "stdio":
        transport: Any = stdio_client(
            StdioServerParameters(
                command=config["command"], args=config.get("args") or [], env=config.get("env") or None
            )
        )
    else:
        settings = state().settings
        check_url(
            config["url"], EgressPolicy.from_settings(settings.ssrf_protection_enabled, settings.ssrf_allowed_hosts)
        )
        headers = config.get("headers") or {}
        if config["transport"] == "sse":
            transport = sse_client(config["url"], headers=headers)
        else:
            transport = streamable_http_client(config["url"], http_client=create_mcp_http_client(headers=headers))

    async def main() -> list[dict[str, Any]]:
        with anyio.fail_after(TIMEOUT):
            async with Client(transport) as client:
                listed = await client.list_tools()
                return [
                    {"name": t.name, "description": t.description or "", "inputSchema": dict(t.input_schema or {})}
                    for t in listed.tools
                ]

    return anyio.run(main)
