"""The ``propagation_headers`` hook: a queued run carries the trace context of the request that queued it."""

from __future__ import annotations

from typing import Any

import pytest

from core import hookimpl
from tests.run.conftest import PLUGINS
from tests.run.runkit import reference, upload, wait_jobs
from tests.run.test_observe_run import Watcher

CONTEXT = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "k=v"}


class Propagator:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def propagation_headers(self) -> dict[str, str] | None:
        self.calls += 1
        return dict(CONTEXT)


class Silent:
    @hookimpl
    def propagation_headers(self) -> Any:
        return None


@pytest.fixture
def propagator() -> Propagator:
    return Propagator()


@pytest.fixture
def watcher() -> Watcher:
    return Watcher()


@pytest.fixture
def app(make_app, recorder, watcher, propagator):
    extra = [("recorder", recorder), ("watcher", watcher), ("propagator", propagator), ("silent", Silent())]
    return make_app(plugins=[*PLUGINS, *extra])


def test_a_webhook_job_carries_the_queueing_requests_trace_context(app, client, alice, watcher, propagator):
    flow = upload(client, alice, reference("webhook-parser-chat.json"))
    assert client.post(f"/api/v1/webhook/{flow['id']}", data="{}", headers=alice.key).status_code == 202
    wait_jobs(app)
    [started] = watcher.started
    assert started.surface == "webhook" and started.job_id
    assert started.request["trace_context"] == CONTEXT and propagator.calls == 1


def test_a_run_in_the_request_is_not_asked(app, client, alice, watcher, propagator):
    from tests.run.runkit import chat_echo, create_flow

    flow = create_flow(client, alice, chat_echo())
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=alice.key).status_code == 200
    [started] = watcher.started
    assert started.request["trace_context"] is None and propagator.calls == 0
