"""Fixtures of the run tests: the installed plugins, plus a message recorder when a test needs one."""

from __future__ import annotations

from typing import Any

import pytest

from core import hookimpl
from core.contracts import MessageRecord

#: what the run tests need installed (the monitor plugin, when installed, is left out on purpose:
#: the recorder below answers the message hooks so the tests see exactly what a run stored)
PLUGINS = ["accounts", "flows", "variables", "run", "catalog", "standard"]


class MessageRecorder:
    """Answers ``on_messages`` / ``message_history`` in memory, as the monitor plugin does in the database."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    @hookimpl
    def on_messages(self, user_id: str, messages: list[MessageRecord]) -> None:
        for message in messages:
            self.messages.append({**message.as_dict(), "_user_id": user_id})

    @hookimpl
    def message_history(self, user_id, flow_id, session_id, limit):
        found = [
            m
            for m in self.messages
            if m["_user_id"] == user_id
            and m.get("session_id") == session_id
            and (flow_id is None or str(m.get("flow_id")) == str(flow_id))
        ]
        return [MessageRecord.from_dict(m) for m in (found[-limit:] if limit else found)]

    def texts(self, session_id: str | None = None) -> list[str]:
        return [m["text"] for m in self.messages if session_id is None or m.get("session_id") == session_id]


@pytest.fixture
def recorder() -> MessageRecorder:
    return MessageRecorder()


@pytest.fixture
def app(make_app, recorder):
    return make_app(plugins=[*PLUGINS, ("recorder", recorder)])
