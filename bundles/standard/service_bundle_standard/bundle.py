"""Hook implementations of the standard bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_standard import (
    data_operations,
    embeddings,
    flow_control,
    flow_extras,
    http,
    human_input,
    inputs_outputs,
    legacy_data,
    legacy_parsing,
    processing,
    utilities,
)


def all_components() -> list[type]:
    """Every component class of this bundle, in catalog order."""
    return [
        *inputs_outputs.COMPONENTS,
        *data_operations.COMPONENTS,
        *processing.COMPONENTS,
        *legacy_data.COMPONENTS,
        *legacy_parsing.COMPONENTS,
        *flow_control.COMPONENTS,
        *flow_extras.COMPONENTS,
        *human_input.COMPONENTS,
        *http.COMPONENTS,
        *utilities.COMPONENTS,
        *embeddings.COMPONENTS,
    ]


@hookimpl
def register_components() -> list[type]:
    return all_components()
