"""A real MCP server built with the official SDK's server side, for the MCP Tools component tests.

``python sdk_server.py stdio`` or ``python sdk_server.py http <port>`` (Streamable HTTP at /mcp).
``pid`` answers the server's process id, so a test can check the child process was cleaned up.
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("test-tools")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def sleep(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "slept"


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        from mcp.server.transport_security import TransportSecuritySettings

        # the SDK's default Host allow-list for loopback, plus the name the rebinding test resolves itself
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "rebind.test:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
        )
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), transport_security=security)
