"""What a blocking ``message/send`` writes: the task row in the run's one commit, readable at once anywhere.

The task JSON is built as plain dicts and validated once with the a2a-sdk ``Task`` model: the
dicts must be exactly what the model dumps, for every kind of task row.
"""

from __future__ import annotations

import datetime as dt
import uuid

import sqlalchemy as sa
from a2a.compat.v0_3 import types as v03

from tests.a2a.a2akit import PLUGINS, agent, project, rpc, user_message
from tests.build.buildkit import chain
from tests.conftest import superuser
from tests.run.runkit import chat_echo


def _send(client, flow_id, text, headers=None, **message):
    body = rpc("message/send", {"message": {**user_message(text), **message}})
    answer = client.post(f"/api/v1/a2a/{flow_id}/jsonrpc", json=body, headers=headers or {})
    assert answer.status_code == 200
    return answer.get_json()["result"]


def _count_commits(monkeypatch) -> list[int]:
    """Count this thread's COMMITs on pooled connections: the session's (through the dialect) and the driver
    writes' (``core.db.raw``) both commit through the pool's connection proxy (other threads, like the
    monitor's recorder, are not counted)."""
    import threading

    from sqlalchemy.pool.base import _ConnectionFairy

    me = threading.get_ident()
    seen: list[int] = []

    def commit(fairy) -> None:
        if threading.get_ident() == me:
            seen.append(1)
        fairy.dbapi_connection.commit()

    monkeypatch.setattr(_ConnectionFairy, "commit", commit, raising=False)
    return seen


def test_blocking_send_commits_once_with_the_run_messages(app, client, admin, monkeypatch):
    from service_a2a.models import Task
    from service_monitor.models import Message

    from core import db

    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    _send(client, flow_id, "warm", admin.key)
    seen = _count_commits(monkeypatch)
    task = _send(client, flow_id, "one commit", admin.key)
    monkeypatch.undo()
    assert task["status"]["state"] == "completed" and task["artifacts"][0]["parts"][0]["text"] == "one commit"
    assert len(seen) == 1, seen  # the task row went with the run's messages (key usage is counted off the request)
    with app.app_context():
        row = db.session().get(Task, uuid.UUID(task["id"]))
        assert row is not None and row.state == "completed" and row.answer == "one commit"
        texts = db.session().scalars(sa.select(Message.text).where(Message.flow_id == uuid.UUID(flow_id)))
        assert "one commit" in list(texts)


def test_blocking_send_without_stored_messages_still_stores_its_task(make_app):
    """No message to store (both chat components keep none): the task row is committed on its own."""
    app = make_app(plugins=PLUGINS, a2a_enabled=True)
    client = app.test_client()
    admin = superuser(client)
    folder = project(client, admin, "none")
    quiet = chain()
    for item in quiet["nodes"]:
        template = item["data"]["node"]["template"]
        template["should_store_message"]["value"] = False
    flow_id = agent(client, admin, quiet, folder_id=folder)
    task = _send(client, flow_id, "unrecorded")
    assert task["status"]["state"] == "completed" and task["artifacts"][0]["parts"][0]["text"] == "unrecorded"
    second = make_app(plugins=PLUGINS, a2a_enabled=True)  # another process: only the database is shared
    body = rpc("tasks/get", {"id": task["id"]})
    got = second.test_client().post(f"/api/v1/a2a/{flow_id}/jsonrpc", json=body).get_json()["result"]
    assert got == task


def test_tasks_get_on_another_app_right_after_the_answer(make_app):
    first = make_app(plugins=PLUGINS, a2a_enabled=True)
    second = make_app(plugins=PLUGINS, a2a_enabled=True)
    client = first.test_client()
    admin = superuser(client)
    folder = project(client, admin, "apikey")
    flow_id = agent(client, admin, chat_echo(), folder_id=folder)
    other = second.test_client()
    for n in range(5):
        task = _send(client, flow_id, f"turn {n}", admin.key)
        body = rpc("tasks/get", {"id": task["id"]})
        got = other.post(f"/api/v1/a2a/{flow_id}/jsonrpc", json=body, headers=admin.key).get_json()["result"]
        assert got == task


class _Row:
    """A task row's columns, as the database gives them."""

    def __init__(self, **values):
        self.id = uuid.uuid4()
        self.context_id = "ctx-1"
        self.state = "completed"
        self.status_text = None
        self.answer = None
        self.request = None
        self.checkpoint_id = None
        self.input_request = None
        self.updated_at = dt.datetime(2026, 1, 2, 3, 4, 5, 678000)  # naive, as SQLite returns it
        self.__dict__.update(values)


def test_task_json_is_what_the_sdk_model_dumps():
    from service_a2a import services

    request = {
        "contextId": "ctx-1",
        "kind": "message",
        "messageId": "m-1",
        "parts": [{"kind": "text", "text": "hi"}, {"kind": "data", "data": {"a": [1, 2]}}],
        "role": "user",
        "taskId": "t",
    }
    rows = [
        _Row(answer="hello", request=request),
        _Row(answer="", request=request, updated_at=dt.datetime(2026, 1, 2, tzinfo=dt.UTC)),
        _Row(state="failed", status_text="Flow execution failed: boom", request=request),
        _Row(state="submitted"),
        _Row(state="canceled", status_text="Task canceled"),
        _Row(
            state="input-required",
            status_text="May I?",
            checkpoint_id="cp-1",
            input_request={"question": "May I?", "decisions": ["yes", "no"]},
            request=request,
        ),
        _Row(state="input-required", status_text="Go on?", checkpoint_id="cp-2"),
    ]
    for row in rows:
        for history_length in (None, 0, 3):
            built = services.task_json(row, history_length)
            dumped = v03.Task.model_validate(built).model_dump(mode="json", by_alias=True, exclude_none=True)
            assert built == dumped
            assert list(built) == list(dumped)  # the same members in the same order
        status = services.status_json(row)
        assert status == v03.TaskStatus.model_validate(status).model_dump(mode="json", by_alias=True, exclude_none=True)
    text = services.artifact_json(rows[0], "x")
    assert text == v03.Artifact.model_validate(text).model_dump(mode="json", by_alias=True, exclude_none=True)
    # what the model refuses is refused (the outgoing check is real)
    bad = services.task_json(_Row(state="not-a-state"))
    try:
        v03.Task.model_validate(bad)
    except ValueError:
        pass
    else:
        raise AssertionError("an unknown task state passed the SDK model")


def test_last_chat_text_is_what_the_simplified_run_response_says(app, client, admin):
    """The blocking send reads the answer straight from the run's result: the same text as the last chat message
    of ``simplified_run_response`` (what the task's answer was before), for every shape of flow."""
    from service_a2a import services

    from core import runs
    from core.engine import simplified_run_response
    from core.engine.results import last_chat_text
    from tests.run.runkit import edge, flow_data, node

    chat_in = node("ChatInput", "ChatInput-AAAAA")
    two_outputs = flow_data(
        [chat_in, node("ChatOutput", "ChatOutput-BBBBB"), node("ChatOutput", "ChatOutput-CCCCC")],
        [
            edge(chat_in, "message", node("ChatOutput", "ChatOutput-BBBBB"), "input_value"),
            edge(chat_in, "message", node("ChatOutput", "ChatOutput-CCCCC"), "input_value"),
        ],
    )
    text_only = flow_data(
        [chat_in, node("TextOutput", "TextOutput-UUUUU")],
        [edge(chat_in, "message", node("TextOutput", "TextOutput-UUUUU"), "input_value")],
    )
    flows = [chat_echo(), two_outputs, text_only, chain(), chat_echo(should_store_message=False)]
    folder = project(client, admin, "apikey")
    seen = set()
    for n, data in enumerate(flows):
        flow_id = agent(client, admin, data, folder_id=folder, name=f"shape {n}")
        for value in ("hello", "", None):
            with app.app_context():
                req = runs.RunRequest(flow=flow_id, user_id=admin.id, inputs=[runs.RunInput(value)])
                outcome = runs.execute(runs.prepare(req))
                result = outcome.results[-1]
                expected = services.answer_of(simplified_run_response(result, input_value=value))
                assert last_chat_text(result) == expected, (n, value)
                seen.add(expected)
    assert {"hello", ""} <= seen  # real answers were compared, not only empty ones
