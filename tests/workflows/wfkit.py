"""Helpers of the v2 workflows tests: plugins, flows, SSE parsing (AG-UI frames through the ag-ui-protocol models)."""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter

from tests.build.buildkit import SlowBundle, chain, create_flow, failing_flow, slow_flow

__all__ = ["PLUGINS", "agui_events", "chain", "create_flow", "failing_flow", "plugins", "service_frames", "slow_flow"]

PLUGINS = ["accounts", "flows", "variables", "monitor", "workflows", "standard"]
_EVENT = TypeAdapter(Event)


def plugins(*extra: Any) -> list[Any]:
    return [*PLUGINS, ("slowtest", SlowBundle()), *extra]


def sse_frames(raw: bytes | str) -> list[tuple[str, str]]:
    """``(data, id)`` of each SSE frame; every frame is a ``data:`` line then an ``id:`` line."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    assert text.endswith("\n\n"), text[-80:]
    out = []
    for block in text.split("\n\n")[:-1]:
        lines = block.split("\n")
        assert len(lines) == 2 and lines[0].startswith("data: ") and lines[1].startswith("id: "), block[:200]
        out.append((lines[0][len("data: ") :], lines[1][len("id: ") :]))
    return out


def service_frames(raw: bytes | str) -> list[dict[str, Any]]:
    """The reference framing: ``{"event", "data"}`` objects, with their ``id``."""
    return [{**json.loads(data), "id": seq} for data, seq in sse_frames(raw)]


def agui_events(raw: bytes | str) -> list[Any]:
    """AG-UI frames parsed back into the ag-ui-protocol models (a frame that does not validate fails)."""
    return [_EVENT.validate_json(data) for data, _seq in sse_frames(raw)]


def types(events: list[Any]) -> list[str]:
    return [str(getattr(e.type, "value", e.type)) for e in events]


def flow_with(client: Any, caller: Any, data: dict[str, Any] | None = None, **extra: Any) -> str:
    return create_flow(client, caller, data or chain(), **extra)
