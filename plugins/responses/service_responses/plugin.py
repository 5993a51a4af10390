"""Hook implementations of the responses plugin (thin: the logic is in services)."""

from __future__ import annotations

from core import hookimpl


@hookimpl
def register_blueprints():
    from service_responses.resources import blp

    return [blp]
