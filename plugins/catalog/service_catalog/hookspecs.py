"""Hooks the catalog plugin publishes (docs/hooks.md).

The catalog plugin calls them from ``GET /api/v1/model_providers/models``
(``appstate.hooks().first(hookspecs.list_models, ...)``); the models bundle answers them with
``@hookimpl(optionalhook=True)`` (the catalog plugin may be absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.engine import RunContext

__all__ = ["list_models"]


@hookspec(firstresult=True)
def list_models(context: RunContext, provider: str, refresh: bool) -> list[str] | None:
    """The model ids ``provider`` (a provider name of the reference's model field, such as
    ``"OpenAI Compatible"``) offers to the owner of ``context`` (a :class:`core.engine.RunContext`
    with the owner's variables and the egress policy): live discovery from its ``GET /models``,
    cached; ``refresh`` bypasses the cache. None when this implementation does not know ``provider``.
    """
