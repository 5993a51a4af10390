"""What the catalog policy means for flows: hidden templates, and marks on stored flows.

The blocked sets come from the ``blocked_components`` / ``blocked_templates``
hooks (the policies plugin answers from its in-process snapshot); without any
implementation nothing is blocked. A stored flow that uses a blocked
component is kept as written but *marked*: its create, read, update, upsert
and upload responses carry the header ``X-Service-Blocked-Components`` (the
blocked keys it uses, comma-separated), and every run surface refuses it
(``check_run``).
"""

from __future__ import annotations

from typing import Any

from core import appstate
from core.engine.nodes import node_types

HEADER = "X-Service-Blocked-Components"


def blocked_components() -> frozenset[str]:
    return appstate.hooks().blocked_components()


def blocked_templates() -> frozenset[str]:
    return appstate.hooks().blocked_templates()


def blocked_in(data: Any, blocked: frozenset[str] | None = None) -> list[str]:
    keys = blocked_components() if blocked is None else blocked
    return sorted(set(node_types(data)) & keys) if keys else []


def visible_examples(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Examples that are neither blocked templates nor built on blocked components."""
    templates, components = blocked_templates(), blocked_components()
    if not templates and not components:
        return examples
    return [
        e
        for e in examples
        if e.get("name_key") not in templates
        and e.get("name") not in templates
        and not blocked_in(e["data"], components)
    ]


def mark_headers(flows: list[dict[str, Any]] | dict[str, Any]) -> dict[str, str]:
    """The marking header for a written or read flow (or several: the union), or no header."""
    items = flows if isinstance(flows, list) else [flows]
    keys = blocked_components()
    if not keys:
        return {}
    found = sorted({k for f in items for k in blocked_in(f.get("data"), keys)})
    return {HEADER: ",".join(found)} if found else {}
