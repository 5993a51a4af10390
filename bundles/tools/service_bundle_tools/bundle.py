"""Hook implementations of the tools bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_tools import lookup, search


def all_components() -> list[type]:
    """Every component class of this bundle, in catalog order."""
    return [*search.COMPONENTS, *lookup.COMPONENTS]


@hookimpl
def register_components() -> list[type]:
    return all_components()
