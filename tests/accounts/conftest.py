"""Fixtures of the accounts plugin's tests."""

from __future__ import annotations

import pytest

from tests.accounts.helpers import SECRET, STRONG


@pytest.fixture
def strict_app(make_app):
    """Multi-user mode: auto-login off, a real superuser password, public sign-up on."""
    return make_app(auto_login=False, superuser="admin", superuser_password=STRONG, secret_key=SECRET)


@pytest.fixture
def strict_client(strict_app):
    return strict_app.test_client()
