"""Fixtures of the variables tests: an app with only the accounts and variables plugins."""

from __future__ import annotations

import pytest

SECRET = "the-old-secret-key-of-this-test-suite-0123456789"


@pytest.fixture
def app(make_app):
    return make_app(plugins=["accounts", "variables"], secret_key=SECRET)
