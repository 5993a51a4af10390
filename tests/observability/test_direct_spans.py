"""The plugin's own spans made without ``Tracer.start_span`` (``spans.py``) are the spans the SDK makes."""

from __future__ import annotations

import logging

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, TraceIdRatioBased
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.span import TraceState
from service_observability import encoding, spans

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
STATE = TraceState([("vendor", "v1"), ("other", "x")])


def _provider(sampler=None, limits: SpanLimits | None = None):
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "s"}), sampler=sampler, span_limits=limits)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, provider.get_tracer("service_observability"), memory


def _remote(flags: int = 1, state: TraceState | None = STATE):
    context = SpanContext(
        TRACE_ID, 0x00F067AA0BA902B7, is_remote=True, trace_flags=TraceFlags(flags), trace_state=state
    )
    return trace.set_span_in_context(NonRecordingSpan(context))


def _fields(span) -> dict:
    context, parent = span.context, span.parent
    return {
        "name": span.name,
        "kind": span.kind,
        "trace_id": context.trace_id,
        "flags": int(context.trace_flags),
        "state": context.trace_state,
        "remote": context.is_remote,
        "parent": (parent.trace_id, parent.span_id, parent.is_remote) if parent is not None else None,
        "attributes": list(span.attributes.items()),  # the order too
        "dropped": (span.dropped_attributes, span.dropped_events, span.dropped_links),
        "status": (span.status.status_code, span.status.description),
        "events": [(e.name, dict(e.attributes)) for e in span.events],
        "links": [(link.context, dict(link.attributes)) for link in span.links],
        "resource": span.resource,
        "scope": span.instrumentation_scope,
    }


def _both(tracer, memory, make, context=None):
    """The same span made both ways (``make(span)`` does the rest), exported: (SDK's, direct)."""
    memory.clear()
    attributes = {"flow_id": "f", "public": False, "n": 3, "ratio": 0.5}
    theirs = tracer.start_span("flow.execute", context=context, kind=SpanKind.INTERNAL, attributes=dict(attributes))
    mine = spans.start(tracer, "flow.execute", SpanKind.INTERNAL, dict(attributes), context)
    assert isinstance(mine, spans.DirectSpan) and not isinstance(theirs, spans.DirectSpan)
    for span in (theirs, mine):
        make(span)
        span.end()
    first, second = memory.get_finished_spans()
    return first, second


def _finish(span) -> None:
    span.set_attributes({"status": "error", "duration_ms": 1.5})
    span.set_attribute("n", 4)  # set again: moves to the end, as BoundedAttributes keeps it
    span.set_attribute("texts", ["a", "b"])  # cleaned to a tuple
    span.set_attribute("", "dropped")
    span.set_status(Status(StatusCode.ERROR, "it failed"))
    span.add_event("an event", {"k": "v"})
    span.record_exception(ValueError("bad"))
    span.update_name("renamed")


def test_a_child_of_a_sampled_parent_is_the_span_the_sdk_makes():
    _, tracer, memory = _provider()
    parent = tracer.start_span("request", kind=SpanKind.SERVER)
    token = otel_context.attach(trace.set_span_in_context(parent))
    try:
        theirs, mine = _both(tracer, memory, _finish)
    finally:
        otel_context.detach(token)
    ours = _fields(mine)
    assert ours == _fields(theirs)
    assert ours["parent"] == (parent.get_span_context().trace_id, parent.get_span_context().span_id, False)
    assert ours["flags"] == int(parent.get_span_context().trace_flags) == 3  # sampled, random trace id
    assert ours["attributes"][-1] == ("texts", ("a", "b")) and ours["dropped"] == (1, 0, 0)
    assert mine.start_time <= mine.end_time and mine.context.span_id not in (0, theirs.context.span_id)
    # and the encoder writes the same message (ids and times aside: the events' times too)
    mine._context, mine._start_time, mine._end_time = theirs.context, theirs.start_time, theirs.end_time
    mine._events = theirs._events
    assert encoding.encode_spans([mine]) == encoding.encode_spans([theirs])


def test_a_remote_parent_gives_its_trace_state_and_flags():
    _, tracer, memory = _provider()
    for flags in (1, 3):
        theirs, mine = _both(tracer, memory, lambda span: None, _remote(flags))
        assert _fields(mine) == _fields(theirs)
        assert mine.context.trace_state == STATE and int(mine.context.trace_flags) == flags
        assert mine.parent.is_remote and not mine.context.is_remote


def test_the_ratio_sampler_keeps_a_sampled_parents_children():
    _, tracer, memory = _provider(sampler=ParentBased(TraceIdRatioBased(0.0001)))
    theirs, mine = _both(tracer, memory, lambda span: span.set_attribute("status", "ok"), _remote())
    assert _fields(mine) == _fields(theirs)


def test_the_sdk_makes_what_the_direct_path_cannot_decide():
    _, tracer, _ = _provider()
    root = spans.start(tracer, "flow.execute", SpanKind.INTERNAL, {"a": 1})  # no parent: the root sampler
    unsampled = spans.start(tracer, "flow.execute", SpanKind.INTERNAL, {"a": 1}, _remote(0))
    assert not isinstance(root, spans.DirectSpan) and root.is_recording()
    assert not unsampled.is_recording() and unsampled.get_span_context().trace_id == TRACE_ID
    for sampler in (ALWAYS_ON, ParentBased(ALWAYS_ON, local_parent_sampled=TraceIdRatioBased(0.5))):
        _, other, _ = _provider(sampler=sampler)
        assert not isinstance(spans.start(other, "x", SpanKind.INTERNAL, {}, _remote()), spans.DirectSpan)
    _, limited, _ = _provider(limits=SpanLimits(max_span_attribute_length=10))
    assert not isinstance(spans.start(limited, "x", SpanKind.INTERNAL, {}, _remote()), spans.DirectSpan)

    class Starting(SpanProcessor):
        def on_start(self, span, parent_context=None) -> None:
            pass

    provider, hooked, _ = _provider()
    assert isinstance(spans.start(hooked, "x", SpanKind.INTERNAL, {}, _remote()), spans.DirectSpan)
    provider.add_span_processor(Starting())  # a processor with a start hook: the SDK's path from now on
    assert not isinstance(spans.start(hooked, "x", SpanKind.INTERNAL, {}, _remote()), spans.DirectSpan)
    provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
    assert not isinstance(spans.start(hooked, "x", SpanKind.INTERNAL, {}, _remote()), spans.DirectSpan)


def test_attribute_limits_and_cleaning_as_the_sdk(caplog):
    _, tracer, memory = _provider(limits=SpanLimits(max_span_attributes=32))

    def many(span) -> None:
        span.set_attribute("none", None)
        span.set_attribute("object", object())
        for n in range(40):
            span.set_attribute(f"k{n}", n)

    with caplog.at_level(logging.ERROR):
        theirs, mine = _both(tracer, memory, many, _remote())
    assert _fields(mine) == _fields(theirs)
    assert mine.dropped_attributes == 14 and len(mine.attributes) == 32
    initial = {f"k{n}": n for n in range(40)} | {"bad": [1, "x"], "": 1}
    theirs = tracer.start_span("x", context=_remote(), attributes=dict(initial))
    mine = spans.start(tracer, "x", SpanKind.INTERNAL, dict(initial), _remote())
    assert list(mine.attributes.items()) == list(theirs.attributes.items())
    assert mine.dropped_attributes == theirs.dropped_attributes


def test_an_ended_span_changes_no_more_and_is_exported_once(caplog):
    _, tracer, memory = _provider()
    span = spans.start(tracer, "x", SpanKind.CLIENT, {"a": 1}, _remote(), start_time=5)
    span.end(end_time=9)
    with caplog.at_level(logging.WARNING):
        span.set_attribute("b", 2)
        span.set_attributes({"c": 3})
        span.set_status(Status(StatusCode.ERROR, "late"))
        span.end()
    [exported] = memory.get_finished_spans()
    assert exported is span and not span.is_recording()
    assert dict(span.attributes) == {"a": 1} and span.status.status_code is StatusCode.UNSET
    assert (span.start_time, span.end_time, span.kind) == (5, 9, SpanKind.CLIENT)


def test_a_direct_span_is_current_and_recording_for_what_runs_under_it():
    _, tracer, memory = _provider()
    run = spans.start(tracer, "flow.execute", SpanKind.INTERNAL, {}, _remote())
    token = otel_context.attach(trace.set_span_in_context(run))
    try:
        assert trace.get_current_span() is run and run.is_recording()  # the statement tracer asks this
        child = spans.start(tracer, "Chat Input", SpanKind.INTERNAL, {})
        sdk_child = tracer.start_span("SELECT")
        for one in (child, sdk_child):
            assert one.parent.span_id == run.context.span_id and one.context.trace_id == TRACE_ID
            one.end()
    finally:
        otel_context.detach(token)
        run.end()
    assert [s.name for s in memory.get_finished_spans()] == ["Chat Input", "SELECT", "flow.execute"]


@pytest.fixture(autouse=True)
def _fresh_verdict(monkeypatch):
    """Each test's providers are checked anew (the verdict is kept per tracer and processors)."""
    monkeypatch.setattr(spans, "_checked", (None, None, None, None, False))
