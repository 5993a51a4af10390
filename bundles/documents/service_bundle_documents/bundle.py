"""Hook implementations of the files bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_documents import local, read_file, write_file


@hookimpl
def register_components() -> list[type]:
    return [*read_file.COMPONENTS, *local.COMPONENTS, *write_file.COMPONENTS]
