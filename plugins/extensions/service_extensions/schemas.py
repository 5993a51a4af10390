"""Request and response shapes of the extension routes."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields


class EventsQuerySchema(Schema):
    class Meta:
        unknown = EXCLUDE  # ``keyspace`` is refused by the view with the reference's typed 422

    since = fields.Float(load_default=0.0, metadata={"description": "UTC epoch cursor: events after it"})


class EventSchema(Schema):
    type = fields.String(required=True)
    timestamp = fields.Float(required=True)
    payload = fields.Dict(required=True)


class EventsSchema(Schema):
    events = fields.List(fields.Nested(EventSchema), required=True)
    settled = fields.Boolean(required=True, metadata={"description": "no reload in flight anywhere"})
    generation = fields.Integer(metadata={"description": "the component generation: moves with every reload"})


class ReloadResultSchema(Schema):
    ok = fields.Boolean(required=True)
    bundle = fields.String(required=True)
    reload_id = fields.String(required=True)
    components_added = fields.List(fields.String(), required=True)
    components_removed = fields.List(fields.String(), required=True)
    components_changed = fields.List(fields.String(), required=True)
    errors = fields.List(fields.Dict(), required=True)
    warnings = fields.List(fields.String(), required=True)
    generation = fields.Integer()
    distribution = fields.String(allow_none=True)
    version = fields.String(allow_none=True)
    flows_affected = fields.List(fields.Dict(), metadata={"description": "flows using changed or removed components"})


class PluginSchema(Schema):
    name = fields.String(required=True)
    distribution = fields.String(allow_none=True)
    version = fields.String(allow_none=True)
    enabled = fields.Boolean(required=True)
    stored = fields.Boolean(allow_none=True, metadata={"description": "the run-time override, if any"})
    loaded = fields.Boolean(required=True, metadata={"description": "loaded in the answering process"})
    failure = fields.String(allow_none=True)


class ProcessSchema(Schema):
    pid = fields.Integer(required=True)
    plugins_generation = fields.Integer(required=True)
    components_generation = fields.Integer(required=True)


class PluginsSchema(Schema):
    generation = fields.Integer(required=True, metadata={"description": "the deployment's plugin generation"})
    process_generation = fields.Integer(required=True, metadata={"description": "the answering process's"})
    components_generation = fields.Integer(required=True, metadata={"description": "the deployment's bundle reloads"})
    process = fields.Nested(ProcessSchema, required=True, metadata={"description": "the answering process"})
    plugins = fields.List(fields.Nested(PluginSchema), required=True)


class SwitchSchema(Schema):
    name = fields.String(required=True)
    enabled = fields.Boolean(required=True)
    generation = fields.Integer(required=True)
