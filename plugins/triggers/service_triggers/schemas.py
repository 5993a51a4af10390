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


# --- answers ----------------------------------------------------------------------------------------
class ExecutionSchema(Schema):
    id = fields.String()
    run_id = fields.String()
    flow_id = fields.String()
    flow_name = fields.String(allow_none=True)
    user_id = fields.String()
    trigger = fields.String(metadata={"description": "the run surface, or schedule, trigger, retry, error_flow"})
    status = fields.String()
    started_at = fields.Float()
    ended_at = fields.Float(allow_none=True)
    duration_s = fields.Float(allow_none=True)
    due_at = fields.Float(allow_none=True)
    input = fields.String(allow_none=True)
    output = fields.String(allow_none=True)
    error = fields.String(allow_none=True)
    job_id = fields.String(allow_none=True)
    session_id = fields.String(allow_none=True)
    retry_of = fields.String(allow_none=True)
    attempt = fields.Integer()
    source_id = fields.String(allow_none=True)
    retryable = fields.Boolean()
    trace_url = fields.String()


class PolicyOutSchema(Schema):
    flow_id = fields.String()
    attempts = fields.Integer()
    backoff_s = fields.Float()
    error_flow_id = fields.String(allow_none=True)


class ScheduleSchema(Schema):
    id = fields.String()
    flow_id = fields.String()
    name = fields.String()
    cron = fields.String(allow_none=True)
    interval_s = fields.Integer(allow_none=True)
    timezone = fields.String()
    input_value = fields.String(allow_none=True)
    tweaks = fields.Dict(allow_none=True)
    enabled = fields.Boolean()
    missed = fields.String()
    next_fire_at = fields.String(allow_none=True)
    last_fired_at = fields.String(allow_none=True)
    next_fire_times = fields.List(fields.String())


class TriggerSchema(Schema):
    id = fields.String()
    public_id = fields.String()
    flow_id = fields.String()
    name = fields.String()
    enabled = fields.Boolean()
    tolerance_s = fields.Integer()
    ingress_url = fields.String()
    signature_header = fields.String()
    timestamp_header = fields.String()
    signing_secret = fields.String(metadata={"description": "only when created or rotated"})


class IngressAnswerSchema(Schema):
    run_id = fields.String()
    execution_id = fields.String()
    status = fields.String()
    status_url = fields.String()
    duplicate = fields.Boolean()
