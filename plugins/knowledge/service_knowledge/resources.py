"""HTTP endpoints of knowledge bases (``/api/v1/knowledge_bases``), as the reference serves them."""

from __future__ import annotations

import uuid
from typing import Any

from flask import request
from flask_smorest import Blueprint

from core import appstate, db
from core.auth import authenticated, current_actor, shared_role
from core.db import utcnow
from core.engine.documents import UnsupportedDocument, extract_text
from core.errors import ApiError, validation_error
from core.openapi import json_response
from core.requests import body_limit
from service_knowledge import schemas, services
from service_knowledge.jobs import INGEST

knowledge_blp = Blueprint("knowledge", __name__, url_prefix="/api/v1/knowledge_bases", description="Knowledge bases")


def _job_state(job_id: str) -> tuple[str, str | None] | None:
    jobs = appstate.jobs()
    info = jobs.info(job_id)
    if info is not None and not info.state.terminal:
        jobs.active_jobs()  # lets the backend's watchdog end a job whose worker died
        info = jobs.info(job_id)
    return None if info is None else (str(info.state), info.error)


def _mine(s: Any, name: str, verb: str = "read") -> Any:
    """The caller's base ``name``, or another user's base by id shared with them for ``verb`` (404 / 403)."""
    kb = services.reach(s, current_actor(), name, verb)
    services.reconcile(s, kb, _job_state)
    return kb


def _out(s: Any, kb: Any) -> dict[str, Any]:
    """The reference's item; another user's base carries the caller's ``shared_role`` (the editor's badge)."""
    out = services.kb_out(s, kb)
    if kb.user_id != current_actor().id:
        out["shared_role"] = shared_role(current_actor(), services.kb_ref(kb))
    return out


@knowledge_blp.route("/", methods=["GET"])
@knowledge_blp.response(200)
@knowledge_blp.doc(
    responses={"200": json_response("The caller's knowledge bases", schemas.KnowledgeBaseSchema(many=True))}
)
@authenticated("user")
def list_knowledge_bases():
    """The caller's knowledge bases with their statistics and ingestion status, then other users' bases
    shared with them (by a team share), each with ``shared_role``; a shared base is addressed by its id."""
    with db.transaction() as s:
        bases = services.list_bases(s, current_actor().id)
        shared = services.shared_bases(s, current_actor())
        for kb in [*bases, *(kb for kb, _ in shared)]:
            services.reconcile(s, kb, _job_state)
        return [services.kb_out(s, kb) for kb in bases] + [
            {**services.kb_out(s, kb), "shared_role": role} for kb, role in shared
        ]


@knowledge_blp.route("/", methods=["POST"])
@knowledge_blp.arguments(schemas.KnowledgeCreateSchema)
@knowledge_blp.response(201)
@knowledge_blp.doc(responses={"201": json_response("The new knowledge base", schemas.KnowledgeBaseSchema)})
@authenticated("user")
def create_knowledge_base(body):
    """Create an empty knowledge base; its embedding model is fixed from now on."""
    with db.transaction() as s:
        return services.kb_out(s, services.create(s, current_actor().id, body))


@knowledge_blp.route("/", methods=["DELETE"])
@knowledge_blp.arguments(schemas.KnowledgeDeleteSchema)
@knowledge_blp.response(200)
@knowledge_blp.doc(responses={"200": json_response("How many were deleted", schemas.KnowledgeDeletedSchema)})
@authenticated("user")
def delete_knowledge_bases(body):
    """Delete several knowledge bases by name (404 when none of them exists)."""
    names = list(dict.fromkeys(body["kb_names"]))
    with db.transaction() as s:
        found = {n: services.find(s, current_actor().id, n) for n in names}
        missing = [n for n, kb in found.items() if kb is None]
        if names and len(missing) == len(names):
            raise ApiError(404, f"Knowledge bases not found: {', '.join(missing)}")
        for kb in found.values():
            if kb is not None:
                services.delete(s, kb)
    out: dict[str, Any] = {
        "message": f"Deleted {len(names) - len(missing)} knowledge base(s)",
        "deleted_count": len(names) - len(missing),
    }
    if missing:
        out["not_found"] = missing
    return out


@knowledge_blp.route("/<kb_name>", methods=["GET"])
@knowledge_blp.response(200)
@knowledge_blp.doc(responses={"200": json_response("The knowledge base", schemas.KnowledgeBaseSchema)})
@authenticated("user")
def read_knowledge_base(kb_name: str):
    """One knowledge base (404 ``Knowledge base 'x' not found``): the caller's by name, a shared one by id."""
    with db.transaction() as s:
        return _out(s, _mine(s, kb_name))


@knowledge_blp.route("/<kb_name>", methods=["DELETE"])
@knowledge_blp.response(200)
@knowledge_blp.doc(responses={"200": json_response("Deleted", schemas.KnowledgeMessageSchema)})
@authenticated("user")
def delete_knowledge_base(kb_name: str):
    """Delete one knowledge base and its chunks (a shared one: its ``delete`` right, 403 without)."""
    with db.transaction() as s:
        services.delete(s, services.reach(s, current_actor(), kb_name, "delete"))
    return {"message": f"Knowledge base '{kb_name}' deleted successfully"}


def _ingest_sources() -> tuple[list[str], list[tuple[str, str]]]:
    """Files (ids or paths of stored files) and texts named in the request: JSON or multipart."""
    if request.mimetype == "multipart/form-data":
        texts = []
        for part in request.files.getlist("files") + request.files.getlist("file"):
            name = (part.filename or "upload").rsplit("/", 1)[-1]
            try:
                texts.append((name, extract_text(name, part.read())))
            except UnsupportedDocument as exc:
                raise validation_error(["body", "files"], str(exc)) from None
        file_ids = [v for v in request.form.getlist("file_ids") if v.strip()]
        if request.form.get("text"):
            texts.append((request.form.get("source_name") or "text", request.form["text"]))
        return file_ids, texts
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise validation_error(["body"], "Send a JSON object or multipart files", "dict_type")
    try:
        loaded = schemas.IngestJSONSchema().load(body)
    except Exception as exc:  # marshmallow.ValidationError
        raise validation_error(["body"], str(exc)) from None
    texts = [(loaded["source_name"], loaded["text"])] if loaded.get("text") else []
    return loaded["file_ids"], texts


@knowledge_blp.route("/<kb_name>/ingest", methods=["POST"])
@body_limit("upload")
@knowledge_blp.response(202)
@knowledge_blp.doc(
    requestBody=schemas.INGEST_BODY,
    responses={"202": json_response("The queued ingestion job", schemas.IngestQueuedSchema)},
)
@authenticated("user")
def ingest(kb_name: str):
    """Queue the ingestion of stored files (``file_ids``), uploaded ``files`` or ``text``; poll the base's status."""
    job_id = str(uuid.uuid4())
    with db.transaction() as s:
        kb = _mine(s, kb_name, "write")
        owner = kb.user_id  # a shared base is ingested as its owner's (its job, its embedding keys)
        if kb.status == services.INGESTING:
            raise ApiError(409, f"Knowledge base '{kb_name}' is already ingesting")
        files, texts = _ingest_sources()
        if not files and not texts:
            raise validation_error(["body"], "Give file_ids, files or text to ingest", "missing")
        pending = [str(p) for p in services.add_pending(s, kb, files=files, texts=texts)]
        kb.status, kb.failure_reason, kb.last_job_id, kb.updated_at = services.INGESTING, None, job_id, utcnow()
        kb_id = str(kb.id)
    # enqueued once committed, so the job (possibly in another process) sees the pending sources
    try:
        appstate.jobs().enqueue(
            INGEST, owner=str(owner), job_id=job_id, kwargs={"kb_id": kb_id, "pending_ids": pending}
        )
    except Exception as exc:
        with db.transaction() as s:
            services.fail(s, services.get_by_id(s, kb_id), f"Could not queue the ingestion: {exc}")
        raise
    return {"job_id": job_id, "knowledge_base": kb_name, "status": services.INGESTING}


@knowledge_blp.route("/<kb_name>/jobs/<job_id>", methods=["GET"])
@knowledge_blp.response(200)
@knowledge_blp.doc(responses={"200": json_response("The job's state and events", schemas.IngestionJobSchema)})
@authenticated("user")
def ingestion_job(kb_name: str, job_id: str):
    """An ingestion job's state and its progress events (for the editor's progress bar)."""
    kb = services.reach(db.session(), current_actor(), kb_name, "read")
    jobs = appstate.jobs()
    # the jobs of a shared base are its owner's: a member reads its last ingestion only, no other job of theirs
    mine = kb.user_id == current_actor().id
    info = jobs.info_for(job_id, str(kb.user_id)) if mine or kb.last_job_id == job_id else None
    if info is None:
        raise ApiError(404, "Job not found")
    events = [{"event": e.name, "data": e.data} for e in jobs.read_events(job_id)]
    progress = next((e["data"] for e in reversed(events) if e["event"] == "progress"), None)
    return {"job_id": job_id, "state": str(info.state), "error": info.error, "progress": progress, "events": events}


@knowledge_blp.route("/<kb_name>/chunks", methods=["GET"])
@knowledge_blp.arguments(schemas.ChunksQuerySchema, location="query")
@knowledge_blp.response(200)
@knowledge_blp.doc(responses={"200": json_response("A page of chunks", schemas.ChunksPageSchema)})
@authenticated("user")
def list_chunks(query, kb_name: str):
    """A page of the base's chunks (``search`` filters by contained text)."""
    s = db.session()
    kb = services.reach(s, current_actor(), kb_name, "read")
    return services.chunks_page(s, kb, query["page"], query["limit"], query["search"])


@knowledge_blp.route("/<kb_name>/search", methods=["POST"])
@knowledge_blp.arguments(schemas.SearchSchema)
@knowledge_blp.response(200)
@knowledge_blp.doc(responses={"200": json_response("The nearest chunks", schemas.SearchResultsSchema)})
@authenticated("user")
def search(body, kb_name: str):
    """The ``top_k`` chunks nearest to ``query`` (cosine score), best first."""
    s = db.session()
    kb = services.reach(s, current_actor(), kb_name, "read")
    return {
        "results": services.search(
            s,
            kb,
            body["query"],
            top_k=body["top_k"],
            threshold=body["score_threshold"],
            metadata_filter=body["metadata_filter"],
            model=body["embedding_model"],
        )
    }
