"""Fixtures of the A2A tests: an app with the A2A surface on, and one with it off."""

from __future__ import annotations

import pytest

from tests.a2a.a2akit import PLUGINS


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS, a2a_enabled=True)
