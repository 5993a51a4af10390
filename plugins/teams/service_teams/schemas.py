"""Request and response bodies of the ``/api/v1/authz/*`` endpoints (the reference 1.13's shapes)."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, ValidationError, fields, validate, validates_schema

NAME = validate.Length(min=1, max=255)
SHARE_TYPES = ("flow", "project", "knowledge_base", "variable", "file", "deployment", "connection")
SCOPES = ("private", "team", "user", "public")
LEVELS = ("read", "write", "execute", "admin")
VERBS = ("read", "execute", "write", "create", "delete", "share", "*")


class Body(Schema):
    class Meta:
        unknown = EXCLUDE


def _slug(value: str) -> None:
    kind, sep, verb = value.partition(":")
    if not sep or not kind or kind == "*" or verb not in VERBS:
        raise ValidationError(f"permission {value!r} must be '<resource>:<action>'")


class AuthzTeamCreateSchema(Body):
    team_name = fields.String(required=True, validate=NAME)
    adom_name = fields.String(required=True, validate=NAME)
    description = fields.String(load_default=None, allow_none=True)
    is_active = fields.Boolean(load_default=True)


class AuthzTeamUpdateSchema(Body):
    team_name = fields.String(validate=NAME, allow_none=True)
    adom_name = fields.String(validate=NAME, allow_none=True)
    description = fields.String(allow_none=True)
    is_active = fields.Boolean(allow_none=True)


class AuthzTeamSchema(Schema):
    id = fields.UUID()
    team_name = fields.String()
    adom_name = fields.String()
    description = fields.String(allow_none=True)
    is_active = fields.Boolean()
    created_at = fields.DateTime()
    updated_at = fields.DateTime()


class AuthzMemberCreateSchema(Body):
    user_id = fields.UUID(required=True)
    source = fields.String(load_default="manual", validate=validate.OneOf(["manual"]))


class AuthzMemberSchema(Schema):
    id = fields.UUID()
    team_id = fields.UUID()
    user_id = fields.UUID()
    source = fields.String()
    created_at = fields.DateTime()


class AuthzRoleCreateSchema(Body):
    name = fields.String(required=True, validate=NAME)
    description = fields.String(load_default=None, allow_none=True)
    permissions = fields.List(fields.String(validate=_slug), load_default=list)
    parent_role_id = fields.UUID(load_default=None, allow_none=True)


class AuthzRoleUpdateSchema(Body):
    name = fields.String(validate=NAME, allow_none=True)
    description = fields.String(allow_none=True)
    permissions = fields.List(fields.String(validate=_slug), allow_none=True)
    parent_role_id = fields.UUID(allow_none=True)


class AuthzRoleSchema(Schema):
    id = fields.UUID()
    name = fields.String()
    description = fields.String(allow_none=True)
    is_system = fields.Boolean()
    permissions = fields.List(fields.String())
    parent_role_id = fields.UUID(allow_none=True)
    workspace_id = fields.UUID(allow_none=True)
    created_at = fields.DateTime()
    updated_at = fields.DateTime()
    created_by = fields.UUID(allow_none=True)


class AuthzAssignmentCreateSchema(Body):
    user_id = fields.UUID(required=True)
    role_id = fields.UUID(required=True)
    domain_type = fields.String(load_default="global", validate=validate.OneOf(["global", "project"]))
    domain_id = fields.UUID(load_default=None, allow_none=True)

    @validates_schema
    def _domain(self, data, **_):
        if data["domain_type"] == "global" and data.get("domain_id") is not None:
            raise ValidationError("domain_id must be null when domain_type='global'", "domain_id")
        if data["domain_type"] != "global" and data.get("domain_id") is None:
            raise ValidationError(f"domain_id is required when domain_type={data['domain_type']!r}", "domain_id")


class AuthzAssignmentSchema(Schema):
    id = fields.UUID()
    user_id = fields.UUID()
    role_id = fields.UUID()
    domain_type = fields.String()
    domain_id = fields.UUID(allow_none=True)
    assigned_at = fields.DateTime()
    assigned_by = fields.UUID(allow_none=True)
    grant_sources = fields.List(fields.Dict(), dump_default=list)


class AuthzAssignmentQuerySchema(Body):
    user_id = fields.UUID(load_default=None)


class AuthzShareCreateSchema(Body):
    resource_type = fields.String(required=True, validate=validate.OneOf(SHARE_TYPES))
    resource_id = fields.UUID(required=True)
    scope = fields.String(required=True, validate=validate.OneOf(SCOPES))
    target_id = fields.UUID(load_default=None, allow_none=True)
    permission_level = fields.String(load_default="read", validate=validate.OneOf(LEVELS))

    @validates_schema
    def _target(self, data, **_):
        targeted = data["scope"] in ("team", "user")
        if targeted and data.get("target_id") is None:
            raise ValidationError(f"scope {data['scope']!r} requires target_id", "target_id")
        if not targeted and data.get("target_id") is not None:
            raise ValidationError(f"scope {data['scope']!r} must not set target_id", "target_id")


class AuthzShareUpdateSchema(Body):
    permission_level = fields.String(required=True, validate=validate.OneOf(LEVELS))


class AuthzShareQuerySchema(Body):
    resource_type = fields.String(load_default=None, validate=validate.OneOf(SHARE_TYPES))
    resource_id = fields.UUID(load_default=None)


class AuthzShareSchema(Schema):
    id = fields.UUID()
    resource_type = fields.String()
    resource_id = fields.UUID()
    scope = fields.String()
    target_id = fields.UUID(allow_none=True)
    target_name = fields.String(allow_none=True, dump_default=None)
    permission_level = fields.String()
    created_by = fields.UUID(allow_none=True)
    created_at = fields.DateTime()


class AuthzPermissionsRequestSchema(Body):
    resource_type = fields.String(
        required=True,
        validate=validate.OneOf(["flow", "deployment", "project", "knowledge_base", "variable", "file", "component"]),
    )
    resource_ids = fields.List(fields.UUID(), required=True, validate=validate.Length(max=500))
    actions = fields.List(fields.String(), load_default=None, allow_none=True, validate=validate.Length(max=10))
    domain = fields.String(load_default="*")


class AuthzPermissionsSchema(Schema):
    resource_type = fields.String()
    permissions = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))
