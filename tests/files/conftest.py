"""Fixtures of the files tests: accounts, flows, files (and run + the files bundle for component tests)."""

from __future__ import annotations

import io

import pytest

PLUGINS = ["accounts", "flows", "files"]


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)


def upload(client, caller, content: bytes, name: str = "notes.txt", query: str = ""):
    return client.post(
        f"/api/v2/files{query}",
        data={"file": (io.BytesIO(content), name)},
        headers=caller.bearer,
        content_type="multipart/form-data",
    )


def make_flow(client, caller, name: str = "flow") -> str:
    response = client.post(
        "/api/v1/flows/", json={"name": name, "data": {"nodes": [], "edges": []}}, headers=caller.bearer
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]
