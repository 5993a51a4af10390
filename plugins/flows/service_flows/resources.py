"""HTTP endpoints of flows (paths and codes as the reference serves them).

* ``/api/v1/flows/...``: list, create, batch, upload, download, delete many,
  basic examples, public read, read, update, upsert, delete, note translations
* ``/api/v1/starter-projects/``: the example flows in starter-project form
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from flask import Response, g, request
from flask_smorest import Blueprint
from marshmallow import fields

from core import db, openapi
from core.auth import allowed, authenticated, current_actor
from core.errors import ApiError, ValidationFailed
from core.requests import body_limit, json_list
from service_flows import concurrency, examples, governance, listing, schemas, services, team_lists, transfer

flows_blp = Blueprint("flows", __name__, url_prefix="/api/v1/flows", description="Flows")
starter_blp = Blueprint(
    "starter_projects", __name__, url_prefix="/api/v1/starter-projects", description="Starter projects"
)

_READ = schemas.FlowReadSchema()
_HEADER = schemas.FlowHeaderSchema()


# --- helpers ------------------------------------------------------------------------------------------
def json_response(payload: Any, status: int = 200) -> Response:
    """A compact JSON response (the core gzips it when the client accepts gzip)."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(body, status=status, mimetype="application/json")


def dump_flows(flows: list[dict[str, Any]], header: bool = False) -> list[dict[str, Any]]:
    return (_HEADER if header else _READ).dump(flows, many=True)


def id_list() -> list[uuid.UUID]:
    """A top-level JSON array of flow ids (422 otherwise)."""
    return json_list(fields.UUID())


def uploaded_file() -> tuple[str, bytes]:
    upload = request.files.get("file")
    if upload is None:
        raise ValidationFailed([{"loc": ["body", "file"], "msg": "Field required", "type": "missing"}])
    return upload.filename or "", upload.read()


def _user() -> uuid.UUID:
    return current_actor().id


# --- collection ---------------------------------------------------------------------------------------
@flows_blp.route("/", methods=["GET"])
@flows_blp.arguments(schemas.FlowListQuerySchema, location="query")
@flows_blp.response(200, description="flows or flow headers; a page of them when get_all is false")
@flows_blp.doc(
    responses={
        "200": schemas.one_of_doc(
            "flows or flow headers; a page of them when get_all is false", "items", "total", "page", "size", "pages"
        )
    }
)
@authenticated("user")
def list_flows(query):
    """The caller's flows (with the example flows unless ``remove_example_flows``), or one page of a project."""
    with db.transaction() as s:
        result = listing.list_flows(s, _user(), query)
    if isinstance(result, dict):
        result["items"] = dump_flows(result["items"], query["header_flows"])
        return json_response(result)
    return json_response(dump_flows(result, query["header_flows"]))


@flows_blp.route("/", methods=["POST"])
@body_limit("flow")
@flows_blp.arguments(schemas.FlowCreateSchema)
@flows_blp.response(201, schemas.FlowReadSchema)
@authenticated("user")
def create_flow(body):
    """Create a flow; a taken name becomes ``"<name> (n)"``, a taken endpoint name ``"<endpoint>-n"``."""
    with db.transaction() as s:
        out = services.flow_out(services.create_flow(s, _user(), body))
    return out, 201, governance.mark_headers(out)


@flows_blp.route("/batch/", methods=["POST"])
@body_limit("flow")
@flows_blp.arguments(schemas.FlowBatchSchema)
@flows_blp.response(201, schemas.FlowReadSchema(many=True))
@authenticated("user")
def create_flows(body):
    """Create several flows at once (all or none)."""
    with db.transaction() as s:
        out = [services.flow_out(services.create_flow(s, _user(), flow)) for flow in body["flows"]]
    return out, 201, governance.mark_headers(out)


@flows_blp.route("/upload/", methods=["POST"])
@body_limit("upload")
@flows_blp.arguments(schemas.FlowUploadQuerySchema, location="query")
@flows_blp.response(201, schemas.FlowReadSchema(many=True))
@flows_blp.doc(requestBody=openapi.file_body("A flow JSON, a {flows: [...]} JSON, or a ZIP of flow JSON files."))
@authenticated("user")
def upload_flows(query):
    """Import a JSON (a flow, ``{"flows": [...]}``) or a ZIP of JSON flows; all or nothing.

    Flows with an id the caller owns are updated (stable ids); ``folder_id``
    must be one of the caller's projects, or one shared with them that lets them ``create`` (403 when it
    does not): there every flow is created anew, the project owner's (docs/teams-and-sso.md).
    """
    filename, raw = uploaded_file()
    flows = transfer.validate_flows(transfer.read_documents(filename, raw))
    with db.transaction() as s:
        user_id = _user()
        folder = services.own_folder(s, user_id, query["folder_id"], "create") if query["folder_id"] else None
        shared = folder is not None and folder.user_id != user_id
        imported = transfer.import_flows(s, user_id, flows, folder.id if folder else None, into_shared=shared)
        out = [services.flow_out(f) for f in imported]
    headers = governance.mark_headers(out)
    missing = transfer.missing_components(flows)
    if missing:
        # The flows are stored and editable; the header says which components this install lacks.
        headers["X-Service-Missing-Components"] = json.dumps(missing, ensure_ascii=True)
    return out, 201, headers


@flows_blp.route("/", methods=["DELETE"])
@flows_blp.response(200, schemas.FlowsDeletedSchema)
@flows_blp.doc(requestBody=openapi.ID_LIST_BODY, responses={"422": openapi.response_name(422)})
@authenticated("user")
def delete_many():
    """Delete the caller's flows among a JSON array of ids; ``deleted`` counts only those."""
    ids = id_list()
    with db.transaction() as s:
        return {"deleted": services.delete_flows(s, _user(), ids)}


@flows_blp.route("/download/", methods=["POST"])
@flows_blp.response(200, description="one flow as JSON, or a ZIP archive of several")
@flows_blp.doc(
    requestBody=openapi.ID_LIST_BODY,
    responses={
        "200": {
            "description": "one flow as JSON, or a ZIP archive of several",
            "content": {
                "application/json": {"schema": {"type": "object", "description": "the flow, secrets blanked"}},
                "application/x-zip-compressed": {"schema": {"type": "string", "format": "binary"}},
            },
        },
        "422": openapi.response_name(422),
    },
)
@authenticated("user")
def download_many():
    """Export the caller's flows among a JSON array of ids, secrets blanked; 404 when none is found."""
    ids = id_list()
    s = db.session()
    user_id = _user()
    found = []
    for flow_id in dict.fromkeys(ids):
        try:
            found.append(services.readable_flow(s, user_id, flow_id))
        except ApiError:
            continue
    if not found:
        raise ApiError(404, "No flows found")
    exported = [services.export_out(f) for f in dump_flows(found)]
    if len(exported) == 1:
        return json_response(exported[0])
    name = f"{transfer.timestamp()}_service_flows.zip"
    return Response(
        transfer.zip_flows(exported),
        mimetype="application/x-zip-compressed",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@flows_blp.route("/basic_examples/", methods=["GET"])
@flows_blp.arguments(schemas.FlowIncludeBlockedQuerySchema, location="query")
@flows_blp.response(200, schemas.FlowReadSchema(many=True))
@authenticated("optional")
def basic_examples(query):
    """The example flows (anonymous callers allowed)."""
    _check_include_blocked(query)
    found = examples.all_examples()
    return json_response(dump_flows(found if query["include_blocked"] else governance.visible_examples(found)))


def _check_include_blocked(query: dict[str, Any]) -> None:
    if query["include_blocked"] and not allowed(g.get("actor"), "admin"):
        raise ApiError(403, "Only superusers can include blocked items")


@flows_blp.route("/public_flow/<flow_id>", methods=["GET"])
@flows_blp.response(200, schemas.PublicFlowSchema)
def public_flow(flow_id):
    """A publicly granted flow (share or legacy grant), anonymously: password fields removed, owner ids withheld."""
    return listing.public_flow(db.session(), flow_id)


# --- one flow -----------------------------------------------------------------------------------------
@flows_blp.route("/<flow_id>", methods=["GET"])
@flows_blp.response(200, schemas.FlowReadSchema)
@authenticated("user")
def read_flow(flow_id):
    """One of the caller's flows, an example flow, or a flow shared with them (with their ``shared_role``:
    viewer, run-only, developer or admin, as the list says; the editor opens it read-only for the first two);
    404 for anything else."""
    user_id = _user()
    flow = services.readable_flow(db.session(), user_id, flow_id)
    role = team_lists.flow_role(user_id, flow)
    if role is not None:
        flow = {**flow, "shared_role": role}
    return flow, 200, governance.mark_headers(flow)


@flows_blp.route("/<flow_id>", methods=["PATCH"])
@body_limit("flow")
@flows_blp.arguments(schemas.FlowUpdateSchema)
@flows_blp.response(200, schemas.FlowReadSchema)
@authenticated("user")
def update_flow(body, flow_id):
    """Update members of the caller's flow (null or absent members are unchanged)."""
    expected = concurrency.parse_if_match(request.headers.get("If-Match"))
    with db.transaction() as s:
        out = services.flow_out(services.update_flow(s, _user(), flow_id, body, expected))
    return out, 200, governance.mark_headers(out)


@flows_blp.route("/<flow_id>", methods=["PUT"])
@body_limit("flow")
@flows_blp.arguments(schemas.FlowCreateSchema)
@flows_blp.response(200, schemas.FlowReadSchema)
@flows_blp.alt_response(201, schema=schemas.FlowReadSchema, description="created", success=True)
@authenticated("user")
def upsert_flow(body, flow_id):
    """Create the flow with this id (201) or update the caller's (200); another user's id is 404."""
    expected = concurrency.parse_if_match(request.headers.get("If-Match"))
    with db.transaction() as s:
        flow, created = services.upsert_flow(s, _user(), flow_id, body, expected)
        out = services.flow_out(flow)
    return out, 201 if created else 200, governance.mark_headers(out)


@flows_blp.route("/<flow_id>", methods=["DELETE"])
@flows_blp.response(200, schemas.FlowMessageSchema)
@authenticated("user")
def delete_flow(flow_id):
    """Delete one of the caller's flows."""
    with db.transaction() as s:
        services.delete_flow(s, _user(), flow_id)
    return {"message": "Flow deleted successfully"}


@flows_blp.route("/<flow_id>/note_translations", methods=["GET"])
@flows_blp.response(200, description="node id -> translated markdown")
@flows_blp.doc(
    responses={
        "200": {
            "description": "node id -> translated markdown",
            "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {"type": "object"}}}},
        }
    }
)
@authenticated("user")
def note_translations(flow_id):
    """Translations of the flow's note nodes for the caller's ``Accept-Language``."""
    flow = services.readable_flow(db.session(), _user(), flow_id)
    languages = [tag for tag, _q in request.accept_languages]
    return json_response(listing.note_translations(flow, languages))


# --- starter projects ---------------------------------------------------------------------------------
@starter_blp.route("/", methods=["GET"])
@starter_blp.arguments(schemas.FlowIncludeBlockedQuerySchema, location="query")
@starter_blp.response(200, schemas.StarterProjectSchema(many=True))
@authenticated("user")
def starter_projects(query):
    """The example flows as starter projects."""
    _check_include_blocked(query)
    keys = ("data", "is_component", "name", "name_key", "description", "endpoint_name")
    found = examples.all_examples()
    if not query["include_blocked"]:
        found = governance.visible_examples(found)
    return [{k: e[k] for k in keys} for e in found]
