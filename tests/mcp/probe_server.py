"""A stdio MCP server that reports what it sees of its host (for the sandbox tests of stdio servers).

``python probe_server.py``; its one tool ``probe(paths, port)`` answers the environments (its own and
``/proc/1/environ``), its pid, ``/etc/passwd``, which of ``paths`` exist, its working dir, and whether a
TCP connection to ``127.0.0.1:port`` opens.
"""

from __future__ import annotations

import json
import os
import socket
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("probe")


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"<{type(exc).__name__}>"


@server.tool()
def probe(paths: str = "", port: int = 0) -> str:
    """What the server sees of its host (``paths``: comma-separated)."""
    connect = ""
    if port:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            connect = "connected"
        except OSError as exc:
            connect = f"<{type(exc).__name__}>"
    return json.dumps(
        {
            "proc1": _read("/proc/1/environ"),
            "self": _read("/proc/self/environ"),
            "environ": dict(os.environ),
            "pid": os.getpid(),
            "passwd": _read("/etc/passwd"),
            "paths": {p: os.path.exists(p) for p in paths.split(",") if p},
            "cwd": os.getcwd(),
            "connect": connect,
            "caps": _read("/proc/self/status").split("CapEff:")[-1].split()[0],
        }
    )


@server.tool()
def fill(megabytes: int) -> str:
    """Write ``megabytes`` MB to /tmp in 64 KB files, then keep them for up to 10 s: a quota watched from
    outside (polling) must kill the server while it holds them, however fast the disk wrote them."""
    os.makedirs("/tmp/fill", exist_ok=True)
    chunk = b"x" * 65536
    for i in range(megabytes * 16):
        with open(f"/tmp/fill/{i}", "wb") as f:
            f.write(chunk)
    time.sleep(10)
    return "filled"


@server.tool()
def limits(megabytes: int = 0) -> str:
    """The server's own resource limits; then try to hold ``megabytes`` MB of memory."""
    import resource

    held = "not tried"
    if megabytes:
        try:
            block = bytearray(megabytes * 1024 * 1024)
            held = f"held {len(block) // (1024 * 1024)} MB"
        except MemoryError:
            held = "MemoryError"
    return json.dumps(
        {
            "as": resource.getrlimit(resource.RLIMIT_AS)[0],
            "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
            "core": resource.getrlimit(resource.RLIMIT_CORE)[0],
            "held": held,
        }
    )


if __name__ == "__main__":
    server.run("stdio")
