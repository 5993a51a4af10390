"""Fixtures of the host-reach tests: an app with every bundle, an ordinary user, and a run context for them."""

from __future__ import annotations

from typing import Any

import pytest

from core.engine import RunContext
from tests.conftest import make_user, superuser

PLUGINS = ["accounts", "flows", "files", "knowledge", "run", "build", "standard", "documents", "data"]
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def alice(client):
    return make_user(client, superuser(client), username="alice")


def run_context(app: Any, user_id: str) -> RunContext:
    """The context the run service gives ``user_id``'s runs (the app's real hardening, egress and file hooks)."""
    from core.runs import make_context

    with app.app_context():
        return make_context(user_id=user_id, flow={"id": None, "data": {}}, log_builds=False, log_transactions=False)


def build(component_class: type, context: RunContext, **params: Any) -> Any:
    """``component_class`` with its defaults and ``params``, in ``context``."""
    return component_class({**{i.name: i.value for i in component_class.inputs}, **params}, context=context)
