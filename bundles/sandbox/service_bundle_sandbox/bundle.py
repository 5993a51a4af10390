"""Hook implementations of the sandbox bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_sandbox import python_interpreter, python_repl_tool


@hookimpl
def register_components() -> list[type]:
    return [*python_interpreter.COMPONENTS, *python_repl_tool.COMPONENTS]
