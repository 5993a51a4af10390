"""Talk to one MCP server with the official ``mcp`` client SDK, from synchronous engine code.

Each operation (list the tools, call one) opens a connection, does its work and closes it inside
one ``anyio.run``: a stdio server's child process lives exactly as long as the operation and is
terminated by the SDK when it ends, fails, times out or the run is cancelled (a watcher polls the
run's cancel flag and cancels the operation). HTTP servers are checked by the engine's egress
rules first (``core.engine.egress.check_url``: SSRF protection, allowed hosts), and the SDK's HTTP
client then connects to the checked address only (:func:`core.engine.egress.pinned_http_client`): no second DNS lookup,
so no rebinding window; the Host header and TLS (SNI, certificate) still use the host name.
A stdio server starts inside the sandbox (:func:`core.sandbox.stdio_server` with the run's
``hardening.stdio`` settings): empty environment but its config's ``env``, none of the host's files but
``/usr`` and the admin's binds, no network by default; without the sandbox it is refused.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from core.engine.egress import EgressPolicy, check_url, pinned_http_client
from core.engine.lazy import lazy_import
from core.sandbox import SandboxUnavailable, StdioLaunch, StdioSandbox, stdio_server

if TYPE_CHECKING:
    import anyio
else:  # anyio (about 25 ms) when the component first talks to a server, not when the catalog loads
    anyio = lazy_import("anyio")

#: tool listings kept per (user, server config) when a component asks for the cache
CACHE_TTL = 300.0
_cache: dict[str, tuple[float, list[dict[str, Any]]]] = {}
_cache_lock = threading.Lock()


class MCPClientError(RuntimeError):
    """The server could not be reached or answered with an error."""


def _root(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """A short message for any failure (exception groups of anyio unwrapped)."""
    exc = _root(exc)
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, MCPClientError) else f"{type(exc).__name__}: {text}"


def mcp_http_client(host: str, address: str, verify_ssl: bool = True) -> Callable[..., Any]:
    """The SDK's HTTP client pinned to the egress check's address (:func:`core.engine.egress.pinned_http_client`),
    with the SDK's default timeouts."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return pinned_http_client(host, address, verify_ssl, default_timeout=timeout)


def _kind(config: dict[str, Any]) -> str:
    return str(config.get("transport") or ("stdio" if config.get("command") else "streamablehttp"))


def _transport(
    config: dict[str, Any],
    policy: EgressPolicy,
    verify_ssl: bool,
    extra_headers: dict[str, str],
    launch: StdioLaunch | None,
) -> Any:
    from mcp.client.sse import sse_client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    kind = _kind(config)
    if kind == "stdio":
        assert launch is not None  # run_with starts every stdio server through the sandbox
        return stdio_client(StdioServerParameters(command=launch.command, args=launch.args, env=launch.env or None))
    url = str(config.get("url") or "")
    _scheme, host, _port, address = check_url(url, policy)  # EgressBlocked for private addresses unless allowed
    factory = mcp_http_client(host, str(address), verify_ssl)
    headers = {**(config.get("headers") or {}), **extra_headers}
    if kind == "sse":
        return sse_client(url, headers=headers, httpx_client_factory=factory)
    return streamable_http_client(url, http_client=factory(headers=headers))


def run_with(
    config: dict[str, Any],
    work: Callable[[Any], Awaitable[Any]],
    *,
    policy: EgressPolicy,
    verify_ssl: bool = True,
    headers: dict[str, str] | None = None,
    timeout: float | None = None,
    cancelled: Callable[[], bool] | None = None,
    sandbox: StdioSandbox | None = None,
) -> Any:
    """Connect, ``await work(client)``, disconnect; raise :class:`MCPClientError` on any failure.

    A stdio server starts in the sandbox of ``sandbox`` (default: the safe defaults) for this operation."""
    if _kind(config) != "stdio":
        return _run_with(config, work, policy, verify_ssl, headers, timeout, cancelled, None)
    argv = [str(config.get("command") or ""), *(config.get("args") or [])]
    try:
        with stdio_server(argv, dict(config.get("env") or {}), sandbox or StdioSandbox()) as launch:
            try:
                return _run_with(config, work, policy, verify_ssl, headers, timeout, cancelled, launch)
            except MCPClientError:
                if launch.killed:
                    raise MCPClientError(
                        f"MCP server {config.get('name') or ''} was stopped: {launch.killed} (SERVICE_SANDBOX_DISK_MB)"
                    ) from None
                raise
    except SandboxUnavailable as exc:
        raise MCPClientError(str(exc)) from None


def _run_with(
    config: dict[str, Any],
    work: Callable[[Any], Awaitable[Any]],
    policy: EgressPolicy,
    verify_ssl: bool,
    headers: dict[str, str] | None,
    timeout: float | None,
    cancelled: Callable[[], bool] | None,
    launch: StdioLaunch | None,
) -> Any:
    from mcp import Client

    async def main() -> Any:
        result: list[Any] = []
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while True:
                    await anyio.sleep(0.2)
                    if cancelled is not None and cancelled():
                        group.cancel_scope.cancel()
                        return

            async def operate() -> None:
                with anyio.fail_after(timeout) if timeout else _nothing():
                    async with Client(_transport(config, policy, verify_ssl, headers or {}, launch)) as client:
                        result.append(await work(client))
                group.cancel_scope.cancel()

            group.start_soon(watch)
            group.start_soon(operate)
        if not result:
            raise MCPClientError("The run was cancelled")
        return result[0]

    try:
        return anyio.run(main)
    except MCPClientError:
        raise
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        if isinstance(_root(exc), TimeoutError):
            raise MCPClientError(f"The MCP server did not answer within {timeout:g} seconds") from None
        raise MCPClientError(
            f"MCP server {config.get('name') or ''} failed: {describe(exc)}".replace("  ", " ")
        ) from None


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _key(owner: str | None, config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps([owner, config], sort_keys=True, default=str).encode()).hexdigest()


def list_tools(config: dict[str, Any], *, owner: str | None, use_cache: bool, **kw: Any) -> list[dict[str, Any]]:
    """``[{name, description, inputSchema}]`` of the server (cached per user and config when asked)."""
    key = _key(owner, config)
    if use_cache:
        with _cache_lock:
            hit = _cache.get(key)
        if hit is not None and time.monotonic() - hit[0] < CACHE_TTL:
            return hit[1]

    async def work(client: Any) -> list[dict[str, Any]]:
        listed = await client.list_tools()
        return [
            {"name": t.name, "description": t.description or "", "inputSchema": dict(t.input_schema or {})}
            for t in listed.tools
        ]

    tools: list[dict[str, Any]] = run_with(config, work, **kw)
    with _cache_lock:
        _cache[key] = (time.monotonic(), tools)
    return tools


def call_tool(config: dict[str, Any], name: str, arguments: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """``{is_error, content: [items], structured}`` of one call."""

    async def work(client: Any) -> dict[str, Any]:
        result = await client.call_tool(name, arguments)
        return {
            "is_error": bool(result.is_error),
            "content": [c.model_dump(mode="json", exclude_none=True) for c in result.content],
            "structured": result.structured_content,
        }

    out: dict[str, Any] = run_with(config, work, **kw)
    return out
