"""Hooks the policies plugin publishes (docs/hooks.md).

The policies plugin calls them (``appstate.hooks().first(hookspecs.stored_flows, ...)``); the flows
plugin and the models bundle answer them with ``@hookimpl(optionalhook=True)`` (the policies
plugin may be absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.contracts import FlowRecord
    from core.records import ModelProvider

__all__ = ["register_model_providers", "stored_flows"]


@hookspec
def register_model_providers() -> list[ModelProvider]:
    """Return the model providers this plugin or bundle offers (:class:`core.records.ModelProvider`).

    Called when the model-provider policy is read (``registered_providers``)
    and by whoever checks a provider against the policy. ``provider_id`` is a
    slug (``^[a-z0-9][a-z0-9._-]*$``); duplicates across plugins are refused.
    """


@hookspec(firstresult=True)
def stored_flows(after_id: str | None, limit: int) -> list[FlowRecord] | None:
    """A page of every stored flow of every user, ordered by id, after ``after_id``.

    Each :class:`core.contracts.FlowRecord` carries ``id``, ``name``, ``user_id``, ``data``. For
    trusted internal scans only (rebuilding an index such as component usage); never serve the
    result to a user as is.
    """
