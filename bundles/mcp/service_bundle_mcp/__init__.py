"""The MCP Tools component: a flow uses the tools of any MCP server (official ``mcp`` client SDK)."""
