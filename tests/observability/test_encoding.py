"""The plugin's direct OTLP span encoder writes what the official encoder writes (issue 30's export cost)."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as official
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.span import TraceState
from service_observability import encoding

REMOTE = SpanContext(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7, is_remote=True, trace_flags=TraceFlags(1))


def _spans(resource: Resource | None = None, limits: SpanLimits | None = None):
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=resource or Resource.create({"service.name": "s", "n": 3}), span_limits=limits)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def _same(spans) -> bytes:
    mine = encoding.encode_spans(spans)
    theirs = official(spans)
    assert ExportTraceServiceRequest.FromString(mine) == theirs
    assert mine == theirs.SerializeToString()  # the same fields in the same order
    return mine


def test_every_field_and_value_type_encodes_as_the_official_encoder_does():
    from opentelemetry import context, trace

    provider, memory = _spans()
    tracer = provider.get_tracer("scope-a", "1.2", schema_url="https://opentelemetry.io/schemas/1.21.0")
    other = provider.get_tracer("scope-b", attributes={"scope.attr": True})
    values = {
        "text": "héllo" * 40,  # a length over 127: a two-byte varint
        "empty": "",
        "yes": True,
        "no": False,
        "zero": 0,
        "small": 7,
        "big": 2**40,
        "negative": -5,
        "float": 1.25,
        "floats": (0.5, -2.0),
        "texts": ("a", "b"),
        "ints": (1, -1, 300),
        "bools": (True, False),
        "bytes": b"\x00\xff",
    }
    parent = trace.set_span_in_context(NonRecordingSpan(REMOTE))
    remote_child = tracer.start_span("continued", context=parent, kind=SpanKind.SERVER, attributes=values)
    remote_child.add_event("an event", {"k": "v", "n": 2})
    remote_child.add_event("")
    remote_child.set_status(Status(StatusCode.ERROR, "it failed"))
    remote_child.end()
    token = context.attach(trace.set_span_in_context(remote_child))
    try:
        local_child = other.start_span("", kind=SpanKind.CLIENT, links=[Link(REMOTE, {"why": "batch"}), Link(REMOTE)])
        local_child.set_status(Status(StatusCode.OK))
        local_child.end()
    finally:
        context.detach(token)
    for kind in (SpanKind.INTERNAL, SpanKind.PRODUCER, SpanKind.CONSUMER):
        tracer.start_span(f"kind {kind.name}", kind=kind).end()
    state = SpanContext(REMOTE.trace_id, 0x1234, is_remote=True, trace_state=TraceState([("vendor", "x"), ("b", "2")]))
    tracer.start_span("with state", context=trace.set_span_in_context(NonRecordingSpan(state))).end()
    spans = memory.get_finished_spans()
    _same(spans)
    _same(spans[:1])
    _same(list(reversed(spans)))
    _same([])


def test_the_same_attribute_values_again_come_from_the_cache_unchanged():
    provider, memory = _spans()
    tracer = provider.get_tracer("scope")
    for n in range(3):
        tracer.start_span("repeat", attributes={"same": "value", "flag": True, "one": 1, "n": n}).end()
    tracer.start_span("ones", attributes={"same": "value", "flag": 1, "one": True}).end()  # True == 1: not mixed up
    _same(memory.get_finished_spans())
    assert ("flag", True, bool) in encoding._KEY_VALUES and ("flag", 1, int) in encoding._KEY_VALUES


def test_dropped_counts_are_written():
    limits = SpanLimits(max_span_attributes=2, max_events=1, max_links=1, max_event_attributes=1)
    provider, memory = _spans(limits=limits)
    tracer = provider.get_tracer("scope")
    span = tracer.start_span("limited", attributes={"a": 1, "b": 2, "c": 3}, links=[Link(REMOTE), Link(REMOTE)])
    span.add_event("one", {"x": 1, "y": 2})
    span.add_event("two")
    span.end()
    [finished] = memory.get_finished_spans()
    assert finished.dropped_attributes == 1 and finished.dropped_events == 1 and finished.dropped_links == 1
    _same([finished])


def test_spans_of_two_providers_group_by_resource_and_equal_resources_merge():
    first, first_memory = _spans(Resource.create({"service.name": "one"}))
    second, second_memory = _spans(Resource.create({"service.name": "two"}))
    again, again_memory = _spans(Resource.create({"service.name": "one"}))  # equal to the first, another object
    for provider in (first, second, again):
        provider.get_tracer("scope").start_span("span").end()
    spans = [*first_memory.get_finished_spans(), *second_memory.get_finished_spans()]
    spans += again_memory.get_finished_spans()
    decoded = ExportTraceServiceRequest.FromString(_same(spans))
    assert [len(rs.scope_spans[0].spans) for rs in decoded.resource_spans] == [2, 1]


def test_an_attribute_that_cannot_be_encoded_is_left_out_as_the_official_encoder_does(caplog):
    provider, memory = _spans()
    provider.get_tracer("scope").start_span("span", attributes={"kept": "yes"}).end()
    [span] = memory.get_finished_spans()
    span._attributes._dict["odd"] = object()  # past the SDK's own checks
    span._attributes._dict["huge"] = 2**64  # the SDK keeps it; an int64 cannot hold it
    span._attributes._dict["huges"] = (1, -(2**63) - 1)
    span._attributes._dict["least"] = -(2**63)
    decoded = ExportTraceServiceRequest.FromString(_same([span]))
    assert [a.key for a in decoded.resource_spans[0].scope_spans[0].spans[0].attributes] == ["kept", "least"]


@pytest.mark.parametrize("protocol", ["http/protobuf", None])
def test_the_http_exporter_in_force_encodes_with_the_direct_encoder(monkeypatch, protocol):
    from service_observability import otel

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    if protocol:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
    try:
        otel.configure()
        [processor] = otel.tracer_provider()._active_span_processor._span_processors
        assert isinstance(processor._batch_processor._exporter, encoding.SpanExporter)
    finally:
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
        otel.configure()
