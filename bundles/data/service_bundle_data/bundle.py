"""Hook implementations of the data bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_data import mock, sql, web


def all_components() -> list[type]:
    """Every component class of this bundle, in catalog order."""
    return [*sql.COMPONENTS, *web.COMPONENTS, *mock.COMPONENTS]


@hookimpl
def register_components() -> list[type]:
    return all_components()
