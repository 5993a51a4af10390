"""Hook implementations of the A2A bundle: it contributes components only."""

from __future__ import annotations

from core import hookimpl
from service_bundle_a2a.agent import A2AAgent


def all_components() -> list[type]:
    return [A2AAgent]


@hookimpl
def register_components() -> list[type]:
    return all_components()
