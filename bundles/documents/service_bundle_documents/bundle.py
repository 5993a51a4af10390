"""Hook implementations of the files bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_documents import read_file


@hookimpl
def register_components() -> list[type]:
    return list(read_file.COMPONENTS)
