"""HTTP endpoints: per-user files (``/api/v2/files``), per-flow files (``/api/v1/files``, deprecated),
the deprecated ``/api/v1/upload/{flow_id}`` and the public profile pictures."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from flask import Response, current_app, request, send_file
from flask_smorest import Blueprint
from marshmallow import fields
from zipstream import ZipStream

from core import appstate, db, openapi
from core.auth import authenticated, current_actor, flow_access
from core.errors import ApiError
from core.requests import body_limit, json_list
from service_files import schemas, services
from service_files.config import runtime
from service_files.storage import CHUNK
from service_files.uploads import receive, too_large

files_blp = Blueprint("files_v2", __name__, url_prefix="/api/v2/files", description="Files (per user)")
flow_files_blp = Blueprint("files_v1", __name__, url_prefix="/api/v1", description="Files (per flow)")


@files_blp.before_request
def _schedule_cleanup() -> None:
    # the ephemeral-file cleanup thread of this process (started once per process; cheap afterwards)
    from service_files.cleanup import SCHEDULER

    SCHEDULER.ensure(current_app._get_current_object())  # type: ignore[attr-defined]


DEPRECATION = {"Deprecation": "true"}
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml", "image/bmp")
#: a response that renders in a browser must not run scripts an upload carries (SVG)
SAFE_IMAGE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox"}


def _upload(**kwargs: Any) -> Any:
    settings = appstate.settings()
    limit_mb = settings.max_file_size_upload
    declared = request.content_length
    if declared is not None and declared > limit_mb * 1024 * 1024 + 64 * 1024:
        raise too_large(limit_mb)  # refuse before reading a byte of an announced oversize body
    rt = runtime()
    received = receive(request.environ, rt.storage, limit_mb)
    try:
        with db.transaction() as s:
            return services.file_out(services.store_upload(s, rt.storage, current_actor().id, received, **kwargs))
    except BaseException:
        rt.storage.discard(received.token)
        raise


# --- /api/v2/files ---------------------------------------------------------------------
@files_blp.route("/", methods=["POST"])
@body_limit("upload")
@files_blp.arguments(schemas.UploadQuerySchema, location="query", as_kwargs=True)
@files_blp.response(201, schemas.UserFileSchema)
@files_blp.doc(**schemas.UPLOAD_BODY)
@authenticated("user")
def upload_user_file(append: bool, ephemeral: bool):
    """Upload a file (multipart ``file``); ``append`` adds to the file of the same name."""
    return _upload(append=append, ephemeral=ephemeral)


@files_blp.route("/", methods=["GET"])
@files_blp.response(200, schemas.UserFileListItemSchema(many=True))
@authenticated("user")
def list_files():
    """The caller's files."""
    return [services.file_out(r, listing=True) for r in services.list_files(db.session(), current_actor().id)]


@files_blp.route("/", methods=["DELETE"])
@files_blp.response(200, schemas.FilesMessageSchema)
@authenticated("user")
def delete_all_files():
    """Delete every file of the caller."""
    rt = runtime()
    with db.transaction() as s:
        keys = services.delete_all(s, rt.storage, current_actor().id)
    services.remove_bytes(rt.storage, keys)
    return {"message": "All files deleted successfully"}


@files_blp.route("/batch", methods=["POST"])
@body_limit("upload")
@files_blp.response(200, description="A zip of the files")
@files_blp.doc(
    requestBody=openapi.ID_LIST_BODY,
    responses={"200": openapi.binary_response("A zip of the files", "application/zip")},
)
@authenticated("user")
def download_files_batch():
    """A zip of the caller's files among the given ids (streamed; 404 when none is found)."""
    ids = json_list(fields.UUID(), max_items=1000)
    rt = runtime()
    rows = services.by_ids(db.session(), current_actor().id, ids)
    archive = ZipStream(sized=False)
    for row, arcname in services.zip_names(rows):
        archive.add(_chunks(rt.storage, row.storage_key), arcname)
    return Response(
        archive,
        mimetype="application/zip",
        headers={"Content-Disposition": 'attachment; filename="files.zip"'},
        direct_passthrough=True,
    )


def _chunks(storage: Any, key: str) -> Iterator[bytes]:
    """Opened only when the zip writer reaches this member, so one file is open at a time."""
    with storage.open(key) as handle:
        while chunk := handle.read(CHUNK):
            yield chunk


@files_blp.route("/batch", methods=["DELETE"])
@files_blp.response(200, schemas.FilesMessageSchema)
@files_blp.doc(requestBody=openapi.ID_LIST_BODY)
@authenticated("user")
def delete_files_batch():
    """Delete the caller's files among the given ids (404 when none is found)."""
    ids = json_list(fields.UUID(), max_items=1000)
    rt = runtime()
    with db.transaction() as s:
        rows = services.by_ids(s, current_actor().id, ids)
        keys = services.delete_rows(s, rt.storage, rows)
    services.remove_bytes(rt.storage, keys)
    return {"message": f"{len(keys)} files deleted successfully"}


@files_blp.route("/<file_id>", methods=["GET"])
@files_blp.arguments(schemas.DownloadQuerySchema, location="query", as_kwargs=True)
@files_blp.response(200, description="The file, or its text")
@files_blp.doc(
    responses={
        "200": {
            "description": "The file as an attachment, or its text as a JSON string with return_content=true",
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                "application/json": {"schema": {"type": "string"}},
            },
        }
    }
)
@authenticated("user")
def download_file(file_id: str, return_content: bool):
    """The file as an attachment stream, or its text as a JSON string with ``return_content=true``."""
    rt = runtime()
    row = services.accessible(db.session(), current_actor(), file_id, "read")
    if return_content:
        return services.read_content(rt.storage, row)
    return _send(rt, row, attachment=True)


def _send(rt: Any, row: Any, *, attachment: bool, content_type: str = "application/octet-stream") -> Response:
    try:
        handle = rt.storage.open(row.storage_key)
    except FileNotFoundError:
        raise ApiError(404, services.NOT_FOUND) from None
    response = send_file(
        handle,
        mimetype=content_type,
        as_attachment=attachment,
        download_name=row.path.rsplit("/", 1)[-1],
        conditional=False,
        max_age=0,
    )
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.content_length = row.size
    return response


@files_blp.route("/<file_id>", methods=["PUT"])
@files_blp.arguments(schemas.RenameQuerySchema, location="query", as_kwargs=True)
@files_blp.response(200, schemas.UserFileSchema)
@files_blp.doc(requestBody=openapi.no_body("the new name is the query parameter name"))
@authenticated("user")
def edit_file_name(file_id: str, name: str):
    """Rename one of the caller's files."""
    with db.transaction() as s:
        owner = services.accessible(s, current_actor(), file_id, "write").user_id
        return services.file_out(services.rename(s, owner, file_id, name))


@files_blp.route("/<file_id>", methods=["DELETE"])
@files_blp.response(200, schemas.FilesDetailSchema)
@authenticated("user")
def delete_file(file_id: str):
    """Delete one of the caller's files."""
    rt = runtime()
    with db.transaction() as s:
        row = services.accessible(s, current_actor(), file_id, "delete")
        name = row.name
        keys = services.delete_rows(s, rt.storage, [row])
    services.remove_bytes(rt.storage, keys)
    return {"detail": f"File {name} deleted successfully"}


# --- /api/v1/files (per flow, deprecated) ----------------------------------------------
def _flow(flow_id: str, verb: str = "read") -> tuple[uuid.UUID, uuid.UUID]:
    """The flow's id and owner when the caller may ``verb`` it: their own, or shared with them
    (``core.auth.flow_access``: 404 when they may not see it, 403 when they may not ``verb`` it).
    A flow's files are its owner's, whoever of its team uploads them."""
    found = flow_access(current_actor(), flow_id, verb)
    return uuid.UUID(found.id), uuid.UUID(str(found.user_id))


def _flow_upload(flow_id: str) -> Response:
    key, owner = _flow(flow_id, "write")
    settings = appstate.settings()
    limit_mb = settings.max_file_size_upload
    if request.content_length is not None and request.content_length > limit_mb * 1024 * 1024 + 64 * 1024:
        raise too_large(limit_mb)
    rt = runtime()
    received = receive(request.environ, rt.storage, limit_mb)
    try:
        with db.transaction() as s:
            path = services.flow_upload_path(key, received.filename)
            row = services.store_upload(s, rt.storage, owner, received, flow_id=key, path=path, unique=True)
            out = {"flowId": str(key), "file_path": row.path}
    except BaseException:
        rt.storage.discard(received.token)
        raise
    return out, 201, DEPRECATION  # type: ignore[return-value]


@flow_files_blp.route("/files/upload/<flow_id>", methods=["POST"])
@body_limit("upload")
@flow_files_blp.response(201, schemas.FlowUploadSchema)
@flow_files_blp.doc(deprecated=True, **schemas.UPLOAD_BODY)
@authenticated("user")
def upload_flow_file(flow_id: str):
    """Upload a file for a flow (deprecated: use ``/api/v2/files``)."""
    return _flow_upload(flow_id)


@flow_files_blp.route("/upload/<flow_id>", methods=["POST"])
@body_limit("upload")
@flow_files_blp.response(201, schemas.FlowUploadSchema)
@flow_files_blp.doc(deprecated=True, **schemas.UPLOAD_BODY)
@authenticated("user")
def upload_for_flow(flow_id: str):
    """Upload a file for a flow (deprecated, to be removed). ``file_path`` is relative, never a server path."""
    return _flow_upload(flow_id)


@flow_files_blp.route("/files/list/<flow_id>", methods=["GET"])
@flow_files_blp.response(200, schemas.FileNamesListSchema)
@flow_files_blp.doc(deprecated=True)
@authenticated("user")
def list_flow_files(flow_id: str):
    """Names of a flow's files (deprecated)."""
    key, owner = _flow(flow_id)
    rows = services.flow_files(db.session(), owner, key)
    return {"files": [r.path.rsplit("/", 1)[-1] for r in rows]}, 200, DEPRECATION


@flow_files_blp.route("/files/download/<flow_id>/<path:file_name>", methods=["GET"])
@flow_files_blp.response(200, description="The file")
@flow_files_blp.doc(deprecated=True, responses={"200": openapi.binary_response("The file", "application/octet-stream")})
@authenticated("user")
def download_flow_file(flow_id: str, file_name: str):
    """A flow's file as an attachment (deprecated)."""
    key, owner = _flow(flow_id)
    row = services.flow_file(db.session(), owner, key, file_name)
    response = _send(runtime(), row, attachment=True)
    response.headers.update(DEPRECATION)
    return response


@flow_files_blp.route("/files/images/<flow_id>/<path:file_name>", methods=["GET"])
@flow_files_blp.response(200, description="The image")
@flow_files_blp.doc(deprecated=True, responses={"200": openapi.binary_response("The image", *IMAGE_TYPES)})
@authenticated("user")
def download_flow_image(flow_id: str, file_name: str):
    """A flow's image for display in the browser (its sniffed type must be an image)."""
    key, owner = _flow(flow_id)
    row = services.flow_file(db.session(), owner, key, file_name)
    if row.content_type not in IMAGE_TYPES:
        raise ApiError(415, "File is not an image")
    response = _send(runtime(), row, attachment=False, content_type=row.content_type)
    response.headers.update({**DEPRECATION, **SAFE_IMAGE_HEADERS})
    return response


@flow_files_blp.route("/files/delete/<flow_id>/<path:file_name>", methods=["DELETE"])
@flow_files_blp.response(200, schemas.FilesMessageSchema)
@flow_files_blp.doc(deprecated=True)
@authenticated("user")
def delete_flow_file(flow_id: str, file_name: str):
    """Delete a flow's file (deprecated)."""
    key, owner = _flow(flow_id, "write")
    rt = runtime()
    with db.transaction() as s:
        row = services.flow_file(s, owner, key, file_name)
        keys = services.delete_rows(s, rt.storage, [row])
    services.remove_bytes(rt.storage, keys)
    return {"message": f"File {file_name} deleted successfully"}, 200, DEPRECATION


# --- profile pictures (public) ---------------------------------------------------------
@flow_files_blp.route("/files/profile_pictures/list", methods=["GET"])
@flow_files_blp.response(200, schemas.FileNamesListSchema)
@flow_files_blp.doc(responses={"500": openapi.error_response("the picture directories could not be read")})
def list_profile_pictures():
    """Every profile picture as ``folder/file``: the config directory's first, then the shipped ones."""
    return {"files": services.list_pictures(runtime().picture_roots)}


@flow_files_blp.route("/files/profile_pictures/<folder_name>/<path:file_name>", methods=["GET"])
@flow_files_blp.response(200, description="The picture")
@flow_files_blp.doc(
    responses={"200": openapi.binary_response("The picture", "image/png", "image/jpeg", "image/svg+xml")}
)
def download_profile_picture(folder_name: str, file_name: str):
    """One profile picture (public)."""
    path = services.find_picture(runtime().picture_roots, folder_name, file_name)
    response = send_file(path, mimetype=services.PICTURE_TYPES[path.suffix.lower()], max_age=3600)
    response.headers.update(SAFE_IMAGE_HEADERS)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
