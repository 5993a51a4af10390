"""Bodies and queries of the triggers endpoints."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from core.requests import MAX_OFFSET


class ExecutionQuerySchema(Schema):
    flow_id = fields.UUID(load_default=None)
    status = fields.String(
        load_default=None,
        validate=validate.OneOf(["scheduled", "queued", "running", "ok", "error", "paused", "cancelled"]),
    )
    trigger = fields.String(load_default=None, validate=validate.Length(max=32))
    since = fields.Float(load_default=None, metadata={"description": "started at or after (epoch seconds)"})
    until = fields.Float(load_default=None, metadata={"description": "started before (epoch seconds)"})
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=500))
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET))


class FlowQuerySchema(Schema):
    flow_id = fields.UUID(load_default=None)


class PolicySchema(Schema):
    attempts = fields.Integer(load_default=1, validate=validate.Range(min=1, max=10))
    backoff_s = fields.Float(load_default=10.0, validate=validate.Range(min=0, max=86400))
    error_flow_id = fields.UUID(load_default=None, allow_none=True)


class ScheduleCreateSchema(Schema):
    flow_id = fields.UUID(required=True)
    name = fields.String(load_default=None, validate=validate.Length(max=255))
    cron = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=120))
    interval_s = fields.Integer(load_default=None, allow_none=True, validate=validate.Range(min=1, max=31_536_000))
    timezone = fields.String(load_default="UTC", validate=validate.Length(max=64))
    input_value = fields.String(load_default=None, allow_none=True)
    tweaks = fields.Dict(load_default=None, allow_none=True)
    enabled = fields.Boolean(load_default=True)
    missed = fields.String(load_default="skip", validate=validate.OneOf(["skip", "run_once"]))


class ScheduleUpdateSchema(Schema):
    name = fields.String(validate=validate.Length(max=255))
    cron = fields.String(allow_none=True, validate=validate.Length(max=120))
    interval_s = fields.Integer(allow_none=True, validate=validate.Range(min=1, max=31_536_000))
    timezone = fields.String(validate=validate.Length(max=64))
    input_value = fields.String(allow_none=True)
    tweaks = fields.Dict(allow_none=True)
    enabled = fields.Boolean()
    missed = fields.String(validate=validate.OneOf(["skip", "run_once"]))


class WebhookCreateSchema(Schema):
    flow_id = fields.UUID(required=True)
    name = fields.String(load_default=None, validate=validate.Length(max=255))
    enabled = fields.Boolean(load_default=True)
    tolerance_s = fields.Integer(load_default=None, validate=validate.Range(min=1, max=86400))


class WebhookUpdateSchema(Schema):
    name = fields.String(validate=validate.Length(max=255))
    enabled = fields.Boolean()
    tolerance_s = fields.Integer(validate=validate.Range(min=1, max=86400))
