"""The typed run events in the reference's own wire framings (one adapter per format).

* build events (``/api/v1/build``): ``json.dumps({"event": name, "data": payload}) + "\\n\\n"``,
  the events of :data:`BUILD_EVENTS` only;
* the v1 run stream (``/api/v1/run?stream=true``): the same framing, ``add_message`` and
  ``token`` only, then ``end {result}`` or ``error {error}``.

Other surfaces (AG-UI, A2A, MCP, responses) keep their adapters in their own
plugins and read the same :mod:`core.engine.events` records.
"""

from __future__ import annotations

import json
from typing import Any

from core.engine import RunEvent

#: what a build stream carries (the reference's build events, plus ``suspended`` for the editor's approval card
#: and ``tool_call`` for its collapsible tool calls)
BUILD_EVENTS = frozenset(
    {"vertices_sorted", "build_start", "end_vertex", "add_message", "token", "error", "end", "suspended", "tool_call"}
)
#: what the v1 run stream forwards while the run goes
RUN_STREAM_EVENTS = frozenset({"add_message", "token"})


def frame(name: str, data: Any) -> str:
    """One event in the reference's framing: a bare JSON object and a blank line (no ``data:`` prefix)."""
    return json.dumps({"event": name, "data": data}) + "\n\n"


def is_build_event(event: RunEvent) -> bool:
    return event.name in BUILD_EVENTS


def is_run_stream_event(event: RunEvent) -> bool:
    return event.name in RUN_STREAM_EVENTS


def event_frame(event: RunEvent) -> str:
    return frame(event.name, event.payload())
