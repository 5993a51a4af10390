"""Request and response bodies of the run plugin (marshmallow; also the OpenAPI document)."""

from __future__ import annotations

from marshmallow import EXCLUDE, INCLUDE, Schema, fields, validate


class Body(Schema):
    class Meta:
        unknown = EXCLUDE  # the reference ignores extra members on these bodies


class SimplifiedRunSchema(Body):
    """``SimplifiedAPIRequest`` plus the optional ``context`` object."""

    input_value = fields.String(load_default=None, allow_none=True)
    input_type = fields.String(load_default="chat", allow_none=True, validate=validate.OneOf(["chat", "text", "any"]))
    output_type = fields.String(
        load_default="chat", allow_none=True, validate=validate.OneOf(["chat", "text", "any", "debug"])
    )
    output_component = fields.String(load_default="", allow_none=True)
    tweaks = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)
    session_id = fields.String(load_default=None, allow_none=True)
    user_id = fields.String(load_default=None, allow_none=True, metadata={"description": "tracing only"})
    context = fields.Dict(
        keys=fields.String(),
        load_default=None,
        allow_none=True,
        metadata={"description": "merged with the X-SERVICE-GLOBAL-VAR-* request variables"},
    )
    # the published Python client (langflow-sdk) asks for a stream in the body; the reference reads only the
    # query and answers it with plain JSON (the client then yields nothing), so either one streams here
    stream = fields.Boolean(
        load_default=False, allow_none=True, metadata={"description": "as the `stream` query parameter"}
    )


class InputValueSchema(Body):
    components = fields.List(fields.String(), load_default=list, allow_none=True)
    input_value = fields.String(load_default="", allow_none=True)
    session = fields.String(load_default=None, allow_none=True)
    type = fields.String(load_default="chat", allow_none=True, validate=validate.OneOf(["chat", "text", "any"]))


class AdvancedRunSchema(Body):
    """The spec's complete run request: every member top-level."""

    inputs = fields.List(fields.Nested(InputValueSchema), load_default=None, allow_none=True)
    outputs = fields.List(fields.String(), load_default=None, allow_none=True)
    tweaks = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)
    stream = fields.Boolean(load_default=False, allow_none=True)
    session_id = fields.String(load_default=None, allow_none=True)


class RunOutputsSchema(Schema):
    class Meta:
        unknown = INCLUDE

    inputs = fields.Dict()
    outputs = fields.List(fields.Dict())


class RunResponseSchema(Schema):
    outputs = fields.List(fields.Nested(RunOutputsSchema))
    session_id = fields.String(allow_none=True)


class WebhookStartSchema(Schema):
    message = fields.String(required=True)
    status = fields.String(required=True)
    job_id = fields.String(required=True)
    status_url = fields.String(required=True)


class WebhookJobSchema(Schema):
    job_id = fields.String(required=True)
    flow_id = fields.String(allow_none=True)
    status = fields.String(required=True, metadata={"description": "queued, running, finished, failed or cancelled"})
    created_at = fields.String(allow_none=True)
    started_at = fields.String(allow_none=True)
    ended_at = fields.String(allow_none=True)
    result = fields.Dict(allow_none=True, metadata={"description": "the run response, once finished"})
    error = fields.String(allow_none=True, metadata={"description": "why the run failed"})
