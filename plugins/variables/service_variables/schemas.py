"""Request and response bodies of the variables endpoints."""

from __future__ import annotations

from typing import Any

from marshmallow import EXCLUDE, Schema, ValidationError, fields, validate, validates

TYPES = ("Credential", "Generic")


def _not_blank(what: str):
    def check(value: str | None) -> None:
        if value is None or not value.strip():
            raise ValidationError(f"Variable {what} cannot be empty")

    return check


class Body(Schema):
    class Meta:
        unknown = EXCLUDE


class VariableCreateSchema(Body):
    name = fields.String(required=True, validate=[_not_blank("name"), validate.Length(max=255)])
    value = fields.String(required=True, load_only=True, validate=_not_blank("value"))
    type = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.OneOf(TYPES),
        metadata={"description": "Credential (default; never returned) or Generic"},
    )
    default_fields = fields.List(fields.String(), required=True, allow_none=True)


class VariableUpdateSchema(Body):
    id = fields.UUID(required=True)
    name = fields.String(allow_none=True, validate=validate.Length(max=255))
    value = fields.String(allow_none=True, load_only=True)
    default_fields = fields.List(fields.String(), allow_none=True)

    @validates("name")
    def _name(self, value: str | None, **_: Any) -> None:
        if value is not None:
            _not_blank("name")(value)

    @validates("value")
    def _value(self, value: str | None, **_: Any) -> None:
        if value is not None:
            _not_blank("value")(value)


class VariableSchema(Schema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    type = fields.String(allow_none=True)
    value = fields.String(allow_none=True, metadata={"description": "null for Credential variables"})
    has_value = fields.Boolean()
    default_fields = fields.List(fields.String(), allow_none=True)
    is_owner = fields.Boolean()
    can_manage_shares = fields.Boolean()
    shared_role = fields.String(
        metadata={"description": "another user's variable shared with the caller: viewer, run-only, developer or admin"}
    )
    validation_error = fields.String(allow_none=True)
    is_valid = fields.Boolean()
    created_at = fields.DateTime(allow_none=True)
    updated_at = fields.DateTime(allow_none=True)
