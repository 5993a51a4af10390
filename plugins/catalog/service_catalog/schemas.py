"""Request and response bodies of the catalog plugin (marshmallow; also the OpenAPI document)."""

from __future__ import annotations

from marshmallow import EXCLUDE, INCLUDE, Schema, fields


class Body(Schema):
    class Meta:
        unknown = EXCLUDE  # the reference ignores extra members on these bodies


class CatalogQuerySchema(Schema):
    include_blocked = fields.Boolean(load_default=False)


class CodeSchema(Body):
    code = fields.String(required=True)


class CustomComponentUpdateSchema(Body):
    code = fields.String(required=True)
    frontend_node = fields.Dict(load_default=None, allow_none=True)
    field = fields.String(required=True)
    field_value = fields.Raw(load_default=None, allow_none=True)
    template = fields.Dict(required=True)
    tool_mode = fields.Boolean(load_default=False)


class ErrorListSchema(Schema):
    errors = fields.List(fields.Raw())


class CodeValidationSchema(Schema):
    imports = fields.Nested(ErrorListSchema)
    function = fields.Nested(ErrorListSchema)


class FrontendNodeSchema(Schema):
    class Meta:
        unknown = INCLUDE

    template = fields.Dict(required=True)
    base_classes = fields.List(fields.String(), required=True)
    custom_fields = fields.Dict(load_default=dict, allow_none=True)
    display_name = fields.String(allow_none=True)
    description = fields.String(allow_none=True)


class PromptSchema(Body):
    name = fields.String(required=True)
    template = fields.String(required=True)
    custom_fields = fields.Dict(load_default=None, allow_none=True)
    frontend_node = fields.Nested(FrontendNodeSchema, load_default=None, allow_none=True)
    mustache = fields.Boolean(load_default=False, allow_none=True)


class PromptValidationSchema(Schema):
    input_variables = fields.List(fields.String())
    frontend_node = fields.Dict(allow_none=True)
