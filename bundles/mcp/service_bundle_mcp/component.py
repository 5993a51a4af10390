"""``MCPTools``: the tools of an MCP server, called directly or handed to an agent.

The server is one of the user's stored configs (``/api/v2/mcp/servers``, the mcp plugin), named
by the ``mcp_server`` field (``{"name": ...}`` as the reference's editor stores it, or the name).
The engine's ``RunContext.mcp_server`` gives its config; policies (``SERVICE_MCP_SERVERS_LOCKED``,
``SERVICE_MCP_SERVER_DOCKER_HARDENING``, stdio servers for superusers) are applied there, at every
run; a stdio server then starts in the sandbox (``hardening.stdio``: ``SERVICE_SANDBOX_STDIO_*``).
"""

from __future__ import annotations

from typing import Any

from core.engine import Component, ComponentError, DataFrame, Output
from core.engine.egress import EgressError
from core.engine.inputs import BoolInput, DictInput, DropdownInput, FloatInput, Input, MessageTextInput
from core.engine.tools import Tool
from core.engine.types import to_text
from service_bundle_mcp import client


class McpInput(Input):
    """The reference's ``mcp`` field: which stored MCP server (``{"name": ..., "config": {...}}``)."""

    input_type = "McpInput"
    field_type = "mcp"
    default: Any = {}


class MCPTools(Component):
    key = "MCPTools"
    display_name = "MCP Tools"
    description = "Connect to an MCP server to use its tools."
    documentation = "https://modelcontextprotocol.io"
    icon = "Mcp"
    category = "agents"
    io_bound = True
    accepts_dynamic_fields = True  # the chosen tool's arguments are fields added by the editor
    inputs = [
        McpInput("mcp_server", "MCP Server", {}, info="Select the MCP server to use", real_time_refresh=True),
        BoolInput("use_cache", "Use Cached Server", False, advanced=True, info="Reuse the tool list for 5 minutes"),
        BoolInput("verify_ssl", "Verify SSL Certificate", True, advanced=True),
        DictInput("headers", "Headers", {}, advanced=True, is_list=True, info="Extra HTTP headers for this server"),
        FloatInput("tool_execution_timeout", "Tool Execution Timeout", 0.0, advanced=True, info="Seconds; 0: none"),
        # hidden (the editor shows its own picker) but always read: override_skip
        DropdownInput(
            "tool", "Tool", "", options=[], required=True, show=False, real_time_refresh=True, override_skip=True
        ),
        MessageTextInput("tool_placeholder", "Tool Placeholder", "", show=False, tool_mode=True),
    ]
    outputs = [Output("response", "Response", "build_output", ["Table"])]

    # --- the server ------------------------------------------------------------------------------
    def server_name(self) -> str:
        value = self.mcp_server
        name = value.get("name") if isinstance(value, dict) else value
        name = to_text(name).strip() if name else ""
        if not name:
            raise ComponentError("Select an MCP server")
        return name

    def server_config(self) -> dict[str, Any]:
        name = self.server_name()
        lookup = self.context.mcp_server
        if lookup is None:
            raise ComponentError("MCP servers are not available in this run (the mcp plugin is not installed)")
        try:
            config = lookup(name)
        except Exception as exc:  # a policy refusal (ApiError) names its reason
            raise ComponentError(str(getattr(exc, "detail", exc))) from None
        if config is None:
            raise ComponentError(f"MCP server '{name}' not found")
        return config

    def _options(self) -> dict[str, Any]:
        timeout = float(self.tool_execution_timeout or 0)
        remaining = self.context.remaining_time()
        if remaining is not None:
            timeout = min(timeout, remaining) if timeout else remaining
        headers = {str(k): to_text(v) for k, v in (self.headers or {}).items() if v is not None}
        return {
            "policy": self.context.egress,
            "verify_ssl": bool(self.verify_ssl),
            "headers": headers,
            "timeout": timeout or None,
            "cancelled": self.context.cancelled,
            "sandbox": self.context.hardening.stdio,  # how a stdio server starts (SERVICE_SANDBOX_STDIO_*)
        }

    def server_tools(self) -> list[dict[str, Any]]:
        try:
            return client.list_tools(
                self.server_config(), owner=self.context.user_id, use_cache=bool(self.use_cache), **self._options()
            )
        except (client.MCPClientError, EgressError) as exc:
            raise ComponentError(str(exc)) from None

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return client.call_tool(self.server_config(), name, arguments, **self._options())
        except (client.MCPClientError, EgressError) as exc:
            raise ComponentError(str(exc)) from None

    # --- direct call -----------------------------------------------------------------------------
    def arguments_for(self, tool: dict[str, Any]) -> dict[str, Any]:
        """The tool's arguments from the node's dynamic fields; the placeholder fills a lone text argument."""
        props = (tool.get("inputSchema") or {}).get("properties") or {}
        args = {k: v for k, v in self.extra_params.items() if k in props and v not in (None, "")}
        text = to_text(self.tool_placeholder) if self.tool_placeholder else ""
        if text:
            free = [k for k, spec in props.items() if k not in args and (spec or {}).get("type", "string") == "string"]
            if len(free) == 1:
                args[free[0]] = text
        return args

    def build_output(self) -> DataFrame:
        if not self.tool:
            raise ComponentError("Select a tool")
        tools = {t["name"]: t for t in self.server_tools()}
        if self.tool not in tools:
            raise ComponentError(f"Tool '{self.tool}' not found on MCP server '{self.server_name()}'")
        result = self.call(self.tool, self.arguments_for(tools[self.tool]))
        if result["is_error"]:
            raise ComponentError(f"Tool '{self.tool}' failed: {_text(result)}")
        self.status = _text(result)
        return DataFrame(_rows(result))

    # --- agent tools -----------------------------------------------------------------------------
    def as_tools(self) -> list[Tool]:
        """One :class:`core.engine.tools.Tool` per tool of the server (its schema, a call of it)."""
        server = self.server_name()
        out = []
        for tool in self.server_tools():
            name = tool["name"]

            def call(_name: str = name, **arguments: Any) -> str:
                result = self.call(_name, arguments)
                if result["is_error"]:
                    raise ComponentError(_text(result))
                return _text(result)

            schema = tool.get("inputSchema") or {"type": "object", "properties": {}}
            out.append(Tool(name, tool.get("description") or name, call, schema, tags=["mcp", server]))
        return out


def _text(result: dict[str, Any]) -> str:
    return "\n".join(str(c.get("text", "")) for c in result["content"] if c.get("type") == "text")


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    structured = result.get("structured")
    if isinstance(structured, dict):
        inner = structured.get("result")
        if isinstance(inner, list) and all(isinstance(r, dict) for r in inner):
            return inner
        return [structured]
    return [
        {"text": c.get("text", ""), "type": c.get("type")} if c.get("type") == "text" else c for c in result["content"]
    ]
