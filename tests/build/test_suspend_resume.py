"""Suspend and resume: a run pauses at a component's request, its checkpoint is in the database,
and any process (another app, an RQ worker) resumes it exactly once, for its owner only."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import pytest

from core import hookimpl, runs
from core.app import state
from core.errors import ApiError
from core.jobs import JobState
from core.runs import checkpoints
from core.runs.jobs import enqueue, resume
from tests.build.buildkit import app_plugins, chain, create_flow, names, parse, wait_for
from tests.conftest import make_user, superuser


class Messages:
    def __init__(self) -> None:
        self.stored: list[dict[str, Any]] = []

    @hookimpl
    def on_messages(self, user_id, messages):
        self.stored.extend({**m.as_dict(), "_user": user_id} for m in messages)


def approval_flow() -> dict[str, Any]:
    return chain(("AskApproval", "AskApproval-CCCCC", {}))


def _wait_end(app: Any, job_id: str, owner: str) -> Any:
    return wait_for(lambda: (i := state(app).jobs.info_for(job_id, owner)) is not None and i.state.terminal and i)


def _events(app: Any, job_id: str) -> list[tuple[str, Any]]:
    return [(e.name, e.data) for e in state(app).jobs.read_events(job_id)]


def _start(app: Any, flow_id: str, owner: str, text: str = "hello") -> str:
    with app.app_context():
        return enqueue(runs.RunRequest(flow=flow_id, user_id=owner, surface="test", inputs=[runs.RunInput(text)]))


def test_pause_checkpoint_and_resume_in_another_app(make_app, tmp_path):
    messages = Messages()
    app = make_app(plugins=[*app_plugins(), ("messages", messages)])
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    flow_id = create_flow(client, alice, approval_flow())

    job_id = _start(app, flow_id, alice.id)
    info = _wait_end(app, job_id, alice.id)
    assert info.state is JobState.SUSPENDED
    events = _events(app, job_id)
    assert events[-1][0] == "suspended"  # the job's end event is the run's suspended event
    paused = events[-1][1]
    assert paused["vertex_id"] == "AskApproval-CCCCC"
    assert paused["request"]["question"] == "May I say 'hello'?"
    assert "end" not in [name for name, _ in events]
    # the user's message was stored when the run paused; the answer not yet
    assert [m["sender"] for m in messages.stored] == ["User"]

    with app.app_context():
        [pending] = checkpoints.pending(alice.id, flow_id)
        assert pending.id == paused["request_id"] and pending.job_id == job_id
        assert checkpoints.pending(bob.id) == []
        with pytest.raises(ApiError) as foreign:
            resume(paused["request_id"], bob.id, "approve")
        assert foreign.value.status == 404

    # a second app (another process, after a restart) on the same database resumes it
    other = make_app(plugins=[*app_plugins(), ("messages", messages)])
    with other.app_context():
        resumed_job = resume(paused["request_id"], alice.id, "approve")
        with pytest.raises(ApiError) as again:
            resume(paused["request_id"], alice.id, "reject")
        assert again.value.status == 409
    done = _wait_end(other, resumed_job, alice.id)
    assert done.state is JobState.FINISHED, done.error
    answer = done.result["outputs"][0]["outputs"][0]["results"]["message"]["text"]
    assert answer.startswith("hello:approve|")
    assert [m["sender"] for m in messages.stored] == ["User", "Machine"]
    assert {m["session_id"] for m in messages.stored} == {flow_id}
    with other.app_context():
        assert checkpoints.pending(alice.id) == []
        assert checkpoints.get(paused["request_id"], alice.id).resumed_job_id == resumed_job


def test_expired_checkpoint_cannot_be_resumed(app, client, alice):
    flow_id = create_flow(client, alice, approval_flow())
    job_id = _start(app, flow_id, alice.id)
    _wait_end(app, job_id, alice.id)
    request_id = _events(app, job_id)[-1][1]["request_id"]
    with app.app_context():
        assert checkpoints.expire(dt.datetime.now(dt.UTC) + dt.timedelta(days=2)) == 1
        assert checkpoints.pending(alice.id) == []
        with pytest.raises(ApiError) as gone:
            resume(request_id, alice.id, "approve")
        assert gone.value.status == 410


def test_build_stream_ends_with_the_suspended_event(app, client, alice):
    flow_id = create_flow(client, alice, approval_flow())
    response = client.post(
        f"/api/v1/build/{flow_id}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "hi"}},
        headers=alice.bearer,
    )
    events = parse(response.get_data(as_text=True))
    assert names(events)[-1] == "suspended"
    assert "end_vertex" in names(events) and "end" not in names(events)
    assert events[-1]["data"]["request"]["question"] == "May I say 'hi'?"


def test_resume_on_an_rq_worker(make_rq_app):
    app = make_rq_app("fork")
    client = app.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    flow_id = create_flow(client, alice, approval_flow())
    job_id = _start(app, flow_id, alice.id, "rq")
    assert _wait_end(app, job_id, alice.id).state is JobState.SUSPENDED
    paused = _events(app, job_id)[-1][1]
    with app.app_context():
        resumed_job = resume(paused["request_id"], alice.id, "reject")
    done = _wait_end(app, resumed_job, alice.id)
    assert done.state is JobState.FINISHED, done.error
    text = done.result["outputs"][0]["outputs"][0]["results"]["message"]["text"]
    assert text.startswith("rq:reject|pid=")
    resumed_pid = int(text.rsplit("pid=", 1)[1])
    # paused in one forked work horse, resumed in another, neither of them this test process
    assert resumed_pid not in (os.getpid(), paused["request"]["pid"])
