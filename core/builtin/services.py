"""Logic behind the built-in endpoints (no request objects here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from core import __version__
from core.auth import Actor
from core.settings import Settings

#: Members of the anonymous configuration response (as the reference publishes them).
PUBLIC_CONFIG_KEYS = (
    "feature_flags",
    "max_file_size_upload",
    "event_delivery",
    "voice_mode_available",
    "frontend_timeout",
    "mcp_base_url",
    "enable_extension_reload",
    "authz_enabled",
    "catalog_governance_enabled",
    "substitute_outdated_component_code",
    "type",
    "allow_custom_components",
)


def version_info() -> dict[str, str]:
    return {"version": __version__, "main_version": __version__, "package": "Flow Builder Service"}


#: Every member of the spec's configuration response and its type (the response schema). The core
#: answers the first group from its own settings; each plugin adds its members through
#: ``extend_config`` from its own settings section (the accounts of a member: docs/architecture.md).
CONFIG_MEMBERS: dict[str, type] = {
    # the core's own
    "allow_custom_components": bool,
    "authz_enabled": bool,
    "custom_component_admin_only": bool,
    "max_file_size_upload": int,
    "public_flow_expiration": int,
    # plugins' (defaults below when no plugin answers)
    "a2a_enabled": bool,
    "agentic_experience": bool,
    "assistant_max_message_length": int,
    "auto_saving": bool,
    "auto_saving_interval": int,
    "blocked_component_types": list,
    "catalog_governance_enabled": bool,
    "default_folder_name": str,
    "embedded_mode": bool,
    "enable_extension_reload": bool,
    "event_delivery": str,
    "feature_flags": dict,
    "frontend_timeout": int,
    "health_check_max_retries": int,
    "hide_getting_started_progress": bool,
    "hide_logout_button": bool,
    "hide_new_flow_button": bool,
    "hide_new_project_button": bool,
    "hide_starter_projects": bool,
    "local_vector_store_available": bool,
    "mcp_base_url": str,
    "mcp_servers_locked": bool,
    "public_flow_cleanup_interval": int,
    "serialization_max_items_length": int,
    "serialization_max_text_length": int,
    "substitute_outdated_component_code": bool,
    "type": str,
    "voice_mode_available": bool,
    "webhook_auth_enable": bool,
    "webhook_polling_interval": int,
}


def full_config(settings: Settings) -> dict[str, Any]:
    """The core's members of the configuration response; plugins add theirs through ``extend_config``.

    Members of features that are off when their plugin is absent (governance, the local vector
    store, feature flags) default to off here, so the response keeps its shape without them.
    """
    return {
        "allow_custom_components": settings.allow_custom_components,
        "authz_enabled": settings.authz_enabled,
        "blocked_component_types": [],
        "catalog_governance_enabled": False,
        "custom_component_admin_only": settings.custom_component_admin_only,
        "feature_flags": {},
        "local_vector_store_available": False,
        "max_file_size_upload": settings.max_file_size_upload,
        "public_flow_expiration": settings.public_flow_expiration,
        "type": "full",
    }


def config_for(
    settings: Settings, actor: Actor | None, extensions: Sequence[Mapping[str, object] | None]
) -> dict[str, Any]:
    """The full configuration for a caller, the reduced public one for anonymous callers."""
    config = full_config(settings)
    for extra in extensions:
        config.update(extra or {})
    if actor is None:
        config = {key: config[key] for key in PUBLIC_CONFIG_KEYS if key in config}
        config["type"] = "public"
    return config


def check_database(app: Any) -> None:
    from core import appstate

    with appstate.engine(app).connect() as conn:
        conn.execute(sa.text("SELECT 1"))


def check_redis(app: Any) -> str | None:
    from core import appstate

    settings = appstate.settings(app)
    if not settings.redis_url:
        return "not configured"
    import redis

    client = redis.Redis.from_url(settings.redis_url, socket_timeout=2, socket_connect_timeout=2)
    try:
        client.ping()
    finally:
        client.close()
    return None
