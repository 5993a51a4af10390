"""Hook implementations of the editor plugin (thin: the serving logic is in ``views``)."""

from __future__ import annotations

from core import hookimpl


@hookimpl
def register_blueprints():
    from service_editor.views import editor_bp

    return [editor_bp]


@hookimpl
def register_settings():
    from service_editor.config import SECTION

    return [SECTION]


@hookimpl
def extend_config(actor, public):
    """Every ``SERVICE_*`` editor setting, as members of ``/api/v1/config``."""
    import dataclasses

    from service_editor.config import settings

    cfg = settings()
    return dataclasses.asdict(cfg)
