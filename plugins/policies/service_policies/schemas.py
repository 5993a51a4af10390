"""Request and response bodies of the policy endpoints (limits checked in services, 422 naming the item)."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate


class Body(Schema):
    class Meta:
        unknown = EXCLUDE


class BlockedSetSchema(Body):
    blocked = fields.List(fields.String(), required=True, metadata={"description": "complete set of blocked keys"})


class CatalogPolicySchema(Schema):
    blocked = fields.List(fields.String(), required=True)
    managed_externally = fields.Boolean(required=True)


class ProviderPolicyWriteSchema(Body):
    approved_provider_ids = fields.List(fields.String(), required=True)


class RegisteredProviderSchema(Schema):
    provider_id = fields.String(required=True)
    display_name = fields.String(required=True)
    provider = fields.String(required=True)


class ProviderPolicySchema(Schema):
    approved_provider_ids = fields.List(fields.String(), required=True)
    registered_providers = fields.List(fields.Nested(RegisteredProviderSchema), required=True)
    managed_externally = fields.Boolean(required=True)


class UsageSchema(Schema):
    components = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    flows_scanned = fields.Integer(required=True)


class UsageFlowsQuerySchema(Body):
    component = fields.String(required=True, validate=validate.Length(min=1, max=255))
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=500))


class UsageFlowSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)


class UsageFlowsSchema(Schema):
    component = fields.String(required=True)
    flows = fields.List(fields.Nested(UsageFlowSchema), required=True)
    total = fields.Integer(required=True)


class ChangesQuerySchema(Body):
    policy = fields.String(load_default=None, validate=validate.OneOf(("components", "templates", "providers")))
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class ChangeSchema(Schema):
    id = fields.String(required=True)
    policy = fields.String(required=True)
    actor_id = fields.String(allow_none=True)
    actor = fields.String(allow_none=True)
    at = fields.String(required=True)
    before = fields.List(fields.String(), required=True)
    after = fields.List(fields.String(), required=True)
    added = fields.List(fields.String(), required=True)
    removed = fields.List(fields.String(), required=True)
    revision = fields.Integer(required=True)
