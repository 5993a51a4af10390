"""Fixtures of the flows tests: an app with only the accounts and flows plugins."""

from __future__ import annotations

import pytest

FIXTURE_NAMES = ("chat-echo.json", "data-operations-uppercase.json", "webhook-parser-chat.json")


@pytest.fixture
def app(make_app):
    return make_app(plugins=["accounts", "flows"])


def secret_flow(name: str = "with-secret", **extra) -> dict:
    """A flow with a password field, a variable reference and a plain field (in a nested group too)."""
    template = {
        "_type": "Component",
        "api_key": {"name": "api_key", "type": "str", "password": True, "value": "sk-live-123", "show": True},
        "var_key": {"name": "var_key", "type": "str", "password": True, "load_from_db": True, "value": "MY_VAR"},
        "model": {"name": "model", "type": "str", "password": False, "value": "gpt-x"},
    }
    inner = {
        "nodes": [
            {
                "id": "Y-1",
                "type": "genericNode",
                "data": {
                    "id": "Y-1",
                    "type": "Thing",
                    "node": {"template": {"token": {"name": "token", "password": True, "value": "nested-secret"}}},
                },
            }
        ],
        "edges": [],
    }
    nodes = [
        {"id": "X-1", "type": "genericNode", "data": {"id": "X-1", "type": "Model", "node": {"template": template}}},
        {
            "id": "G-1",
            "type": "genericNode",
            "data": {"id": "G-1", "type": "GroupNode", "node": {"template": {}, "flow": {"data": inner}}},
        },
    ]
    return {"name": name, "data": {"nodes": nodes, "edges": [], "viewport": {"x": 0, "y": 0, "zoom": 1}}, **extra}


def template_of(flow: dict, node_id: str = "X-1") -> dict:
    node = next(n for n in flow["data"]["nodes"] if n["id"] == node_id)
    return node["data"]["node"]["template"]


def nested_template(flow: dict) -> dict:
    group = next(n for n in flow["data"]["nodes"] if n["id"] == "G-1")
    return group["data"]["node"]["flow"]["data"]["nodes"][0]["data"]["node"]["template"]
