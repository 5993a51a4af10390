"""A queued run that pauses and is resumed: two executions (a resume is a new run), the first ``paused``, the
second ``ok``; the id told at enqueue (``on_run_queued``) is never reused by the resume."""

from __future__ import annotations

import time

import pytest

from tests.build.buildkit import SlowBundle
from tests.triggers.conftest import TRIGGERS
from tests.triggers.test_executions import executions, settle
from tests.workflows.wfkit import chain, flow_with

URL = "/api/v2/workflows"


@pytest.fixture
def app(make_app, recorder):
    return make_app(
        plugins=[*TRIGGERS, "workflows", ("recorder", recorder), ("slowtest", SlowBundle())], triggers_tick_s=0
    )


def _wait(client, caller, job_id, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        body = client.get(f"{URL}?job_id={job_id}", headers=caller.key).get_json()
        if body["status"] not in ("queued", "in_progress"):
            return body
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end: {body}")


def test_a_paused_background_run_and_its_resume_are_two_executions(app, client, alice):
    flow_id = flow_with(client, alice, chain(("AskApproval", "AskApproval-CCCCC", {})))
    started = client.post(
        URL, json={"flow_id": flow_id, "mode": "background", "input_value": "ship it"}, headers=alice.key
    )
    assert started.status_code == 200, started.get_json()
    job_id = started.get_json()["job_id"]
    paused = _wait(client, alice, job_id)
    assert paused["status"] == "suspended"
    decision = {"request_id": paused["human_request"]["request_id"], "decision": "yes"}
    resumed = client.post(f"{URL}/{job_id}/resume", json=decision, headers=alice.key)
    assert resumed.status_code == 200, resumed.get_json()
    assert _wait(client, alice, resumed.get_json()["job_id"])["status"] == "completed"
    settle(app)
    found = executions(client, alice, flow_id=flow_id)
    assert sorted(e["status"] for e in found) == ["ok", "paused"]
    assert len({e["id"] for e in found}) == 2
