"""A plugin whose ``observing_runs()`` says False is skipped by the run path (its settings switched it off)."""

from __future__ import annotations

import pytest

from tests.run.conftest import PLUGINS
from tests.run.runkit import chat_echo, create_flow
from tests.run.test_observe_run import Watcher


class Switched(Watcher):
    def __init__(self) -> None:
        super().__init__()
        self.on = False
        self.asked = 0

    def observing_runs(self) -> bool:
        self.asked += 1
        return self.on


@pytest.fixture
def switched() -> Switched:
    return Switched()


@pytest.fixture
def app(make_app, recorder, switched):
    return make_app(plugins=[*PLUGINS, ("recorder", recorder), ("switched", switched)])


def test_a_switched_off_observer_is_not_called_and_a_switched_on_one_is(client, alice, switched):
    flow = create_flow(client, alice, chat_echo())
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "a"}, headers=alice.key).status_code == 200
    assert switched.asked == 1 and switched.started == []
    switched.on = True
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "b"}, headers=alice.key).status_code == 200
    [started] = switched.started
    assert started.request["inputs"][0]["value"] == "b" and switched.ended[0].status == "ok"
