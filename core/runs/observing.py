"""What the run service tells the observers of a run (the ``observe_run`` hook, docs/hooks.md): the request as
JSON made on first read, the optional component and model-call watchers as one ``RunWatch``, and the
``RunEnded`` record, told once to every observer (one that raises is logged and never fails the run)."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from core.contracts import RunEnded, RunObserver, RunStarted
from core.engine import RunResult
from core.engine.execution import failure_text
from core.engine.observe import ComponentEnd, ModelCall
from core.engine.results import last_chat_text

if TYPE_CHECKING:
    from core.runs.service import RunRequest

log = logging.getLogger(__name__)


def ended_of(started: RunStarted, results: list[RunResult], duration: float) -> RunEnded:
    """The ``RunEnded`` record of a run whose inputs gave ``results`` (the last one ended it)."""
    outputs = tuple(last_chat_text(r) or None for r in results if r.ok)
    final = results[-1] if results else None
    if final is None or final.ok:
        return RunEnded(started, "ok", duration, outputs=outputs)
    if final.status == "suspended":
        return RunEnded(started, "paused", duration, outputs=outputs)
    status = "cancelled" if final.status == "cancelled" else "error"
    return RunEnded(started, status, duration, error=failure_text(final), outputs=outputs)


_SCALARS = (str, int, float, bool)
_FIELDS: dict[type, frozenset[str]] = {}


def _fields(cls: type) -> frozenset[str]:
    """The field names of the request dataclass ``cls`` (the keys of its JSON)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return names


class RequestJson(Mapping[str, Any]):
    """``RunStarted.request``: the request's JSON, made on first read (most observers never read it)."""

    __slots__ = ("_data", "_req")

    def __init__(self, req: RunRequest) -> None:
        self._req = req
        self._data: dict[str, Any] | None = None

    def _json(self) -> dict[str, Any]:
        if self._data is None:
            self._data = self._req.to_json()
        return self._data

    def __getitem__(self, key: str) -> Any:
        if self._data is None:  # the common reads, without converting the rest
            if key == "inputs":
                return [dataclasses.asdict(item) for item in self._req.inputs]
            if key not in _fields(type(self._req)):  # the JSON's keys are the fields
                raise KeyError(key)
            value = getattr(self._req, key)
            if value is None or isinstance(value, _SCALARS):  # as the JSON has it: a copy would be the same
                return value
        return self._json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._json())

    def copy(self) -> dict[str, Any]:
        """The JSON as a new dict (``dict(mapping)`` would read it key by key)."""
        return dict(self._json())

    def shallow(self) -> dict[str, Any]:
        """The JSON as a new dict whose nested values (tweaks, graph, variables) are the request's own: to read
        or store at once, never to change (a deep copy costs a recorded run more than its row's write)."""
        if self._data is not None:
            return dict(self._data)
        return self._req.to_job_json()

    def __len__(self) -> int:
        return len(self._json())


class Watch:
    """The observers that watch components and model calls (their optional methods), as one ``RunWatch``."""

    __slots__ = ("calls", "checks", "components")

    def __init__(self, components: list[Any], calls: list[Any], checks: list[Any]) -> None:
        self.components = components
        self.calls = calls
        self.checks = checks

    @classmethod
    def of(cls, observers: list[RunObserver]) -> Watch | None:
        found = [
            [m for m in (getattr(o, name, None) for o in observers) if callable(m)]
            for name in ("component", "model_call", "before_model_call")
        ]
        return cls(*found) if any(found) else None

    def before_model_call(self, provider: str, model: str) -> None:
        for check in self.checks:  # a ComponentError (a budget spent) refuses the call: it propagates
            check(provider, model)

    def component(self, vertex_id: str, display_name: str, component_type: str) -> ComponentEnd:
        ends = []
        for start in self.components:
            try:
                ends.append(start(vertex_id, display_name, component_type))
            except Exception:
                log.exception("a run observer failed at the start of component %s", vertex_id)

        def end(status: str, error: str | None) -> None:
            for finish in reversed(ends):
                try:
                    finish(status, error)
                except Exception:
                    log.exception("a run observer failed at the end of component %s", vertex_id)

        return end

    def model_call(self, call: ModelCall) -> None:
        for hear in self.calls:
            try:
                hear(call)
            except Exception:
                log.exception("a run observer failed hearing a model call")


def ending_hook(
    observers: list[RunObserver],
    started: RunStarted,
    on_result: Callable[[RunResult], None] | None,
    inputs: int,
    t0: float,
) -> Callable[[RunResult], None] | None:
    """``on_result`` for the run, telling the observers that have the optional ``ending(RunEnded)`` how the
    run ends as its last input's result is known (or the first that failed or paused), before that input's
    messages are stored; ``on_result`` itself (None: nobody has ``ending``, the run pays nothing more)."""
    early = [m for m in (getattr(o, "ending", None) for o in observers) if callable(m)]
    if not early:
        return on_result
    seen: list[RunResult] = []
    told = False

    def result_then_ending(result: RunResult) -> None:
        nonlocal told
        if on_result is not None:
            on_result(result)
        if told:
            return
        seen.append(result)
        if not result.ok or len(seen) >= inputs:
            told = True
            ended = ended_of(started, seen, time.perf_counter() - t0)
            for hear in early:
                try:
                    hear(ended)
                except Exception:
                    log.exception("a run observer failed as run %s was ending", started.run_id)

    return result_then_ending


def tell_end(observers: list[RunObserver], ended: RunEnded) -> None:
    """Tell every observer how the run ended; one that raises is logged and never fails the run."""
    for observer in observers:
        try:
            observer.end(ended)
        except Exception:
            log.exception("a run observer failed at the end of run %s", ended.run.run_id)
