"""Hook implementations of the standard bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_standard import data_operations, flow_control, http, inputs_outputs, processing, utilities


def all_components() -> list[type]:
    """Every component class of this bundle, in catalog order."""
    return [
        *inputs_outputs.COMPONENTS,
        *data_operations.COMPONENTS,
        *processing.COMPONENTS,
        *flow_control.COMPONENTS,
        *http.COMPONENTS,
        *utilities.COMPONENTS,
    ]


@hookimpl
def register_components() -> list[type]:
    return all_components()
