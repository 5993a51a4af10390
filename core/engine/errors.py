"""Engine errors. None of them carries traceback text meant for clients."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ComponentError",
    "EngineError",
    "GraphValidationError",
    "PolicyRefused",
    "RegistryError",
    "RunCancelled",
    "RunRefused",
    "RunTimeout",
    "SuspendRun",
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


class PolicyRefused(ComponentError):
    """A run check refused a graph the run was about to run (a sub-flow using a blocked component).

    A component error for the vertex that loaded the graph, so the parent run fails naming it; an
    agent does not hand it to the model as a tool's failure but lets it fail the run.
    """


class RunRefused(EngineError):
    """A run request refused before anything runs (a tweak the policy refuses, an input conflict).

    ``status`` and ``detail`` are what an HTTP surface answers (``{"detail": detail}``); the web service
    and the executor answer the same.
    """

    def __init__(self, status: int, detail: Any) -> None:
        self.status = status
        self.detail = detail
        super().__init__(detail["message"] if isinstance(detail, dict) and "message" in detail else str(detail))


class RunCancelled(EngineError):
    """The run was cancelled by the caller."""


class RunTimeout(EngineError):
    """The run went over its time limit."""


class SuspendRun(EngineError):
    """Raised by a component (through ``Component.suspend``) to pause the run for outside input.

    ``request`` (JSON) says what is asked (shown to the person or client who
    answers); ``state`` (JSON) is what the component needs to carry on when the
    run resumes (for an agent, its conversation so far). Both are written to
    the run's checkpoint.
    """

    def __init__(self, request: dict[str, Any], state: dict[str, Any] | None = None, request_id: str | None = None):
        import uuid

        self.request = request
        self.state = state or {}
        self.request_id = request_id or str(uuid.uuid4())
        self.vertex_id: str | None = None  # set by the engine: the vertex that suspended
        super().__init__("Run suspended for input")
