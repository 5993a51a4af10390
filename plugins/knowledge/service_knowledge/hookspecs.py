"""Hooks the knowledge plugin publishes (docs/hooks.md).

The knowledge plugin calls them; the models bundle answers them with
``@hookimpl(optionalhook=True)`` (the knowledge plugin may be absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core import hookspec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.engine import RunContext

__all__ = ["embed_texts"]


@hookspec(firstresult=True)
def embed_texts(context: RunContext, provider: str, model: str, texts: list[str]) -> list[list[float]] | None:
    """Embed ``texts`` with embedding model ``model`` of ``provider`` (a provider name of the reference's
    model field, such as ``"OpenAI Compatible"``) on behalf of the owner of ``context`` (a
    :class:`core.engine.RunContext`: the owner's variables give endpoint and key, its egress policy
    guards the call, its ``provider_allowed`` applies the model-provider policy).

    Called by the knowledge plugin when it ingests into or searches a knowledge base recorded with a
    provider other than its local model. Return one vector per text, in order; None when this
    implementation does not know ``provider``. Raise ``ValueError`` when the provider is not usable as
    configured (no endpoint, no key, a blocked address or provider), any other error when it fails.
    """
