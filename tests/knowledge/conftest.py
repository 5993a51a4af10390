"""Fixtures of the knowledge tests: accounts, flows, files, knowledge (and run + bundles for flows)."""

from __future__ import annotations

import io
import time

import pytest

PLUGINS = ["accounts", "flows", "files", "knowledge", "run", "standard", "documents"]


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)


def create_kb(client, caller, name="docs", **body):
    response = client.post("/api/v1/knowledge_bases/", json={"name": name, **body}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def upload(client, caller, content: bytes, name: str) -> dict:
    response = client.post("/api/v2/files", data={"file": (io.BytesIO(content), name)}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def ingest(client, caller, name, **body):
    response = client.post(f"/api/v1/knowledge_bases/{name}/ingest", json=body, headers=caller.bearer)
    assert response.status_code == 202, response.get_json()
    return response.get_json()["job_id"]


def wait_kb(client, caller, name, timeout=180.0, until=("ready", "failed")):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kb = client.get(f"/api/v1/knowledge_bases/{name}", headers=caller.bearer).get_json()
        if kb["status"] in until:
            return kb
        time.sleep(0.2)
    raise AssertionError(f"knowledge base {name} still {kb['status']}")


def wait_job(client, caller, name, job_id, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        job = client.get(f"/api/v1/knowledge_bases/{name}/jobs/{job_id}", headers=caller.bearer).get_json()
        if job["state"] in ("finished", "failed", "cancelled"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still {job['state']}")
