"""A task with a job reads its state from the job store: the task row keeps the mapping, not a copy of the state."""

from __future__ import annotations

import time
import uuid

import sqlalchemy as sa

from core.app import state
from tests.a2a.a2akit import agent, project, rpc, user_message
from tests.a2a.a2akit import post_rpc as _rpc
from tests.a2a.a2akit import task_row as _row
from tests.build.buildkit import slow_flow
from tests.run.runkit import chat_echo


def _get(client, flow_id, task_id, headers=None):
    return _rpc(client, flow_id, rpc("tasks/get", {"id": task_id}), headers).get_json()["result"]


def _until(client, flow_id, task_id, wanted, headers=None, timeout=15.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        task = _get(client, flow_id, task_id, headers)
        if task["status"]["state"] == wanted:
            return task
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never became {wanted}: {task}")


def test_a_job_task_shows_its_jobs_state_and_the_row_keeps_the_mapping(app, client, admin):
    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    params = {"message": user_message("polled"), "configuration": {"blocking": False}}
    task = _rpc(client, flow_id, rpc("message/send", params), admin.key).get_json()["result"]
    done = _until(client, flow_id, task["id"], "completed", admin.key)
    assert done["artifacts"][0]["parts"][0]["text"] == "polled"
    row = _row(app, task["id"])
    info = state(app).jobs.info(row["job_id"])
    assert info is not None and info.state.value == "finished"
    # the row holds the task <-> job mapping, its context and history, and the ending once the job ended
    # (archived on the first read after it: the job store forgets the job after its TTL)
    assert row["state"] == "completed" and row["answer"] == "polled" and row["status_text"] is None
    assert row["context_id"] == done["contextId"] and row["request"]["parts"][0]["text"] == "polled"


def test_a_cancelled_job_is_a_canceled_task_at_once(app, client, admin):
    folder = project(client, admin, "none")
    flow_id = agent(client, admin, slow_flow(10), folder_id=folder)
    params = {"message": user_message("slow"), "configuration": {"blocking": False}}
    task = _rpc(client, flow_id, rpc("message/send", params)).get_json()["result"]
    row = _row(app, task["id"])
    assert state(app).jobs.cancel(row["job_id"])  # cancelled through the job store, not the A2A surface
    assert _get(client, flow_id, task["id"])["status"]["state"] == "canceled"
    # the row never follows a running job; once the cancelled job has ended, it keeps the ending
    assert _row(app, task["id"])["state"] in ("submitted", "canceled")


def _lose_job(app, task_id):
    from service_a2a.models import Task

    from core import db

    with app.app_context(), db.transaction() as s:  # its job expired (or the server lost it)
        s.execute(sa.update(Task).where(Task.__table__.c.id == uuid.UUID(task_id)).values(job_id="no-such-job"))


def test_a_task_whose_job_is_gone_before_it_ended_failed(app, client, admin):
    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, slow_flow(10), folder_id=folder)
    params = {"message": user_message("gone"), "configuration": {"blocking": False}}
    task = _rpc(client, flow_id, rpc("message/send", params), admin.key).get_json()["result"]
    assert _get(client, flow_id, task["id"], admin.key)["status"]["state"] in ("submitted", "working")
    _lose_job(app, task["id"])
    got = _get(client, flow_id, task["id"], admin.key)
    assert got["status"]["state"] == "failed"
    assert "its run is gone" in got["status"]["message"]["parts"][0]["text"]


def test_an_ended_task_keeps_its_ending_after_its_job_is_gone(app, client, admin):
    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    params = {"message": user_message("kept"), "configuration": {"blocking": False}}
    task = _rpc(client, flow_id, rpc("message/send", params), admin.key).get_json()["result"]
    _until(client, flow_id, task["id"], "completed", admin.key)
    _lose_job(app, task["id"])
    got = _get(client, flow_id, task["id"], admin.key)
    assert got["status"]["state"] == "completed"
    assert got["artifacts"][0]["parts"][0]["text"] == "kept"
