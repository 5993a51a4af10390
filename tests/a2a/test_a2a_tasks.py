"""Blocking message/send in the request (no job), and tasks waiting for human input (``input-required``)."""

from __future__ import annotations

import uuid

from tests.a2a.a2akit import agent, project, rpc, sse, user_message
from tests.a2a.a2akit import post_rpc as _rpc
from tests.a2a.a2akit import task_row as _row
from tests.build.buildkit import chain
from tests.run.runkit import chat_echo


def approval():
    return chain(("AskApproval", "AskApproval-CCCCC", {}))


def _answer(message: dict, task_id: str, context_id: str | None = None) -> dict:
    return {**message, "taskId": task_id, **({"contextId": context_id} if context_id else {})}


def test_blocking_send_runs_in_the_request_and_stores_the_task_once_ended(app, client, admin):
    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    task = _rpc(client, flow_id, rpc("message/send", {"message": user_message("inline")}), admin.key).get_json()
    task = task["result"]
    assert task["status"]["state"] == "completed" and task["artifacts"][0]["parts"][0]["text"] == "inline"
    row = _row(app, task["id"])
    assert row["job_id"] is None  # no job: the run went through core.runs execute in the request
    assert row["state"] == "completed" and row["answer"] == "inline"
    # a blocking send with a push notification config stays a job, still answered when it ends
    push = {"blocking": True, "pushNotificationConfig": {"url": "https://example.com/hook"}}
    waited = _rpc(
        client, flow_id, rpc("message/send", {"message": user_message("job"), "configuration": push}), admin.key
    )
    waited = waited.get_json()["result"]
    assert waited["status"]["state"] == "completed" and waited["artifacts"][0]["parts"][0]["text"] == "job"
    assert _row(app, waited["id"])["job_id"] is not None
    # non-blocking sends still start a job (their caller polls the task)
    params = {"message": user_message("later"), "configuration": {"blocking": False}}
    queued = _rpc(client, flow_id, rpc("message/send", params), admin.key).get_json()["result"]
    assert _row(app, queued["id"])["job_id"] is not None


def test_blocking_send_refused_run_is_a_failed_task(app, client, admin):
    folder = project(client, admin, "apikey")
    broken = {
        "nodes": [{"id": "X-1", "data": {"id": "X-1", "type": "NoSuchComponent", "node": {"template": {}}}}],
        "edges": [],
    }
    flow_id = agent(client, admin, broken, folder_id=folder)
    task = _rpc(client, flow_id, rpc("message/send", {"message": user_message("x")}), admin.key).get_json()["result"]
    assert task["status"]["state"] == "failed"
    assert task["status"]["message"]["parts"][0]["text"].startswith("Flow execution failed")
    assert _row(app, task["id"])["state"] == "failed"


def test_input_required_then_answered_with_the_same_task_id(app, client, admin):
    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, approval(), folder_id=folder, name="approver")
    sent = _rpc(client, flow_id, rpc("message/send", {"message": user_message("hello")}), admin.key).get_json()
    task = sent["result"]
    assert task["status"]["state"] == "input-required", task
    parts = task["status"]["message"]["parts"]
    assert parts[0]["text"] == "May I say 'hello'?"
    assert parts[1]["kind"] == "data" and parts[1]["data"]["question"] == "May I say 'hello'?"
    assert "artifacts" not in task
    got = _rpc(client, flow_id, rpc("tasks/get", {"id": task["id"]}), admin.key).get_json()["result"]
    assert got["status"]["state"] == "input-required" and got["status"]["message"]["parts"] == parts
    assert _row(app, task["id"])["checkpoint_id"]

    answer = user_message("yes", message_id="m-2")
    body = rpc("message/send", {"message": _answer(answer, task["id"], task["contextId"])})
    done = _rpc(client, flow_id, body, admin.key).get_json()["result"]
    assert done["id"] == task["id"] and done["contextId"] == task["contextId"]
    assert done["status"]["state"] == "completed", done
    assert done["artifacts"][0]["parts"][0]["text"].startswith("hello:yes|pid=")
    row = _row(app, task["id"])
    assert row["state"] == "completed" and row["checkpoint_id"] is None
    # a second answer: the task no longer waits (invalid params), the checkpoint was claimed once
    again = _rpc(client, flow_id, body, admin.key).get_json()
    assert again["error"]["code"] == -32602 and "completed" in again["error"]["message"]
    # a task id nobody knows
    lost = rpc("message/send", {"message": _answer(answer, str(uuid.uuid4()))})
    assert _rpc(client, flow_id, lost, admin.key).get_json()["error"]["code"] == -32001


def test_input_required_over_the_stream_and_public_principal(client, admin):
    folder = project(client, admin, "none")  # anonymous callers: the checkpoint belongs to the public principal
    flow_id = agent(client, admin, approval(), folder_id=folder, name="approver-public")
    frames = [
        f["result"] for f in sse(_rpc(client, flow_id, rpc("message/stream", {"message": user_message("hi")})).data)
    ]
    assert frames[0]["status"]["state"] == "submitted"
    final = frames[-1]
    assert final["kind"] == "status-update" and final["final"] is True
    assert final["status"]["state"] == "input-required"
    assert final["status"]["message"]["parts"][0]["text"] == "May I say 'hi'?"
    task_id = frames[0]["id"]
    body = rpc("message/stream", {"message": _answer(user_message("ok", message_id="m-3"), task_id)})
    resumed = [f["result"] for f in sse(_rpc(client, flow_id, body).data)]
    assert resumed[0]["id"] == task_id
    assert resumed[-1]["status"]["state"] == "completed" and resumed[-1]["final"] is True
    text = "".join(p["text"] for f in resumed if f["kind"] == "artifact-update" for p in f["artifact"]["parts"])
    assert text.startswith("hi:ok|pid=")
    # another context may not answer it
    other = rpc("message/send", {"message": _answer(user_message("x"), task_id, "someone-else")})
    assert _rpc(client, flow_id, other).get_json()["error"]["code"] == -32602


def test_a_message_for_a_running_task_is_refused(client, admin):
    from tests.build.buildkit import slow_flow

    folder = project(client, admin, "none")
    flow_id = agent(client, admin, slow_flow(10), folder_id=folder)
    params = {"message": user_message("slow"), "configuration": {"blocking": False}}
    task = _rpc(client, flow_id, rpc("message/send", params)).get_json()["result"]
    body = rpc("message/send", {"message": _answer(user_message("more"), task["id"])})
    refused = _rpc(client, flow_id, body).get_json()
    assert refused["error"]["code"] == -32602 and "not waiting for input" in refused["error"]["message"]
    _rpc(client, flow_id, rpc("tasks/cancel", {"id": task["id"]}))
