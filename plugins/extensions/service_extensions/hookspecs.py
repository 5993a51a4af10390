"""Hooks the extensions plugin publishes (docs/hooks.md).

The extensions plugin calls them after a bundle reload (``appstate.hooks().each(...)``); the flows
plugin answers them with ``@hookimpl(optionalhook=True)`` (the extensions plugin may be absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.contracts import FlowUsage

__all__ = ["flows_using_components"]


@hookspec
def flows_using_components(component_keys: list[str]) -> list[FlowUsage] | None:
    """Every stored flow (any owner) that uses one of ``component_keys``: which flows, which nodes.

    Asked after a bundle reload changed or removed components. Return one
    :class:`core.contracts.FlowUsage` (``flow_id``, ``name``, ``user_id``, ``nodes``) per flow.
    """
