"""Hook implementations of the MCP bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl


def all_components() -> list[type]:
    from service_bundle_mcp.component import MCPTools

    return [MCPTools]


@hookimpl
def register_components() -> list[type]:
    return all_components()
