"""Fixtures of the catalog tests: the app of the catalog endpoints (the catalog plugin over the standard bundle)."""

from __future__ import annotations

import pytest

#: what the catalog endpoints need: accounts (callers), the catalog plugin, components to list (no run plugin)
PLUGINS = ["accounts", "catalog", "standard"]


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)
