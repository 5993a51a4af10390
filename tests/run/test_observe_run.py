"""The ``observe_run`` hook: one start and one end per run, on every path the run service takes."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from core import hookimpl
from core.contracts import RunEnded, RunStarted
from tests.conftest import make_user, superuser
from tests.run.conftest import PLUGINS
from tests.run.runkit import chat_echo, create_flow, edge, flow_data, node, wait_jobs


class Watcher:
    """Records what ``observe_run`` tells, and in which thread each side was called."""

    def __init__(self, fail: bool = False) -> None:
        self.started: list[RunStarted] = []
        self.ended: list[RunEnded] = []
        self.threads: list[tuple[int, int]] = []
        self.fail = fail

    @hookimpl
    def observe_run(self, run: RunStarted) -> Any:
        self.started.append(run)
        begun = threading.get_ident()
        watcher = self

        class Observer:
            def end(self, ended: RunEnded) -> None:
                watcher.ended.append(ended)
                watcher.threads.append((begun, threading.get_ident()))
                if watcher.fail:
                    raise RuntimeError("observer broke")

        return Observer()


@pytest.fixture
def watcher() -> Watcher:
    return Watcher()


@pytest.fixture
def app(make_app, recorder, watcher):
    return make_app(plugins=[*PLUGINS, ("recorder", recorder), ("watcher", watcher)])


def test_a_sync_run_is_observed_once_with_its_request_and_answer(client, alice, watcher):
    flow = create_flow(client, alice, chat_echo())
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hello"}, headers=alice.key)
    assert response.status_code == 200
    [started], [ended] = watcher.started, watcher.ended
    assert started.flow_id == flow["id"] and started.flow_name == flow["name"]
    assert started.user_id == alice.id == started.owner_id and started.surface == "run"
    assert started.public is False and started.job_id is None and started.started_at > 0
    assert started.request["inputs"][0]["value"] == "hello"
    assert ended.run is started and ended.status == "ok" and ended.error is None
    assert ended.outputs == ("hello",) and ended.duration_s >= 0
    begun, finished = watcher.threads[0]
    assert begun == finished  # both sides in the thread that ran it


def test_a_failed_run_ends_as_error_with_the_user_facing_text(client, alice, watcher):
    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    flow = create_flow(
        client, alice, flow_data([memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])
    )
    assert client.post(f"/api/v1/run/{flow['id']}", json={}, headers=alice.key).status_code == 500
    [ended] = watcher.ended
    assert ended.status == "error"
    assert (
        ended.error
        == "Error running component Message History (Memory-MMMMM): Number of messages must be non-negative."
    )


def test_a_webhook_run_is_observed_in_its_job_with_the_job_id(app, client, alice, watcher):
    flow = create_flow(client, alice, chat_echo())
    response = client.post(f"/api/v1/webhook/{flow['id']}", data="payload", headers=alice.key)
    assert response.status_code == 202
    wait_jobs(app)
    [started] = watcher.started
    assert started.surface == "webhook" and started.job_id == response.get_json()["job_id"]
    assert [e.status for e in watcher.ended] == ["ok"]


def test_each_run_has_its_own_id_and_a_broken_observer_never_fails_the_run(client, alice, watcher):
    watcher.fail = True
    flow = create_flow(client, alice, chat_echo())
    for text in ("one", "two"):
        response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": text}, headers=alice.key)
        assert response.status_code == 200
    assert [e.outputs for e in watcher.ended] == [("one",), ("two",)]
    ids = {s.run_id for s in watcher.started}
    assert len(ids) == 2 and all(len(i) == 36 for i in ids)


class EarlyWatcher:
    """An observer with the optional ``ending``: what it hears, and which messages were stored by then."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.heard: list[tuple[str, str, int]] = []

    @hookimpl
    def observe_run(self, run: RunStarted) -> Any:
        watcher = self

        class Observer:
            def ending(self, ended: RunEnded) -> None:
                watcher.heard.append(("ending", ended.status, len(watcher.recorder.messages)))

            def end(self, ended: RunEnded) -> None:
                watcher.heard.append(("end", ended.status, len(watcher.recorder.messages)))

        return Observer()


def test_an_observer_with_ending_hears_it_once_before_the_messages_are_stored(make_app, recorder, watcher):
    """``ending`` comes as the last result is known, before its messages are stored (a row an observer defers
    there joins the messages' commit); ``end`` after, as for every observer; an observer without ``ending``
    only hears ``end``."""
    early = EarlyWatcher(recorder)
    app = make_app(plugins=[*PLUGINS, ("recorder", recorder), ("watcher", watcher), ("early", early)])
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    flow = create_flow(client, alice, chat_echo())
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hello"}, headers=alice.key)
    assert response.status_code == 200
    stored = len(recorder.messages)
    assert stored >= 2  # the user's message and the answer
    assert early.heard == [("ending", "ok", 0), ("end", "ok", stored)]
    assert [e.status for e in watcher.ended] == ["ok"]


class QueueListener:
    """Hears ``on_run_queued``."""

    def __init__(self) -> None:
        self.queued: list[Any] = []

    @hookimpl
    def on_run_queued(self, run: Any) -> None:
        self.queued.append(run)


def test_a_queued_run_is_told_with_the_id_it_then_starts_under(make_app, recorder, watcher):
    listener = QueueListener()
    app = make_app(plugins=[*PLUGINS, ("recorder", recorder), ("watcher", watcher), ("listener", listener)])
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    flow = create_flow(client, alice, chat_echo())
    response = client.post(f"/api/v1/webhook/{flow['id']}", data="payload", headers=alice.key)
    assert response.status_code == 202
    wait_jobs(app)
    [queued], [started] = listener.queued, watcher.started
    assert queued.job_id == response.get_json()["job_id"] == started.job_id
    assert queued.run_id == started.run_id and queued.surface == "webhook" == started.surface
    assert queued.flow_id == flow["id"] and queued.flow_name == flow["name"] and queued.user_id == alice.id
    assert queued.request["webhook_payload"] == "payload" and queued.queued_at <= started.started_at


def test_without_a_queue_listener_a_queued_run_gets_its_id_as_it_starts(app, client, alice, watcher):
    flow = create_flow(client, alice, chat_echo())
    assert client.post(f"/api/v1/webhook/{flow['id']}", data="x", headers=alice.key).status_code == 202
    wait_jobs(app)
    [started] = watcher.started
    assert len(started.run_id) == 36 and started.request["run_id"] is None
