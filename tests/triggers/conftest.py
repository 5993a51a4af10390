"""Fixtures of the triggers tests: the run plugins plus the triggers plugin, the ticker thread off (tests tick)."""

from __future__ import annotations

import pytest

from tests.run.conftest import PLUGINS, MessageRecorder

TRIGGERS = [*PLUGINS, "triggers"]


@pytest.fixture
def recorder() -> MessageRecorder:
    return MessageRecorder()


@pytest.fixture
def app(make_app, recorder):
    return make_app(plugins=[*TRIGGERS, ("recorder", recorder)], triggers_tick_s=0)
