"""Hooks the versions plugin publishes (it calls them; docs/hooks.md).

Implement them with ``@hookimpl(optionalhook=True)``: the versions plugin may be absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.contracts import FlowRecord

__all__ = ["restore_flow"]


@hookspec(firstresult=True)
def restore_flow(user_id: str, flow_id: str, data: Mapping[str, Any], expected_token: str | None) -> FlowRecord | None:
    """Write ``data`` as the graph of ``user_id``'s flow ``flow_id`` (a version restored).

    Called by the versions plugin inside the request's transaction. ``expected_token`` is the
    caller's ``If-Match`` (a stale one raises the 409 of a conflicting save). Returns the written
    flow (its ``as_dict()`` is the flow JSON), or None when the caller has no such flow. The flows
    plugin answers; the write reaches ``on_flow_changed`` like any save, so it is a new version.
    """
