"""List a stored server's tools: ``GET /api/v2/mcp/servers?action_count=true`` and ``.../{name}/tools``
(the editor's tool picker).

A small copy of the bundle's client (plugins and bundles never import each other): connect with
the official ``mcp`` SDK, list the tools, disconnect; HTTP servers pass the egress rules first and the
SDK's HTTP client connects to the checked address only (no second DNS lookup: no rebinding window).
"""

from __future__ import annotations

from collections.abc import Callable
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


class _PinnedBackend:
    """An ``httpcore2`` network backend that connects the checked host to its checked address only.

    ``connect_tcp`` is the one place the HTTP client turns a host name into a socket: the name the
    egress helper checked goes to the address it checked (no resolver involved); any other name (the
    SDK follows redirects within the origin only, so this is never legitimate) is refused.
    """

    def __init__(self, host: str, address: str) -> None:
        from httpcore2 import AnyIOBackend

        self.host = host.lower().rstrip(".")
        self.address = address
        self._backend = AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, **kw: Any) -> Any:
        import httpcore2

        if host.lower().rstrip(".") != self.host:
            raise httpcore2.ConnectError(f"Connection to '{host}' refused: not the checked host")
        return await self._backend.connect_tcp(self.address, port, **kw)

    async def connect_unix_socket(self, path: str, **kw: Any) -> Any:
        raise OSError("Unix sockets are not used for MCP servers")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def pinned_http_client(host: str, address: str, verify_ssl: bool = True) -> Callable[..., Any]:
    """A factory of the SDK's ``httpx2.AsyncClient`` (its ``McpHttpClientFactory`` shape) whose
    connections go to ``address``, the egress helper's checked address of ``host``."""
    import httpcore2
    import httpx2
    from httpx2._config import create_ssl_context
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    def factory(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        transport = httpx2.AsyncHTTPTransport(verify=verify_ssl)
        transport._pool = httpcore2.AsyncConnectionPool(  # the pool httpx2 builds, with our backend
            ssl_context=create_ssl_context(verify=verify_ssl),
            network_backend=_PinnedBackend(host, address),
        )
        kwargs: dict[str, Any] = {
            "transport": transport,
            "timeout": timeout or httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
            "trust_env": False,  # no proxy from the environment: the connection is ours to pin
        }
        if headers is not None:
            kwargs["headers"] = headers
        if auth is not None:
            kwargs["auth"] = auth
        return httpx2.AsyncClient(**kwargs)

    return factory


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
        factory = pinned_http_client(host, str(address))
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
