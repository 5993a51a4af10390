"""Fixtures of the MCP tests: the installed plugins and a project with two tool flows."""

from __future__ import annotations

import pytest

PLUGINS = ["accounts", "flows", "variables", "run", "monitor", "mcp", "standard"]


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)
