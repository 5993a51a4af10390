"""Hooks the MCP plugin publishes: what it reads and writes of projects and flows (docs/hooks.md).

The MCP plugin calls them (through ``appstate.hooks().first(hookspecs.find_project, ...)``); the
flows plugin, which owns projects and flows, answers them with ``@hookimpl(optionalhook=True)``
(the MCP plugin may be absent). Without an answer a project is not found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.contracts import FlowRecord, McpToolSettings, ProjectRecord

__all__ = ["find_project", "list_project_flows", "update_project_mcp", "user_is_superuser"]


@hookspec(firstresult=True)
def find_project(user_id: str | None, project_id: str) -> ProjectRecord | None:
    """Look up a project (folder) by id, scoped by owner.

    With ``user_id`` set, only that user's project matches; with None, any
    owner's (trusted internal callers only, such as a project MCP server whose
    ``auth_settings`` say ``none``). Return a :class:`core.contracts.ProjectRecord`
    (``auth_settings`` without secrets) or None (answered 404).
    """


@hookspec(firstresult=True)
def list_project_flows(user_id: str, project_id: str | None, with_data: bool) -> list[FlowRecord] | None:
    """The flows of ``user_id``'s project ``project_id`` (all of the user's flows when None), by name.

    Components are left out. Each :class:`core.contracts.FlowRecord` carries ``id``, ``name``,
    ``description``, ``endpoint_name``, ``mcp_enabled``, ``action_name``, ``action_description``,
    ``updated_at``, ``folder_id`` (and ``data`` when ``with_data``). None when the project is not
    the user's (answered 404). Used by the MCP surface to list a project's tools.
    """


@hookspec(firstresult=True)
def update_project_mcp(
    user_id: str, project_id: str, tools: Sequence[McpToolSettings], auth_settings: Mapping[str, Any] | None
) -> int | None:
    """Set the MCP fields of a project's flows and, when given, the project's ``auth_settings``.

    ``tools`` are :class:`core.contracts.McpToolSettings` (a field left None is kept); ids of flows
    outside the project are ignored. ``auth_settings`` is the project's MCP authentication JSON.
    Runs in the caller's transaction. Returns how many flows were updated, or None when the
    project is not the user's.
    """


@hookspec(firstresult=True)
def user_is_superuser(user_id: str) -> bool | None:
    """Whether ``user_id`` is an active superuser now (answered by the accounts plugin).

    Asked before a stored stdio server starts: a config a superuser added stops starting once its
    owner is demoted or deactivated (unless an admin allow-lists its command). None (no answer, or
    an unknown user) counts as no.
    """
