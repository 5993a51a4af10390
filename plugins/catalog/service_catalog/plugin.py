"""Hook implementations of the catalog plugin (thin: the logic is in catalog and validate)."""

from __future__ import annotations

from core import hookimpl

#: the hooks this plugin publishes: the model listing (the models bundle answers ``list_models``)
HOOKSPECS = "service_catalog.hookspecs"


@hookimpl
def register_blueprints():
    from service_catalog.resources import blp

    return [blp]
