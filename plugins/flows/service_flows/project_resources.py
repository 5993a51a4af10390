"""HTTP endpoints of projects (``/api/v1/projects/...``) and the legacy ``/api/v1/folders/...`` redirect."""

from __future__ import annotations

from flask import Blueprint as FlaskBlueprint
from flask import Response, redirect, request
from flask_smorest import Blueprint

from core import db, openapi
from core.auth import authenticated, current_actor
from core.requests import body_limit
from service_flows import projects, schemas, services, transfer
from service_flows.resources import uploaded_file

projects_blp = Blueprint("projects", __name__, url_prefix="/api/v1/projects", description="Projects (folders)")
legacy_folders_bp = FlaskBlueprint("legacy_folders", __name__, url_prefix="/api/v1/folders")


@projects_blp.route("/", methods=["GET"])
@projects_blp.response(200, schemas.ProjectListItemSchema(many=True))
@authenticated("user")
def list_projects():
    """The caller's projects (the default project is created on first use)."""
    actor = current_actor()
    with db.transaction() as s:
        return projects.list_projects(s, actor.id, actor.username)


@projects_blp.route("/", methods=["POST"])
@projects_blp.arguments(schemas.ProjectCreateSchema)
@projects_blp.response(201, schemas.ProjectSchema)
@authenticated("user")
def create_project(body):
    """Create a project, moving the caller's flows of ``flows_list``/``components_list`` into it."""
    with db.transaction() as s:
        return projects.project_out(projects.create_project(s, current_actor().id, body))


@projects_blp.route("/<project_id>", methods=["GET"])
@projects_blp.arguments(schemas.ProjectReadQuerySchema, location="query")
@projects_blp.response(200, description="the project with its flows, or {folder, flows: page}")
@projects_blp.doc(
    responses={
        "200": schemas.one_of_doc(
            "the project with flows (no page/size), or {folder, flows: page} (page and size)",
            "folder",
            "flows",
            array=False,
        )
    }
)
@authenticated("user")
def read_project(query, project_id):
    """A project with all its flows, or ``{folder, flows: page}`` when ``page`` and ``size`` are given."""
    s = db.session()
    user_id = current_actor().id
    folder = services.own_folder(s, user_id, project_id, "read")
    result = projects.project_flows(s, folder.user_id, folder, query)
    schema = schemas.ProjectPageSchema() if "folder" in result else schemas.ProjectWithFlowsSchema()
    return Response(_dumps(schema.dump(result)), mimetype="application/json")


def _dumps(value) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@projects_blp.route("/<project_id>", methods=["PATCH"])
@projects_blp.arguments(schemas.ProjectUpdateSchema)
@projects_blp.response(200, schemas.ProjectSchema)
@authenticated("user")
def update_project(body, project_id):
    """Rename, describe, re-parent, set ``auth_settings``, or move the caller's flows in."""
    with db.transaction() as s:
        return projects.project_out(projects.update_project(s, current_actor().id, project_id, body))


@projects_blp.route("/<project_id>", methods=["DELETE"])
@projects_blp.response(204)
@authenticated("user")
def delete_project(project_id):
    """Delete a project and its flows."""
    with db.transaction() as s:
        projects.delete_project(s, current_actor().id, project_id)
    return None


@projects_blp.route("/download/<project_id>", methods=["GET"])
@projects_blp.response(200, description="ZIP of the project's flows (secrets blanked)")
@projects_blp.doc(
    responses={
        "200": openapi.binary_response("ZIP of the project's flows (secrets blanked)", "application/x-zip-compressed")
    }
)
@authenticated("user")
def download_project(project_id):
    """A ZIP with one JSON file per flow of the project."""
    folder, data = projects.export_project(db.session(), current_actor().id, project_id)
    name = f"{transfer.timestamp()}_{transfer.safe_filename(folder.name, 'project')}_flows.zip"
    return Response(
        data, mimetype="application/x-zip-compressed", headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


#: a project upload may also be the archive itself as the body, with one of these types
RAW_ARCHIVE_TYPES = ("application/octet-stream", "application/zip", "application/x-zip-compressed")


@projects_blp.route("/upload/", methods=["POST"])
@body_limit("upload")
@projects_blp.response(201, schemas.FlowReadSchema(many=True))
@projects_blp.doc(
    requestBody={
        **openapi.file_body("A project JSON, a flows JSON or a ZIP of flow JSON files (or the ZIP as the body)."),
        "content": {
            **openapi.file_body("")["content"],
            **{t: {"schema": {"type": "string", "format": "binary"}} for t in RAW_ARCHIVE_TYPES},
        },
    },
    responses={"422": openapi.response_name(422)},
)
@authenticated("user")
def upload_project():
    """Create a new project from a project JSON, a flows JSON or a ZIP (flows get new ids); all or nothing."""
    if "file" not in request.files and request.mimetype in RAW_ARCHIVE_TYPES:
        # the published Python client (langflow-sdk) sends the ZIP as the whole body; the reference would
        # refuse it (422: no ``file`` part), so this is an addition, read under the same body limit
        filename, raw = "", request.get_data()
    else:
        filename, raw = uploaded_file()
    with db.transaction() as s:
        return [services.flow_out(f) for f in projects.import_project(s, current_actor().id, filename, raw)]


@legacy_folders_bp.route("/", defaults={"rest": ""}, methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
@legacy_folders_bp.route("/<path:rest>", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def legacy_folders(rest: str):
    """``/api/v1/folders/...`` moved to ``/api/v1/projects/...`` (307 keeps the method and body)."""
    target = f"/api/v1/projects/{rest}"
    if request.query_string:
        target += "?" + request.query_string.decode("latin-1")
    return redirect(target, code=307)
