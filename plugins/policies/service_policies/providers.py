"""The provider registry (``register_model_providers``) and the approval check."""

from __future__ import annotations

from typing import Any

from core.records import ModelProvider


def providers() -> list[ModelProvider]:
    from core import appstate

    return appstate.host().collect("register_model_providers", key=lambda p: p.provider_id)


def registered() -> list[dict[str, Any]]:
    return [
        {"provider_id": p.provider_id, "display_name": p.display_name, "provider": p.provider}
        for p in sorted(providers(), key=lambda p: p.provider_id)
    ]


def approved(provider_id: str) -> bool:
    """True when the policy (read now, from the database) allows ``provider_id``; empty means all."""
    from core import db
    from service_policies import services
    from service_policies.runtime import runtime

    state = services.read(db.session(), runtime().cfg, "providers")
    return not state.items or services.normalise_provider_id(provider_id) in state.items
