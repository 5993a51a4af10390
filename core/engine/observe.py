"""What a run tells its observers while it goes: each component it runs, each model call a component makes.

``RunContext.watch`` is None unless an ``observe_run`` observer asked (it implements the optional
``component`` or ``model_call`` methods of :class:`core.contracts.RunObserver`): the engine then calls
:meth:`RunWatch.component` around every vertex, and model components report each call with
:meth:`RunWatch.model_call` (and ask :meth:`RunWatch.before_model_call` first, which may refuse the call),
in the thread that runs the vertex. Nothing is built or called otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ComponentEnd", "ModelCall", "RunWatch"]

#: ends one component's watch: ``end(status, error)``, status ``ok``, ``error``, ``paused`` or ``cancelled``
ComponentEnd = Callable[[str, str | None], None]


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One call to a language model, as the provider answered it.

    ``input_tokens``/``output_tokens`` come from the provider's ``usage`` (None when it gave none; a
    streamed answer's usage too). ``started_at`` is ``time.time()``; ``error`` the user-facing failure text.
    ``prompt``/``completion`` are the texts (observers withhold them unless their settings allow).
    """

    provider: str
    model: str
    started_at: float
    duration_s: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    streamed: bool = False
    error: str | None = None
    finish_reason: str | None = None
    prompt: str | None = None
    completion: str | None = None

    def genai_attributes(self, content: bool = False) -> dict[str, Any]:
        """The call's OpenTelemetry attributes (GenAI semantic conventions: operation, provider, models, stream,
        token usage, finish reason), the prompt and completion texts only when ``content`` allows them; one
        mapping for every exporter of model-call spans (the observability plugin's, the executor's)."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
            "gen_ai.response.model": self.model,
            "gen_ai.request.stream": self.streamed,
        }
        if self.input_tokens is not None:
            attributes["gen_ai.usage.input_tokens"] = self.input_tokens
        if self.output_tokens is not None:
            attributes["gen_ai.usage.output_tokens"] = self.output_tokens
        if self.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = (self.finish_reason,)
        if content:
            if self.prompt is not None:
                attributes["gen_ai.prompt"] = self.prompt
            if self.completion is not None:
                attributes["gen_ai.completion"] = self.completion
        return attributes


class RunWatch(Protocol):
    """What the engine tells while the run goes (``RunContext.watch``)."""

    def component(self, vertex_id: str, display_name: str, component_type: str) -> ComponentEnd:
        """A component starts (in the thread that runs it); the answer is called once when it ends."""
        ...

    def model_call(self, call: ModelCall) -> None:
        """A model call ended (in the thread of the component that made it)."""
        ...

    def before_model_call(self, provider: str, model: str) -> None:
        """A model call is about to be made: raise :class:`core.engine.ComponentError` to refuse it (a budget
        spent); the component fails with that message."""
        ...
