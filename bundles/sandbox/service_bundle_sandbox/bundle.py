"""Hook implementations of the sandbox bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_sandbox import python_interpreter


@hookimpl
def register_components() -> list[type]:
    return list(python_interpreter.COMPONENTS)
