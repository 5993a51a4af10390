"""Bodies of the v2 workflows API (extra members are forbidden, as in the reference: 422 ``extra_forbidden``)."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

MODES = ("sync", "stream", "background")
#: ``service`` is the reference's own framing (its brand name, translated); ``agui`` is AG-UI
PROTOCOLS = ("service", "agui")


class WorkflowRunSchema(Schema):
    """The 1.11+ request (``POST /api/v2/workflows``)."""

    class Meta:
        unknown = RAISE

    flow_id = fields.UUID(required=True)
    input_value = fields.String(load_default="", allow_none=True)
    session_id = fields.String(load_default=None, allow_none=True)
    mode = fields.String(load_default="sync", validate=validate.OneOf(MODES))
    stream_protocol = fields.String(load_default="service")  # checked by the view: 422 UNKNOWN_STREAM_PROTOCOL
    tweaks = fields.Dict(keys=fields.String(), values=fields.Dict(), load_default=None, allow_none=True)
    output_ids = fields.List(fields.String(), load_default=None, allow_none=True)
    globals = fields.Dict(keys=fields.String(), values=fields.String(), load_default=None, allow_none=True)
    start_component_id = fields.String(load_default=None, allow_none=True)
    stop_component_id = fields.String(load_default=None, allow_none=True)
    idempotency_key = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=200))
    data = fields.Dict(load_default=None, allow_none=True)
    files = fields.List(fields.String(), load_default=None, allow_none=True)


class LegacyWorkflowRunSchema(Schema):
    """The 1.10 request: ``background`` and ``inputs`` keyed ``<component id>.<parameter>``."""

    class Meta:
        unknown = RAISE

    flow_id = fields.UUID(required=True)
    background = fields.Boolean(load_default=False)
    inputs = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)
    session_id = fields.String(load_default=None, allow_none=True)
    stream = fields.Boolean(load_default=False)


class StopSchema(Schema):
    class Meta:
        unknown = RAISE

    job_id = fields.String(required=True, validate=validate.Length(min=1, max=64))


class ResumeSchema(Schema):
    class Meta:
        unknown = RAISE

    request_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    decision = fields.Raw(required=True, allow_none=True)


# --- response shapes (documentation: the views answer plain dicts in exactly these shapes) -------------------
class WorkflowErrorSchema(Schema):
    message = fields.String(required=True)
    type = fields.String(required=True)
    component_id = fields.String()


class HumanRequestSchema(Schema):
    request_id = fields.String(required=True)
    vertex_id = fields.String(required=True)
    request = fields.Raw(allow_none=True)


class WorkflowResponseSchema(Schema):
    """The v2 response object (a sync run, and a background job's result)."""

    flow_id = fields.String(required=True)
    session_id = fields.String(allow_none=True)
    job_id = fields.String(allow_none=True)
    object = fields.String(required=True, validate=validate.OneOf(["response"]))
    created_timestamp = fields.String()
    status = fields.String()
    output = fields.Dict(allow_none=True, metadata={"description": "the main output, or {reason, text, source}"})
    errors = fields.List(fields.Nested(WorkflowErrorSchema))
    warnings = fields.List(fields.Raw())
    inputs = fields.Dict()
    globals = fields.Dict()
    outputs = fields.Dict(metadata={"description": "output component id -> its output"})
    human_request = fields.Nested(HumanRequestSchema, allow_none=True)
    has_errors = fields.Boolean()


class WorkflowJobSchema(Schema):
    """A background run (as started, and its status while it goes)."""

    job_id = fields.String(required=True)
    flow_id = fields.String(required=True)
    object = fields.String(required=True, validate=validate.OneOf(["job"]))
    created_timestamp = fields.String()
    status = fields.String()
    links = fields.Dict(keys=fields.String(), values=fields.String())
    errors = fields.List(fields.Raw())
    globals = fields.Dict()


class StopResultSchema(Schema):
    job_id = fields.String(required=True)
    status = fields.String(required=True)
    message = fields.String(required=True)


class PendingItemSchema(Schema):
    request_id = fields.String(required=True)
    job_id = fields.String(allow_none=True)
    flow_id = fields.String(allow_none=True)
    vertex_id = fields.String(allow_none=True)
    request = fields.Raw(allow_none=True)
    created_at = fields.String(allow_none=True)
    expires_at = fields.String(allow_none=True)


class PendingListSchema(Schema):
    pending = fields.List(fields.Nested(PendingItemSchema))
