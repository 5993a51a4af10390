"""The MCP plugin: project MCP servers (Streamable HTTP and legacy SSE), their settings, and
per-user MCP server configs for the ``MCP Tools`` component."""

__version__ = "0.1.0"
