"""Fixtures of the versions tests: accounts, flows and versions (the run surfaces' tests load every plugin)."""

from __future__ import annotations

import pytest


@pytest.fixture
def app(make_app):
    return make_app(plugins=["accounts", "flows", "versions"])
