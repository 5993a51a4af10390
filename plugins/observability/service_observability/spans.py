"""The plugin's own spans (``flow.execute``, components, model calls) recorded without the SDK's span path.

The SDK's ``Tracer.start_span`` spends about 220,000 instructions on a span (bench/NOTES.md): the sampler,
``_Span.__init__`` (a ``BoundedAttributes`` that cleans every value under a lock, bounded event and link
lists, a lock), ``start`` and ``end`` under that lock, the span processors' ``on_start`` / ``_on_ending``
loops and a ``ReadableSpan`` copy at the end. :func:`start` makes the same span for much less when the
outcome is known without that work:

* the parent (the context's current span) is valid and sampled, and the provider's sampler is a
  ``ParentBased`` one whose sampled-parent delegates are ``ALWAYS_ON`` (the default
  ``parentbased_always_on`` and ``parentbased_traceidratio``): the decision is "record and sample", the
  attributes are the ones given, the trace state is the parent's;
* every span processor's ``on_start`` and ``_on_ending`` do nothing (the batch and simple processors);
* the SDK's own span metrics are off, the tracer is enabled, and no attribute value length limit is set.

The span is then a :class:`DirectSpan`: the SDK's ``Span`` class (so it is current, recording, takes
attributes, status, events and exceptions, and is its own ``ReadableSpan``) with its identity made here
(the parent's trace id and trace state, a span id from the provider's id generator, the sampled flag and
the parent's random-trace-id flag, as ``Tracer.start_span`` sets them), its attributes in a plain dict
(values of another type than ``str``, ``bool``, ``int`` and ``float`` cleaned as the SDK cleans them; the
attribute count limit kept), and ended straight into the provider's span processors' ``on_end``. Anything
else (a root span, an unsampled parent, another sampler or processor) takes ``Tracer.start_span``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from time import time_ns
from typing import Any

import opentelemetry.trace as trace
from opentelemetry.attributes import _clean_attribute_value
from opentelemetry.context import Context
from opentelemetry.sdk.trace import Span as SdkSpan
from opentelemetry.sdk.trace import SpanProcessor, SynchronousMultiSpanProcessor, _check_span_ended
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased
from opentelemetry.sdk.util import BoundedList
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

log = logging.getLogger(__name__)

_PLAIN = frozenset({str, bool, int, float})
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_SAMPLED_RANDOM = TraceFlags(TraceFlags.SAMPLED | TraceFlags.RANDOM_TRACE_ID)
_UNSET = Status(StatusCode.UNSET)
#: span processor hooks that do nothing (a processor with other ones gets the SDK's path)
_QUIET_START = frozenset({SpanProcessor.on_start, BatchSpanProcessor.on_start, SimpleSpanProcessor.on_start})
_QUIET_ENDING = frozenset({SpanProcessor._on_ending, BatchSpanProcessor._on_ending, SimpleSpanProcessor._on_ending})

#: the last verdict: (tracer, its processors tuple, its config, its sampler, direct spans allowed)
_checked: tuple[Any, Any, Any, Any, bool] = (None, None, None, None, False)


def _allowed(tracer: Any) -> bool:
    """Whether :class:`DirectSpan` makes the spans ``tracer.start_span`` would (see the module's text)."""
    try:
        processor = tracer.span_processor
        processors = processor._span_processors
        if type(processor) is not SynchronousMultiSpanProcessor:
            return False
        for each in processors:
            if type(each).on_start not in _QUIET_START or type(each)._on_ending not in _QUIET_ENDING:
                return False
        sampler = tracer.sampler
        if not isinstance(sampler, ParentBased):
            return False
        if sampler._local_parent_sampled is not ALWAYS_ON or sampler._remote_parent_sampled is not ALWAYS_ON:
            return False
        from opentelemetry.sdk.trace._tracer_metrics import NoOpTracerMetrics

        if not isinstance(tracer._tracer_metrics, NoOpTracerMetrics) or not tracer._is_enabled():
            return False
        limits = tracer._span_limits
        return limits.max_span_attribute_length is None and (
            limits.max_span_attributes is None or limits.max_span_attributes >= 32
        )
    except AttributeError:  # another SDK's insides: its own path
        return False


def _direct(tracer: Any) -> bool:
    global _checked
    checked = _checked
    processors = getattr(tracer.span_processor, "_span_processors", None)
    config = getattr(tracer, "_tracer_config", None)
    if checked[0] is tracer and checked[1] is processors and checked[2] is config and checked[3] is tracer.sampler:
        return checked[4]
    verdict = _allowed(tracer)
    _checked = (tracer, processors, config, tracer.sampler, verdict)
    return verdict


def start(
    tracer: Any,
    name: str,
    kind: SpanKind,
    attributes: dict[str, Any],
    context: Context | None = None,
    start_time: int | None = None,
) -> trace.Span:
    """A started span, as ``tracer.start_span(name, context, kind, attributes, start_time=...)`` makes it
    (not made current). ``attributes`` is the span's own afterwards: pass a fresh dict."""
    parent = trace.get_current_span(context).get_span_context()
    if parent is not None and parent.is_valid and parent.trace_flags & 1 and _direct(tracer):
        return DirectSpan(tracer, name, kind, attributes, parent, start_time)
    return tracer.start_span(name, context=context, kind=kind, attributes=attributes, start_time=start_time)


class DirectSpan(SdkSpan):
    """A recording SDK span made without ``Tracer.start_span``: see the module's text."""

    def __init__(  # the SDK's ``Span.__init__`` is not called: what it sets is set here
        self,
        tracer: Any,
        name: str,
        kind: SpanKind,
        attributes: dict[str, Any],
        parent: SpanContext,
        start_time: int | None,
    ) -> None:
        self._name = name
        self._kind = kind
        self._parent = parent
        self._context = SpanContext(
            parent.trace_id,
            tracer.id_generator.generate_span_id(),
            False,
            _SAMPLED_RANDOM if parent.trace_flags & TraceFlags.RANDOM_TRACE_ID else _SAMPLED,
            parent.trace_state,
        )
        self._resource = tracer.resource
        self._instrumentation_info = tracer.instrumentation_info
        self._instrumentation_scope = tracer._instrumentation_scope
        self._limits = limits = tracer._span_limits
        self._span_processor = tracer.span_processor
        self._sampler = tracer.sampler
        self._trace_config = None
        self._record_exception = True
        self._set_status_on_exception = True
        self._record_end_metrics = None
        self._lock = threading.Lock()
        self._status = _UNSET
        self._events: Any = ()
        self._links: Any = ()
        self._dropped = 0
        for key, value in attributes.items():
            if type(value) not in _PLAIN or type(key) is not str or not key:
                attributes = self._cleaned(attributes)
                break
        maxlen = limits.max_span_attributes
        if maxlen is not None and len(attributes) > maxlen:
            self._attributes: dict[str, Any] = {}
            for key, value in attributes.items():
                self._put(key, value)
        else:
            self._attributes = attributes
        self._start_time = start_time if start_time is not None else time_ns()
        self._end_time: int | None = None

    def _cleaned(self, attributes: Mapping[str, Any]) -> dict[str, Any]:
        cleaned = dict(_clean_attribute_value(attributes, None))
        self._dropped += len(attributes) - len(cleaned)
        return cleaned

    def _put(self, key: str, value: Any) -> None:
        """One attribute, as ``BoundedAttributes`` stores it (a key set again moves to the end; the oldest
        one dropped when the count limit is reached)."""
        attributes = self._attributes
        if key in attributes:
            del attributes[key]
        else:
            maxlen = self._limits.max_span_attributes
            if maxlen is not None and len(attributes) >= maxlen:
                log.warning("Attributes dict is full. Dropping the oldest key-value pair from attributes.")
                del attributes[next(iter(attributes))]
                self._dropped += 1
        attributes[key] = value

    @property
    def dropped_attributes(self) -> int:
        return self._dropped

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        with self._lock:
            if self._end_time is not None:
                log.warning("Setting attribute on ended span.")
                return
            for key, value in attributes.items():
                if type(value) not in _PLAIN or type(key) is not str or not key:
                    attributes = self._cleaned(attributes)
                    break
            for key, value in attributes.items():
                self._put(key, value)

    def set_attribute(self, key: str, value: Any) -> None:
        with self._lock:
            if self._end_time is not None:
                log.warning("Setting attribute on ended span.")
                return
            if not key or not isinstance(key, str):
                log.warning("invalid key `%s`. must be non-empty string. Dropping key from attributes.", key)
                self._dropped += 1
                return
            self._put(key, value if type(value) in _PLAIN else _clean_attribute_value(value, None))

    @_check_span_ended
    def _add_event(self, event: Any) -> None:
        if not isinstance(self._events, BoundedList):
            self._events = BoundedList(self._limits.max_events)
        self._events.append(event)

    @_check_span_ended
    def _add_link(self, link: Any) -> None:
        if not isinstance(self._links, BoundedList):
            self._links = BoundedList(self._limits.max_links)
        self._links.append(link)

    def end(self, end_time: int | None = None) -> None:
        with self._lock:
            if self._end_time is not None:
                log.warning("Calling end() on an ended span.")
                return
            self._end_time = end_time if end_time is not None else time_ns()
        # the span is its own ReadableSpan: nothing changes it once ended (every setter checks the end time)
        self._span_processor.on_end(self)
