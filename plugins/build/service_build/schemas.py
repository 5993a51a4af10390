"""Query and body schemas of the build endpoints (unknown members are ignored, as the reference does)."""

from __future__ import annotations

from typing import Any

from marshmallow import EXCLUDE, Schema, ValidationError, fields, validate

DELIVERY = ("streaming", "direct", "polling")


def _object_or_null(value: Any) -> None:
    if value is not None and not isinstance(value, dict):
        raise ValidationError("Flow data must be an object with nodes and edges")


class _Lenient(Schema):
    class Meta:
        unknown = EXCLUDE


class BuildQuerySchema(_Lenient):
    stop_component_id = fields.String(load_default=None, allow_none=True)
    start_component_id = fields.String(load_default=None, allow_none=True)
    log_builds = fields.Boolean(load_default=True)
    flow_name = fields.String(load_default=None, allow_none=True)
    event_delivery = fields.String(
        load_default="polling",
        validate=validate.OneOf(DELIVERY),
        metadata={"description": "polling (default): returns {job_id}; direct: the response is the event stream"},
    )


class EventsQuerySchema(_Lenient):
    event_delivery = fields.String(load_default="streaming", validate=validate.OneOf(DELIVERY))


class InputsSchema(_Lenient):
    input_value = fields.String(load_default=None, allow_none=True)
    session = fields.String(load_default=None, allow_none=True)
    components = fields.List(fields.String(), load_default=None, allow_none=True)
    type = fields.String(
        load_default="chat",
        allow_none=True,
        metadata={"description": "which input vertices get input_value: chat, text or any"},
    )


class BuildBodySchema(_Lenient):
    data = fields.Raw(
        load_default=None,
        allow_none=True,
        validate=_object_or_null,
        metadata={
            "type": "object",
            "description": "an unsaved graph {nodes, edges}; the stored flow is used when absent",
        },
    )
    files = fields.List(fields.String(), load_default=None, allow_none=True)
    inputs = fields.Nested(InputsSchema, load_default=None, allow_none=True)


class PublicBuildBodySchema(_Lenient):
    data = fields.Raw(
        load_default=None,
        allow_none=True,
        metadata={"description": "refused unless null: public builds use the stored flow"},
    )
    files = fields.List(fields.String(), load_default=None, allow_none=True)
    inputs = fields.Nested(InputsSchema, load_default=None, allow_none=True)


class JobIdSchema(Schema):
    job_id = fields.String(required=True)


class CancelSchema(Schema):
    success = fields.Boolean(required=True)
    message = fields.String(required=True)


class VerticesBodySchema(_Lenient):
    data = fields.Raw(load_default=None, allow_none=True, validate=_object_or_null)


class VertexBuildBodySchema(_Lenient):
    inputs = fields.Nested(InputsSchema, load_default=None, allow_none=True)
    files = fields.List(fields.String(), load_default=None, allow_none=True)


class PartialQuerySchema(_Lenient):
    stop_component_id = fields.String(load_default=None, allow_none=True)
    start_component_id = fields.String(load_default=None, allow_none=True)
