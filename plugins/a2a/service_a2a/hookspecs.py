"""Hooks the A2A plugin publishes: the agents it serves (docs/hooks.md).

The A2A plugin calls them (``appstate.hooks().first(hookspecs.find_agent_flow, ...)``); the flows
plugin answers them with ``@hookimpl(optionalhook=True)`` (the A2A plugin may be absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.contracts import FlowRecord

__all__ = ["find_agent_flow", "published_agents"]


@hookspec(firstresult=True)
def published_agents(user_id: str) -> list[FlowRecord] | None:
    """The flows ``user_id`` publishes over A2A: ``flow_type`` agent and ``a2a_enabled`` true, by name.

    Records as ``find_flow`` returns them, without ``data`` (the owner's own flows only).
    """


@hookspec(firstresult=True)
def find_agent_flow(flow_id: str, user_id: str | None) -> FlowRecord | None:
    """The flow ``flow_id`` as ``find_flow`` returns it, with its project's ``auth_type``, in one read.

    ``user_id``: only that owner's flow; None: whoever owns it (trusted callers such as the A2A
    surface, which then checks the key against the owner). The record's ``auth_type`` is the
    project's ``auth_settings.auth_type``, None when the flow has no project or the project no
    auth settings. None when no such flow.
    """
