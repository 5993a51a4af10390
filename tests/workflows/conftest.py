"""Fixtures of the v2 workflows tests."""

from __future__ import annotations

import pytest

from tests.workflows.wfkit import plugins


@pytest.fixture
def app(make_app):
    return make_app(plugins=plugins())
