"""OTLP/HTTP span export with a direct protobuf wire encoder (the official exporter's transport, not its encoder).

The official encoder (``opentelemetry-exporter-otlp-proto-common``) builds a protobuf object for every span,
attribute and value (``Span``, ``KeyValue``, ``AnyValue``) and then serializes the tree: about 270,000
instructions for a span of five attributes, more than making the span (bench/NOTES.md). The OTLP trace
messages are a fixed, small part of the protobuf wire format, so :func:`encode_spans` writes the same
``ExportTraceServiceRequest`` bytes directly, several times cheaper. Every field the official encoder writes
is written, with the same presence rules (proto3 scalars left out at their defaults, ``oneof`` values and
sub-messages always written); ``tests/observability/test_encoding.py`` parses both encodings of the same
spans with the real protobuf messages and compares them.

:class:`SpanExporter` is the official ``OTLPSpanExporter`` (its endpoint, headers, compression, timeout,
retries, size limit and self-metrics unchanged) with this encoder in ``export``.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanKind

log = logging.getLogger(__name__)

_KIND = {SpanKind.INTERNAL: 1, SpanKind.SERVER: 2, SpanKind.CLIENT: 3, SpanKind.PRODUCER: 4, SpanKind.CONSUMER: 5}
_double = struct.Struct("<d").pack
_fixed64 = struct.Struct("<Q").pack
_fixed32 = struct.Struct("<I").pack
#: SpanFlags: the parent's is_remote is known (always), and the parent is remote
_HAS_IS_REMOTE = 0x100
_IS_REMOTE = 0x200
#: single-byte varints, the usual lengths and small numbers
_SMALL = [bytes((n,)) for n in range(128)]


def _varint(n: int) -> bytes:
    if n < 128:
        return _SMALL[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _len(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload."""
    n = len(payload)
    return tag + (_SMALL[n] if n < 128 else _varint(n)) + payload


def _text(tag: bytes, text: str) -> bytes:
    return _len(tag, text.encode())


def _int64(n: int) -> bytes:
    if not -(1 << 63) <= n < 1 << 63:  # as protobuf: the attribute is left out (``_attributes``)
        raise ValueError(f"Value out of range: {n}")
    return _varint(n if n >= 0 else n + (1 << 64))


# AnyValue: string_value = 1, bool_value = 2, int_value = 3, double_value = 4, array_value = 5,
# kvlist_value = 6, bytes_value = 7 (a oneof: written even at its default)
def _value(value: Any) -> bytes:
    if isinstance(value, str):
        return _text(b"\x0a", value)
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, int):
        return b"\x18" + _int64(value)
    if isinstance(value, float):
        return b"\x21" + _double(value)
    if value is None:
        return b""
    if isinstance(value, bytes):
        return _len(b"\x3a", value)
    if isinstance(value, Sequence):
        return _len(b"\x2a", b"".join([_len(b"\x0a", _value(v)) for v in value]))
    if isinstance(value, Mapping):
        return _len(b"\x32", b"".join([_len(b"\x0a", _key_value(str(k), v)) for k, v in value.items()]))
    raise TypeError(f"Invalid type {type(value)} of value {value}")


def _key_value(key: str, value: Any) -> bytes:
    # KeyValue: key = 1, value = 2 (a message: always written, empty for None)
    return (_text(b"\x0a", key) if key else b"") + _len(b"\x12", _value(value))


#: encoded ``KeyValue`` bodies (their length first) of string, boolean and integer attributes: most repeat
#: from span to span (``http.request.method``, ``component.type``, ``protocol``, ``flow_id``...); emptied when full
_KEY_VALUES: dict[tuple[str, Any, type], bytes] = {}
_KEY_VALUES_MAX = 4096


def _attributes(tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
    if not attributes:
        return b""
    out = []
    cache = _KEY_VALUES
    for key, value in attributes.items():
        kind = type(value)
        try:
            if kind is str or kind is bool or kind is int:  # the type in the key: True == 1
                body = cache.get((key, value, kind))
                if body is None:
                    kv = _key_value(key, value)
                    n = len(kv)
                    body = (_SMALL[n] if n < 128 else _varint(n)) + kv
                    if len(cache) >= _KEY_VALUES_MAX:
                        cache.clear()
                    cache[key, value, kind] = body
                out.append(tag + body)
            else:
                out.append(_len(tag, _key_value(key, value)))
        except Exception:  # as the official encoder: the attribute is left out, the span kept
            log.exception("Failed to encode key %s", key)
    return b"".join(out)


def _flags(parent: Any) -> bytes:
    flags = _HAS_IS_REMOTE | _IS_REMOTE if parent is not None and parent.is_remote else _HAS_IS_REMOTE
    return _fixed32(flags)


_FLAGS_LOCAL = b"\x85\x01" + _fixed32(_HAS_IS_REMOTE)
_FLAGS_REMOTE = b"\x85\x01" + _fixed32(_HAS_IS_REMOTE | _IS_REMOTE)
_KIND_FIELD = {kind: b"\x30" + _SMALL[number] for kind, number in _KIND.items()}


def _span(span: ReadableSpan) -> bytes:
    context = span.get_span_context()
    assert context is not None
    parent = span.parent
    out = [b"\x0a\x10", context.trace_id.to_bytes(16, "big"), b"\x12\x08", context.span_id.to_bytes(8, "big")]
    trace_state = context.trace_state
    if trace_state:
        out.append(_text(b"\x1a", ",".join([f"{key}={value}" for key, value in trace_state.items()])))
    if parent is not None:
        out.append(b"\x22\x08")
        out.append(parent.span_id.to_bytes(8, "big"))
    name = span.name
    if name:
        encoded = name.encode()
        n = len(encoded)
        out.append(b"\x2a" + (_SMALL[n] if n < 128 else _varint(n)) + encoded)
    out.append(_KIND_FIELD[span.kind])
    if span.start_time:
        out.append(b"\x39" + _fixed64(span.start_time))
    if span.end_time:
        out.append(b"\x41" + _fixed64(span.end_time))
    out.append(_attributes(b"\x4a", span.attributes))
    if span.dropped_attributes:
        out.append(b"\x50" + _varint(span.dropped_attributes))
    for event in span.events:
        body = b"\x09" + _fixed64(event.timestamp) if event.timestamp else b""
        if event.name:
            body += _text(b"\x12", event.name)
        body += _attributes(b"\x1a", event.attributes)
        if event.dropped_attributes:
            body += b"\x20" + _varint(event.dropped_attributes)
        out.append(_len(b"\x5a", body))
    if span.dropped_events:
        out.append(b"\x60" + _varint(span.dropped_events))
    for link in span.links:
        linked = link.context
        body = b"\x0a\x10" + linked.trace_id.to_bytes(16, "big") + b"\x12\x08" + linked.span_id.to_bytes(8, "big")
        body += _attributes(b"\x22", link.attributes)
        if link.dropped_attributes:
            body += b"\x28" + _varint(link.dropped_attributes)
        body += b"\x35" + _flags(linked)
        out.append(_len(b"\x6a", body))
    if span.dropped_links:
        out.append(b"\x70" + _varint(span.dropped_links))
    status = span.status
    if status is not None:  # Status: message = 2, code = 3 (the message written even when empty)
        code = status.status_code.value
        if status.description:
            body = _text(b"\x12", status.description) + (b"\x18" + _SMALL[code] if code else b"")
            out.append(_len(b"\x7a", body))
        else:
            out.append(_STATUS[code])
    out.append(_FLAGS_REMOTE if parent is not None and parent.is_remote else _FLAGS_LOCAL)
    return b"".join(out)


#: a Status without a message, by code (unset, ok, error)
_STATUS = [b"\x7a\x00", b"\x7a\x02\x18\x01", b"\x7a\x02\x18\x02"]


def _scope(scope: Any) -> bytes:
    # InstrumentationScope: name = 1, version = 2, attributes = 3
    if scope is None:
        return b""
    out = _text(b"\x0a", scope.name) if scope.name else b""
    if scope.version:
        out += _text(b"\x12", scope.version)
    return out + _attributes(b"\x1a", scope.attributes)


def encode_spans(spans: Sequence[ReadableSpan]) -> bytes:
    """The serialized ``ExportTraceServiceRequest`` of these spans, grouped by resource and scope as the
    official encoder groups them (first seen, first written; equal resources and scopes are one group)."""
    # by the resource object first: a Resource's hash is a JSON dump of its attributes (the official encoder
    # computes it for every span); the providers of a process hold one or two
    by_object: dict[int, tuple[Any, dict[Any, list[bytes]]]] = {}
    for span in spans:
        found = by_object.get(id(span.resource))
        if found is None:
            found = by_object[id(span.resource)] = (span.resource, {})
        scopes = found[1]
        scope = span.instrumentation_scope or None
        encoded = scopes.get(scope)
        if encoded is None:
            encoded = scopes[scope] = []
        encoded.append(_len(b"\x12", _span(span)))
    groups: list[tuple[Any, dict[Any, list[bytes]]]] = []
    for resource, scopes in by_object.values():
        same = next((group for group in groups if group[0] == resource), None)
        if same is None:
            groups.append((resource, scopes))
            continue
        for scope, encoded in scopes.items():
            same[1].setdefault(scope, []).extend(encoded)
    request = []
    for resource, scopes in groups:
        # ResourceSpans: resource = 1, scope_spans = 2, schema_url = 3; ScopeSpans: scope = 1, spans = 2, schema_url = 3
        body = [_len(b"\x0a", _attributes(b"\x0a", resource.attributes))]
        for scope, encoded in scopes.items():
            scope_spans = _len(b"\x0a", _scope(scope)) + b"".join(encoded)
            if scope is not None and scope.schema_url:
                scope_spans += _text(b"\x1a", scope.schema_url)
            body.append(_len(b"\x12", scope_spans))
        if resource.schema_url:
            body.append(_text(b"\x1a", resource.schema_url))
        request.append(_len(b"\x0a", b"".join(body)))
    return b"".join(request)


class SpanExporter(OTLPSpanExporter):
    """The official OTLP/HTTP span exporter, encoding with :func:`encode_spans`."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            log.warning("Exporter already shutdown, ignoring batch")
            return SpanExportResult.FAILURE
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            RequestPayloadTooLargeError,
            _is_request_too_large,
        )

        with self._metrics.export_operation(len(spans)) as result:
            try:
                serialized = encode_spans(spans)
            except Exception as error:
                log.error("Failed to encode span batch: %s", error)
                result.error = error
                return SpanExportResult.FAILURE
            if _is_request_too_large(serialized, self._max_request_size):
                log.warning(
                    "Dropping span batch: serialized size %d bytes exceeds max_request_size %d bytes.",
                    len(serialized),
                    self._max_request_size,
                )
                result.error = RequestPayloadTooLargeError(
                    f"Serialized span request size {len(serialized)} bytes exceeds max_request_size "
                    f"{self._max_request_size} bytes."
                )
                return SpanExportResult.FAILURE
            answer = self._client.export(serialized)
            if not answer.success:
                result.error = answer.error
                result.error_attrs = (
                    {"http.response.status_code": answer.status_code} if answer.status_code is not None else None
                )
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS
