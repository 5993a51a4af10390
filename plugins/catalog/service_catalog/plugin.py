"""Hook implementations of the catalog plugin (thin: the logic is in catalog and validate)."""

from __future__ import annotations

from core import hookimpl


@hookimpl
def register_blueprints():
    from service_catalog.resources import blp

    return [blp]
