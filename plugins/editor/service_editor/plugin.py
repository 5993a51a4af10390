"""Hook implementations of the editor plugin (thin: the serving logic is in ``views``)."""

from __future__ import annotations

from core import hookimpl


@hookimpl
def register_blueprints():
    from service_editor.views import editor_bp

    return [editor_bp]
