"""Fixtures of the flows tests: an app with only the accounts and flows plugins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REFERENCE_FLOWS = Path("/work/shared/reference/flows")
FIXTURE_NAMES = ("chat-echo.json", "data-operations-uppercase.json", "webhook-parser-chat.json")


@pytest.fixture
def app(make_app):
    return make_app(plugins=["accounts", "flows"])


def reference_flow(name: str) -> dict:
    path = REFERENCE_FLOWS / name
    if not path.exists():  # a copy ships with the tests for machines without the shared folder
        path = Path(__file__).parent / "fixtures" / name
    return json.loads(path.read_text(encoding="utf-8"))
