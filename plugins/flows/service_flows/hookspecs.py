"""Hooks the flows plugin publishes (added to the host before any plugin registers; docs/hooks.md).

The flows plugin calls them; implement them with ``@hookimpl(optionalhook=True)``: the flows
plugin may be absent. Call them through ``appstate.hooks().notify(hookspecs.on_flow_changed, ...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.contracts import FlowRecord, PublishedVersion

__all__ = ["on_flow_changed", "on_flow_owner_changed", "published_version"]


@hookspec
def on_flow_changed(
    flow_id: str, user_id: str | None, flow: FlowRecord | None, author_id: str | None, autosave: bool
) -> None:
    """A stored flow was created, updated or deleted (``flow`` None when deleted).

    Called by the flows plugin inside the writing transaction
    (:func:`core.db.session`), after the row is flushed, so an index kept by a
    plugin commits or rolls back with it. ``flow`` is the written flow as a
    :class:`core.contracts.FlowRecord` (``data`` as stored). Used by the policies plugin to keep
    component usage current, and by the versions plugin to record a version of each saved graph
    (``author_id``: the account that saved it, None when unknown; ``autosave``: an ordinary save, which may
    be coalesced into the author's previous one, False for a creation, an overwrite after a conflict, a
    restore or an import, whose previous version must stay whole).
    """


@hookspec
def on_flow_owner_changed(flow_id: str, previous_owner_id: str, owner_id: str) -> None:
    """A flow changed owner: its owner moved it into a project shared with them, and it is now the project
    owner's (docs/teams-and-sso.md). Called inside the moving transaction, before ``on_flow_changed`` reports
    the move; a plugin keeping rows of the flow under its owner re-owns them in the same session (the files
    plugin: the flow's v1 files)."""


@hookspec(firstresult=True)
def published_version(flow_id: str, changed_at: str | None) -> PublishedVersion | None:
    """The flow's published version, or None when it has none (API callers then run the draft).

    ``changed_at``: the draft's ``updated_at`` as stored (ISO 8601), None when unknown. An answer kept per
    process must not be older than that: a draft saved after a publish, in any process, is never what API
    callers run.

    Asked by the flows plugin's ``find_flow`` for every run that is not an editor build, so it must
    be cheap: one indexed read, the graph decoded once per version and process. The versions plugin
    answers.
    """
