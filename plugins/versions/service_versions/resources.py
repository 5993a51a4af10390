"""Flow versions and publishing (the reference 1.13's ``/api/v1/flows/{id}/versions`` paths and shapes).

* ``GET  .../versions/``: ``{entries: [version], max_entries}``, newest first (``limit``, ``offset``)
* ``POST .../versions/``: an explicit version (``{description, data?}``), 201
* ``GET  .../versions/{vid}``: one version with its ``data`` (secret values blanked)
* ``GET  .../versions/{vid}/diff?against=previous|draft|<vid>``: the node-level diff (:mod:`service_versions.diff`)
* ``POST .../versions/{vid}/activate?save_draft=true``: restore (``If-Match`` honoured): the flow JSON
* ``DELETE .../versions/{vid}``: 204 (409 for the published version)
* ``GET|POST|DELETE .../publish``: the published version; publish (``{version_id?}``: the draft when
  absent; an older id rolls back) and unpublish, each in one call

Every path first looks the flow up for the caller (``find_flow``, owner-scoped): another user's flow
is 404.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from flask import g, request
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from core import appstate, audit, db
from core.auth import authenticated, current_actor, flow_access
from core.contracts import FlowRecord
from core.errors import ApiError
from core.openapi import no_body
from service_versions import diff, hookspecs, store
from service_versions.config import settings
from service_versions.models import FlowVersion

versions_blp = Blueprint("flow_versions", __name__, url_prefix="/api/v1/flows", description="Flow Versions")


class VersionListQuery(Schema):
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=100))
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0))


class VersionCreate(Schema):
    description = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=500))
    data = fields.Dict(load_default=None, allow_none=True)


class DiffQuery(Schema):
    against = fields.String(load_default="previous")


class ActivateQuery(Schema):
    save_draft = fields.Boolean(load_default=True)


class PublishBody(Schema):
    version_id = fields.UUID(load_default=None, allow_none=True)
    description = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=500))


VERSION_MEMBERS = ("id", "flow_id", "user_id", "version_number", "description", "retained", "retained_reason",
                   "created_at", "username", "version_tag", "auto", "size")  # fmt: skip
FLOW_MEMBERS = ("id", "name", "data", "updated_at", "version_token", "user_id", "folder_id")
PUBLICATION_MEMBERS = ("flow_id", "published", "version", "published_at", "published_by", "published_by_username")
DIFF_MEMBERS = ("from", "to", "added", "removed", "moved", "changed", "edges", "unchanged")


def response_doc(description: str, *members: str, mimetype: str = "application/json") -> dict[str, Any]:
    """An OpenAPI response of a JSON object with these members (the body is built by hand)."""
    schema = {"type": "object", "properties": {m: {} for m in members}}
    return {"description": description, "content": {mimetype: {"schema": schema}}}


def _flow(flow_id: str, verb: str = "read") -> FlowRecord:
    """The flow (its draft) when the caller may ``verb`` it (its owner, or shared: ``core.auth``): 404/403."""
    flow = flow_access(current_actor(), flow_id, verb)
    g._versions_owner = uuid.UUID(str(flow.user_id))
    return flow


def _owner() -> uuid.UUID:
    """The owner of the flow :func:`_flow` found (versions are stored under the flow's owner)."""
    return g.get("_versions_owner") or current_actor().id


def author_names(entries: list[FlowVersion]) -> dict[str, str]:
    """The authors' usernames, one ``user_names`` call for a page of versions.

    Each author saved this flow (its owner, or a member it is shared with), so its owner may see who.
    """
    ids = {str(e.author_id or e.user_id) for e in entries if (e.author_id or e.user_id)}
    actor = current_actor()
    known = {str(actor.id): actor.username} if actor.username else {}
    missing = [i for i in ids if i not in known]
    return {**known, **appstate.hooks().user_names(user_ids=missing)}


def version_out(entry: FlowVersion, *, with_data: bool = False, names: dict[str, str] | None = None) -> dict[str, Any]:
    """The reference's FlowVersionRead (``version_tag``, ``created_at`` to the second), plus our members."""
    created = store._aware(entry.created_at).replace(microsecond=0)
    author = str(entry.author_id or entry.user_id) if (entry.author_id or entry.user_id) else None
    if names is None:
        names = author_names([entry])
    out: dict[str, Any] = {
        "id": str(entry.id),
        "flow_id": str(entry.flow_id),
        "user_id": author,
        "version_number": entry.version_number,
        "description": entry.description,
        "retained": False,
        "retained_reason": None,
        "created_at": created.isoformat(),
        "username": names.get(author) if author else None,
        "version_tag": f"v{entry.version_number}",
        "auto": entry.auto,
        "size": entry.size,
    }
    if with_data:
        out["data"] = blank_secrets(store.unpack(entry.data_z))
    return out


def blank_secrets(data: Any) -> Any:
    """A graph with the values of password fields blanked (a version read never shows a secret)."""
    if not isinstance(data, Mapping):
        return data
    nodes = []
    for node in data.get("nodes") or []:
        inner = (node.get("data") or {}).get("node") if isinstance(node, Mapping) else None
        template = inner.get("template") if isinstance(inner, Mapping) else None
        if isinstance(inner, Mapping) and isinstance(template, Mapping):
            template = {
                k: ({**f, "value": ""} if isinstance(f, Mapping) and f.get("password") else f)
                for k, f in template.items()
            }
            node = {**node, "data": {**node["data"], "node": {**inner, "template": template}}}
        nodes.append(node)
    return {**data, "nodes": nodes}


@versions_blp.route("/<flow_id>/versions/", methods=["GET"])
@versions_blp.arguments(VersionListQuery, location="query")
@versions_blp.response(200, description="{entries, max_entries}")
@versions_blp.doc(responses={"200": response_doc("{entries, max_entries}", "entries", "max_entries")})
@authenticated("user")
def list_versions(query: dict[str, Any], flow_id: str):
    """The flow's versions, newest first (without their graphs)."""
    flow = _flow(flow_id)
    entries = store.list_versions(db.session(), _owner(), uuid.UUID(flow.id), query["limit"], query["offset"])
    names = author_names(entries)
    return {
        "entries": [version_out(e, names=names) for e in entries],
        "max_entries": settings().max_flow_version_entries_per_flow,
    }


@versions_blp.route("/<flow_id>/versions/", methods=["POST"])
@versions_blp.arguments(VersionCreate)
@versions_blp.response(201, description="the new version")
@versions_blp.doc(responses={"201": response_doc("the new version", *VERSION_MEMBERS)})
@authenticated("user")
def create_version(body: dict[str, Any], flow_id: str):
    """An explicit, named version of the stored graph (or of the given ``data``)."""
    flow = _flow(flow_id, "write")
    with db.transaction() as s:
        entry = store.snapshot(s, flow, current_actor().owner_id, body["description"], body["data"])
        out = version_out(entry)
    audit.record("flow:version_create", "flow", flow.id, name=flow.name, user_id=flow.user_id,
                 operation="create", details={"version_number": entry.version_number})  # fmt: skip
    return out, 201


@versions_blp.route("/<flow_id>/versions/<version_id>", methods=["GET"])
@versions_blp.response(200, description="the version with its data")
@versions_blp.doc(responses={"200": response_doc("the version with its data", *VERSION_MEMBERS, "data")})
@authenticated("user")
def read_version(flow_id: str, version_id: str):
    flow = _flow(flow_id)
    return version_out(store.get_version(db.session(), _owner(), uuid.UUID(flow.id), version_id), with_data=True)


@versions_blp.route("/<flow_id>/versions/<version_id>/diff", methods=["GET"])
@versions_blp.arguments(DiffQuery, location="query")
@versions_blp.response(200, description="node-level diff: added, removed, moved, changed, edges")
@versions_blp.doc(responses={"200": response_doc("node-level diff", *DIFF_MEMBERS)})
@authenticated("user")
def diff_version(query: dict[str, Any], flow_id: str, version_id: str):
    """What changed from ``against`` (the previous version, ``draft`` or a version id) to this version."""
    flow = _flow(flow_id)
    s = db.session()
    entry = store.get_version(s, _owner(), uuid.UUID(flow.id), version_id)
    against = query["against"]
    base_label: str
    if against == "previous":
        prev = store.previous_version(s, entry)
        before = store.unpack(prev.data_z) if prev is not None else None
        base_label = f"v{prev.version_number}" if prev is not None else "empty"
    elif against == "draft":
        before, base_label = flow.data, "draft"
    else:
        other = store.get_version(s, _owner(), uuid.UUID(flow.id), against)
        before, base_label = store.unpack(other.data_z), f"v{other.version_number}"
    return {
        "from": base_label,
        "to": f"v{entry.version_number}",
        **diff.diff(blank_secrets(before), blank_secrets(store.unpack(entry.data_z))),
    }


@versions_blp.route("/<flow_id>/versions/<version_id>/activate", methods=["POST"])
@versions_blp.arguments(ActivateQuery, location="query")
@versions_blp.response(200, description="the flow, its graph restored")
@versions_blp.doc(responses={"200": response_doc("the flow, its graph restored", *FLOW_MEMBERS)})
@versions_blp.doc(requestBody=no_body("the version is named by the path"))
@authenticated("user")
def activate_version(query: dict[str, Any], flow_id: str, version_id: str):
    """Restore a version as the flow's graph (the replaced graph stays a version: every save is one)."""
    flow = _flow(flow_id, "write")
    with db.transaction() as s:
        entry = store.get_version(s, _owner(), uuid.UUID(flow.id), version_id)
        if query["save_draft"]:
            store.snapshot(
                s, flow, current_actor().owner_id, f"Auto-saved before activating v{entry.version_number}", None
            )
        written = appstate.hooks().first(
            hookspecs.restore_flow,
            user_id=str(flow.user_id),  # the owner's flow: the caller's right to write it was checked
            flow_id=flow.id,
            data=store.unpack(entry.data_z),
            expected_token=request.headers.get("If-Match"),
        )
        if written is None:
            raise ApiError(404, "Flow not found")
    audit.record("flow:restore", "flow", flow.id, name=flow.name, user_id=flow.user_id,
                 details={"version_number": entry.version_number})  # fmt: skip
    return written.as_dict()


@versions_blp.route("/<flow_id>/versions/<version_id>", methods=["DELETE"])
@versions_blp.response(204)
@authenticated("user")
def delete_version(flow_id: str, version_id: str):
    flow = _flow(flow_id, "write")
    with db.transaction() as s:
        entry = store.get_version(s, _owner(), uuid.UUID(flow.id), version_id)
        number = entry.version_number
        store.delete_version(s, entry)
    audit.record("flow:version_delete", "flow", flow.id, name=flow.name, user_id=flow.user_id,
                 operation="delete", details={"version_number": number})  # fmt: skip
    return "", 204


def _publication_out(flow: FlowRecord) -> dict[str, Any]:
    found = store.publication(db.session(), uuid.UUID(flow.id))
    if found is None:
        return {"flow_id": flow.id, "published": False, "version": None, "published_at": None, "published_by": None,
                "published_by_username": None}  # fmt: skip
    pub, entry = found
    # who published it could write this flow, as each version's author: whoever may read it may see who
    publisher = str(pub.published_by) if pub.published_by else None
    names = author_names([entry])
    if publisher and publisher not in names:
        names = {**names, **appstate.hooks().user_names(user_ids=[publisher])}
    return {
        "flow_id": flow.id,
        "published": True,
        "version": version_out(entry, names=names),
        "published_at": store._aware(pub.published_at).isoformat(),
        "published_by": publisher,
        "published_by_username": names.get(publisher) if publisher else None,
    }


@versions_blp.route("/<flow_id>/publish", methods=["GET"])
@versions_blp.response(200, description="the published version, or published false")
@versions_blp.doc(responses={"200": response_doc("the publication", *PUBLICATION_MEMBERS)})
@authenticated("user")
def read_publication(flow_id: str):
    return _publication_out(_flow(flow_id))


@versions_blp.route("/<flow_id>/publish", methods=["POST"])
@versions_blp.arguments(PublishBody)
@versions_blp.response(200, description="the published version")
@versions_blp.doc(responses={"200": response_doc("the publication", *PUBLICATION_MEMBERS)})
@authenticated("user")
def publish(body: dict[str, Any], flow_id: str):
    """Publish a version (rolling back when it is older than the published one), or the draft when none is named."""
    flow = _flow(flow_id, "write")
    actor = current_actor()
    with db.transaction() as s:
        if body["version_id"] is not None:
            entry = store.get_version(s, _owner(), uuid.UUID(flow.id), body["version_id"])
        else:
            entry = store.snapshot(s, flow, actor.owner_id, body["description"], None)
        previous = store.publication(s, uuid.UUID(flow.id))
        store.publish(s, entry, actor.id)
    action = "flow:rollback" if previous and previous[1].version_number > entry.version_number else "flow:publish"
    audit.record(action, "flow", flow.id, name=flow.name, user_id=flow.user_id,
                 details={"version_number": entry.version_number})  # fmt: skip
    return _publication_out(flow)


@versions_blp.route("/<flow_id>/publish", methods=["DELETE"])
@versions_blp.response(200, description="published false")
@versions_blp.doc(responses={"200": response_doc("the publication", *PUBLICATION_MEMBERS)})
@authenticated("user")
def unpublish(flow_id: str):
    """API callers run the draft again."""
    flow = _flow(flow_id, "write")
    with db.transaction() as s:
        done = store.unpublish(s, uuid.UUID(flow.id))
    if done:
        audit.record("flow:unpublish", "flow", flow.id, name=flow.name, user_id=flow.user_id)
    return _publication_out(flow)
