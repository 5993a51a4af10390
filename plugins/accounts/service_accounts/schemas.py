"""Request and response bodies of the accounts endpoints."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, ValidationError, fields, validate

NON_EMPTY = validate.Length(min=1, max=255)


def _not_blank(value: str) -> None:
    if not value.strip():
        raise ValidationError("Username must not be blank.")


USERNAME = validate.And(NON_EMPTY, _not_blank)
PASSWORD = validate.Length(min=1, max=1024)


class Body(Schema):
    class Meta:
        unknown = EXCLUDE  # the reference ignores extra members on these bodies


class UserCreateSchema(Body):
    username = fields.String(required=True, validate=USERNAME)
    password = fields.String(required=True, load_only=True, validate=PASSWORD)
    optins = fields.Dict(load_default=None, allow_none=True)


class UserUpdateSchema(Body):
    username = fields.String(allow_none=True, validate=USERNAME)
    profile_image = fields.String(allow_none=True, validate=validate.Length(max=512))  # the column's size
    password = fields.String(allow_none=True, load_only=True, validate=PASSWORD)
    is_active = fields.Boolean(allow_none=True)
    is_superuser = fields.Boolean(allow_none=True)
    last_login_at = fields.AwareDateTime(allow_none=True, default_timezone=None)
    optins = fields.Dict(allow_none=True)


class PasswordResetSchema(UserUpdateSchema):
    current_password = fields.String(allow_none=True, load_only=True)
    password = fields.String(required=True, load_only=True, validate=PASSWORD)


class UserSchema(Schema):
    id = fields.UUID(required=True)
    username = fields.String(required=True)
    profile_image = fields.String(allow_none=True)
    store_api_key = fields.String(allow_none=True)
    is_active = fields.Boolean(required=True)
    is_superuser = fields.Boolean(required=True)
    create_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    last_login_at = fields.DateTime(allow_none=True)
    optins = fields.Dict(allow_none=True)


class UserListQuerySchema(Schema):
    skip = fields.Integer(load_default=0, validate=validate.Range(min=0, max=2**31 - 1))  # larger: a DB error
    limit = fields.Integer(load_default=10, validate=validate.Range(min=1, max=1000))
    search = fields.String(load_default=None, allow_none=True)


class UserListSchema(Schema):
    total_count = fields.Integer(required=True)
    users = fields.List(fields.Nested(UserSchema), required=True)


class DetailSchema(Schema):
    detail = fields.String(required=True)


class MessageSchema(Schema):
    message = fields.String(required=True)


class ApiKeyCreateSchema(Body):
    name = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=255))


class ApiKeySchema(Schema):
    id = fields.UUID(required=True)
    name = fields.String(allow_none=True)
    api_key = fields.String(allow_none=True)
    user_id = fields.UUID(allow_none=True)
    total_uses = fields.Integer(required=True)
    last_used_at = fields.DateTime(allow_none=True)
    is_active = fields.Boolean(required=True)
    created_at = fields.DateTime(allow_none=True)
    expires_at = fields.DateTime(allow_none=True)


class ApiKeyListSchema(Schema):
    total_count = fields.Integer(required=True)
    user_id = fields.UUID(required=True)
    api_keys = fields.List(fields.Nested(ApiKeySchema), required=True)


class LoginFormSchema(Body):
    username = fields.String(required=True, validate=validate.Length(min=1))
    password = fields.String(required=True, load_only=True)
    grant_type = fields.String(load_default=None, allow_none=True)
    scope = fields.String(load_default="")
    client_id = fields.String(load_default=None, allow_none=True)
    client_secret = fields.String(load_default=None, allow_none=True, load_only=True)


class TokenSchema(Schema):
    access_token = fields.String(required=True)
    refresh_token = fields.String(required=True)
    token_type = fields.String(required=True)


class SessionSchema(Schema):
    authenticated = fields.Boolean(required=True)
    user = fields.Nested(UserSchema, allow_none=True)
    store_api_key = fields.String(allow_none=True)
