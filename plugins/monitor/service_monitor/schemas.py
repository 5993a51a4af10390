"""Bodies and queries of the monitor endpoints."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

from core.requests import MAX_OFFSET, MAX_PAGE


class MessageQuerySchema(Schema):
    flow_id = fields.String(load_default=None)
    session_id = fields.String(load_default=None)
    end_user_id = fields.String(load_default=None, metadata={"description": "accepted for compatibility; unused"})
    sender = fields.String(load_default=None)
    sender_name = fields.String(load_default=None)
    order_by = fields.String(load_default="timestamp")
    order = fields.String(load_default="ASC", validate=validate.OneOf(["ASC", "DESC", "asc", "desc"]))
    limit = fields.Integer(load_default=None, validate=validate.Range(min=0, max=10_000))
    offset = fields.Integer(load_default=None, validate=validate.Range(min=0, max=MAX_OFFSET))
    cursor = fields.String(
        load_default=None,
        validate=validate.Length(max=2048),
        metadata={
            "description": "opaque: the X-Next-Cursor header of the previous page (same filter, order_by and "
            "order); the page after it, at the same cost wherever it is (instead of offset)"
        },
    )


class SharedMessageQuerySchema(MessageQuerySchema):
    source_flow_id = fields.UUID(required=True)


class SourceFlowSchema(Schema):
    source_flow_id = fields.UUID(required=True)


class FlowIdSchema(Schema):
    flow_id = fields.UUID(required=True)


class OptionalFlowIdSchema(Schema):
    flow_id = fields.UUID(load_default=None)


class RenameSessionSchema(Schema):
    new_session_id = fields.String(required=True, validate=validate.Length(min=1, max=255))


class SharedRenameSessionSchema(RenameSessionSchema):
    source_flow_id = fields.UUID(required=True)


#: an addition to the reference's routes: ``flow_id`` scopes the session to one flow, every user's messages of
#: it when the caller may change the flow (its owner, a team member with ``write``/``delete``)
SESSION_FLOW_ID = "the session of this flow only: every user's messages of it (the flow's owner, or a team member "
SESSION_FLOW_ID += "who may change it: 403 for one who may only read or run it, 404 for one who may not see it)"


class FlowSessionRenameSchema(RenameSessionSchema):
    flow_id = fields.UUID(load_default=None, metadata={"description": SESSION_FLOW_ID})


class FlowSessionSchema(Schema):
    class Meta:
        unknown = EXCLUDE  # the reference's route takes no query: other parameters stay ignored

    flow_id = fields.UUID(load_default=None, metadata={"description": SESSION_FLOW_ID})


class ChatMessageSchema(Schema):
    id = fields.UUID(required=True)
    flow_id = fields.UUID(allow_none=True)
    run_id = fields.UUID(allow_none=True)
    timestamp = fields.DateTime(required=True)
    sender = fields.String()
    sender_name = fields.String()
    session_id = fields.String()
    context_id = fields.String()
    text = fields.String()
    files = fields.List(fields.String())
    edit = fields.Boolean()
    error = fields.Boolean()
    duration = fields.Float(allow_none=True)
    properties = fields.Dict()
    category = fields.String()
    content_blocks = fields.List(fields.Dict())
    session_metadata = fields.Dict()


class ChatMessageUpdateSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    category = fields.String(allow_none=True)
    content_blocks = fields.List(fields.Dict(), allow_none=True)
    context_id = fields.String(allow_none=True)
    edit = fields.Boolean(allow_none=True)
    error = fields.Boolean(allow_none=True)
    files = fields.List(fields.String(), allow_none=True)
    properties = fields.Dict(allow_none=True)
    sender = fields.String(allow_none=True)
    sender_name = fields.String(allow_none=True)
    session_id = fields.String(allow_none=True)
    session_metadata = fields.Dict(allow_none=True)
    text = fields.String(allow_none=True)


class DeleteSessionsSchema(Schema):
    message = fields.String(required=True)
    deleted_count = fields.Integer(required=True)


class VertexBuildSchema(Schema):
    id = fields.String(required=True)
    build_id = fields.UUID(required=True)
    flow_id = fields.UUID(required=True)
    job_id = fields.String(allow_none=True)
    timestamp = fields.DateTime(required=True)
    valid = fields.Boolean(required=True)
    data = fields.Dict()
    artifacts = fields.Dict()
    params = fields.Raw(allow_none=True)


class VertexBuildsSchema(Schema):
    vertex_builds = fields.Dict(keys=fields.String(), values=fields.List(fields.Nested(VertexBuildSchema)))


class TransactionQuerySchema(Schema):
    flow_id = fields.UUID(required=True)
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=MAX_PAGE))
    size = fields.Integer(load_default=50, validate=validate.Range(min=1, max=100))


class TransactionSchema(Schema):
    id = fields.UUID(required=True)
    timestamp = fields.DateTime(required=True)
    vertex_id = fields.String(required=True)
    target_id = fields.String(allow_none=True)
    inputs = fields.Dict()
    outputs = fields.Dict()
    status = fields.String()
    error = fields.String(allow_none=True)
    flow_id = fields.UUID()


class TransactionPageSchema(Schema):
    items = fields.List(fields.Nested(TransactionSchema), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    size = fields.Integer(required=True)
    pages = fields.Integer(required=True)


class LogQuerySchema(Schema):
    lines_before = fields.Integer(load_default=0, validate=validate.Range(min=0))
    lines_after = fields.Integer(load_default=0, validate=validate.Range(min=0))
    timestamp = fields.Integer(load_default=0, validate=validate.Range(min=0))
