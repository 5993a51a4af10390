"""Engine errors. None of them carries traceback text meant for clients."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ComponentError",
    "EngineError",
    "GraphValidationError",
    "RegistryError",
    "RunCancelled",
    "RunTimeout",
]


class EngineError(Exception):
    """Base class of engine errors."""


class RegistryError(EngineError):
    """A bad set of component classes (duplicate key, missing key)."""


class GraphValidationError(EngineError):
    """The flow JSON cannot become a graph.

    ``errors`` is a list of ``{"loc": [...], "msg": str, "type": str}`` items
    naming the node (and field) at fault; an HTTP layer turns it into a 422.
    """

    def __init__(self, errors: list[dict[str, Any]]):
        self.errors = errors
        super().__init__("; ".join(e["msg"] for e in errors) or "Invalid graph")


class ComponentError(EngineError):
    """Raised by components for an expected, user-facing failure."""


class RunCancelled(EngineError):
    """The run was cancelled by the caller."""


class RunTimeout(EngineError):
    """The run went over its time limit."""
