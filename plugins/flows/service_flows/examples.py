"""Example (starter) flows shipped as JSON files in ``examples/``.

They are read-only and belong to no user: they are never stored in the
database, never counted among a user's flows, and have stable ids derived
from their file names so every process serves the same ids.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import json
import uuid
from importlib import resources
from typing import Any

NAMESPACE = uuid.UUID("6f1c1f36-4a9c-5d2e-9a51-3f3f0e0b7a10")
#: The system project the examples sit in (never listed among a user's projects).
EXAMPLES_FOLDER_ID = uuid.uuid5(NAMESPACE, "folder/examples")
UPDATED_AT = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def example_id(stem: str) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"example/{stem}")


@functools.cache
def _load() -> tuple[dict[str, Any], ...]:
    folder = resources.files("service_flows") / "examples"
    out = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        raw = json.loads(entry.read_text(encoding="utf-8"))
        stem = entry.name[: -len(".json")]
        out.append(
            {
                "name": raw["name"],
                "description": raw.get("description"),
                "icon": raw.get("icon"),
                "icon_bg_color": raw.get("icon_bg_color"),
                "gradient": raw.get("gradient"),
                "data": raw["data"],
                "is_component": False,
                "updated_at": UPDATED_AT,
                "webhook": bool(raw.get("webhook", False)),
                "endpoint_name": None,
                "tags": raw.get("tags") or [],
                "locked": False,
                "mcp_enabled": False,
                "action_name": None,
                "action_description": None,
                "access_type": "PRIVATE",
                "flow_type": "workflow",
                "a2a_enabled": False,
                "a2a_card_overrides": None,
                "id": example_id(stem),
                "user_id": None,
                "folder_id": EXAMPLES_FOLDER_ID,
                "workspace_id": None,
                "name_key": raw.get("name_key") or stem,
            }
        )
    return tuple(out)


def all_examples() -> list[dict[str, Any]]:
    """Fresh copies of every example flow (flow-read shape)."""
    return [copy.deepcopy(e) for e in _load()]


def shared_examples() -> tuple[dict[str, Any], ...]:
    """The example flows themselves, not copies: for trusted read-only scans (the policies' index reads each
    one's components at every start-up; a copy of every example cost each app about 35 ms). Never change them."""
    return _load()


def get_example(flow_id: uuid.UUID) -> dict[str, Any] | None:
    for example in _load():
        if example["id"] == flow_id:
            return copy.deepcopy(example)
    return None


def is_example(flow_id: uuid.UUID) -> bool:
    return any(e["id"] == flow_id for e in _load())
