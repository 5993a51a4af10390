"""Logic behind the built-in endpoints (no request objects here)."""

from __future__ import annotations

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


def full_config(settings: Settings) -> dict[str, Any]:
    """Every member of the spec's configuration response, from the settings in force."""
    return {
        "a2a_enabled": settings.a2a_enabled,
        "agentic_experience": settings.agentic_experience,
        "allow_custom_components": settings.allow_custom_components,
        "assistant_max_message_length": settings.assistant_max_message_length,
        "authz_enabled": settings.authz_enabled,
        "auto_saving": settings.auto_saving,
        "auto_saving_interval": settings.auto_saving_interval,
        "blocked_component_types": [],
        "catalog_governance_enabled": False,
        "custom_component_admin_only": settings.custom_component_admin_only,
        "default_folder_name": settings.default_folder_name,
        "embedded_mode": settings.embedded_mode,
        "enable_extension_reload": settings.enable_extension_reload,
        "event_delivery": settings.event_delivery,
        "feature_flags": {},
        "frontend_timeout": settings.frontend_timeout,
        "health_check_max_retries": settings.health_check_max_retries,
        "hide_getting_started_progress": settings.hide_getting_started_progress,
        "hide_logout_button": settings.hide_logout_button,
        "hide_new_flow_button": settings.hide_new_flow_button,
        "hide_new_project_button": settings.hide_new_project_button,
        "hide_starter_projects": settings.hide_starter_projects,
        "local_vector_store_available": False,
        "max_file_size_upload": settings.max_file_size_upload,
        "mcp_base_url": settings.mcp_base_url,
        "mcp_servers_locked": settings.mcp_servers_locked,
        "public_flow_cleanup_interval": settings.public_flow_cleanup_interval,
        "public_flow_expiration": settings.public_flow_expiration,
        "serialization_max_items_length": settings.serialization_max_items_length,
        "serialization_max_text_length": settings.serialization_max_text_length,
        "substitute_outdated_component_code": settings.substitute_outdated_component_code,
        "type": "full",
        "voice_mode_available": settings.voice_mode_available,
        "webhook_auth_enable": settings.webhook_auth_enable,
        "webhook_polling_interval": settings.webhook_polling_interval,
    }


def config_for(settings: Settings, actor: Actor | None, extensions: list[dict[str, Any] | None]) -> dict[str, Any]:
    """The full configuration for a caller, the reduced public one for anonymous callers."""
    config = full_config(settings)
    for extra in extensions:
        config.update(extra or {})
    if actor is None:
        config = {key: config[key] for key in PUBLIC_CONFIG_KEYS if key in config}
        config["type"] = "public"
    return config


def check_database(app: Any) -> None:
    from core.app import state

    with state(app).engine.connect() as conn:
        conn.execute(sa.text("SELECT 1"))


def check_redis(app: Any) -> str | None:
    from core.app import state

    settings = state(app).settings
    if not settings.redis_url:
        return "not configured"
    import redis

    client = redis.Redis.from_url(settings.redis_url, socket_timeout=2, socket_connect_timeout=2)
    try:
        client.ping()
    finally:
        client.close()
    return None
