"""Import and export: read uploaded JSON or ZIP files, write ZIP archives.

Reading is strict and happens entirely before anything is written, so an
upload is all-or-nothing: one corrupt entry, one invalid flow or a duplicate
id refuses the whole file. ZIP reading is bounded (entry count, sizes) so an
archive bomb cannot exhaust memory.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import re
import uuid
import zipfile
from typing import Any

from marshmallow import ValidationError
from sqlalchemy.orm import Session

from core.errors import ApiError, ValidationFailed, flatten_marshmallow
from core.requests import parse_json
from service_flows import examples, services
from service_flows.models import Flow
from service_flows.schemas import FlowCreateSchema

log = logging.getLogger(__name__)
MAX_ENTRIES = 1000
MAX_ENTRY_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024

log = logging.getLogger(__name__)


# --- reading ------------------------------------------------------------------------------------------
def _json(raw: bytes, where: str) -> Any:
    """One uploaded document, through the core's hardened JSON parser (422 naming the entry)."""
    return parse_json(raw, loc=["body", "file", where])


def read_documents(filename: str, raw: bytes) -> list[tuple[str, Any]]:
    """``[(entry name, parsed JSON)]`` of a JSON file or of every ``.json`` entry of a ZIP."""
    if not raw:
        raise ApiError(400, "The uploaded file is empty")
    if raw[:4] == b"PK\x03\x04" or filename.lower().endswith(".zip"):
        return _read_zip(raw)
    return [(filename or "upload.json", _json(raw, filename or "the file"))]


def _read_zip(raw: bytes) -> list[tuple[str, Any]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        infos = [i for i in archive.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ApiError(400, f"Invalid ZIP file: {exc}") from None
    infos = [i for i in infos if i.filename.lower().endswith(".json") and not i.filename.startswith("__MACOSX/")]
    if not infos:
        raise ApiError(400, "The ZIP file contains no .json flow files")
    if len(infos) > MAX_ENTRIES:
        raise ApiError(400, f"The ZIP file has more than {MAX_ENTRIES} flow files")
    total = 0
    out = []
    with archive:
        for info in infos:
            if info.file_size > MAX_ENTRY_BYTES:
                raise ApiError(400, f"{info.filename} is too large")
            try:
                with archive.open(info) as handle:
                    data = handle.read(MAX_ENTRY_BYTES + 1)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError) as exc:
                raise ApiError(400, f"Invalid ZIP entry {info.filename}: {exc}") from None
            total += len(data)
            if len(data) > MAX_ENTRY_BYTES or total > MAX_TOTAL_BYTES:
                raise ApiError(400, "The ZIP file is too large once extracted")
            out.append((info.filename, _json(data, info.filename)))
    return out


def flows_of(document: Any, where: str) -> list[Any]:
    """The flow objects in one document: a flow, ``{"flows": [...]}`` or a list of flows."""
    if isinstance(document, list):
        return document
    if isinstance(document, dict) and isinstance(document.get("flows"), list):
        return document["flows"]
    if isinstance(document, dict):
        return [document]
    raise ApiError(400, f"{where} holds no flow")


def validate_flows(documents: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Every flow of every document, loaded through the create schema; all errors at once (422)."""
    schema = FlowCreateSchema()
    loaded: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for where, document in documents:
        for index, item in enumerate(flows_of(document, where)):
            if not isinstance(item, dict):
                errors.append(
                    {
                        "loc": ["body", "file", where, str(index)],
                        "msg": "a flow must be an object",
                        "type": "type_error",
                    }
                )
                continue
            if item.get("fs_path") not in (None, ""):
                # exports of the reference may carry the path it wrote the flow to: ignored, never written
                log.warning("upload %s: flow %s: ignoring fs_path %r", where, index, str(item["fs_path"])[:200])
                item = {**item, "fs_path": None}
            try:
                loaded.append(schema.load(item))
            except ValidationError as exc:
                for err in flatten_marshmallow(exc.messages, "body"):
                    err["loc"] = ["body", "file", where, str(index), *err["loc"][1:]]
                    errors.append(err)
    if errors:
        raise ValidationFailed(errors)
    if not loaded:
        raise ApiError(400, "No flows found in the file")
    ids = [f["id"] for f in loaded if f.get("id") is not None]
    duplicates = sorted({str(i) for i in ids if ids.count(i) > 1})
    if duplicates:
        msg = f"Duplicate flow ids in the upload: {', '.join(duplicates)}"
        raise ValidationFailed([{"loc": ["body", "file"], "msg": msg, "type": "value_error"}])
    return loaded


def import_flows(
    s: Session, user_id: uuid.UUID, flows: list[dict[str, Any]], folder_id: uuid.UUID | None, *, keep_ids: bool = True
) -> list[Flow]:
    """Create or update (stable ids) every flow in one transaction.

    An id the caller owns updates that flow; an unused id creates the flow with
    it; an id owned by someone else (or an example's) creates a copy with a new
    id, so an export shared between users imports for each of them.
    """
    out = []
    for body in flows:
        body = {**body, "folder_id": folder_id if folder_id is not None else body.get("folder_id")}
        key = body.get("id") if keep_ids else None
        existing = s.get(Flow, key) if key is not None else None
        if existing is not None and existing.user_id == user_id:
            members = ("name", "folder_id", *services.CREATE_MEMBERS)
            out.append(services.apply_changes(s, existing, body, members, on_clash="rename", foreign_folder="default"))
            continue
        new_id = key if key is not None and existing is None and not examples.is_example(key) else None
        out.append(services.create_flow(s, user_id, body, flow_id=new_id, foreign_folder="default"))
    return out


# --- writing ------------------------------------------------------------------------------------------
_UNSAFE = re.compile(r"[^A-Za-z0-9 ._()\-]+")


def safe_filename(name: str, fallback: str = "flow") -> str:
    """A file name without path separators, control or shell-special characters."""
    cleaned = _UNSAFE.sub("_", name).strip(" .") or fallback
    return cleaned[:120]


def zip_flows(flows: list[dict[str, Any]]) -> bytes:
    """A ZIP with one ``<name>.json`` per exported flow (names made unique)."""
    buffer = io.BytesIO()
    used: set[str] = set()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for flow in flows:
            base = safe_filename(str(flow.get("name") or "flow"))
            name, n = f"{base}.json", 1
            while name.lower() in used:
                n += 1
                name = f"{base} ({n}).json"
            used.add(name.lower())
            archive.writestr(name, dumps(flow))
    return buffer.getvalue()


def _default(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def dumps(value: Any) -> str:
    return json.dumps(value, default=_default, ensure_ascii=False, indent=2)


def timestamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%d_%H%M%S")


def missing_components(flows: list[dict[str, Any]]) -> list[str]:
    """``component X is not installed (bundle Y)`` for each component key of ``flows`` this install lacks."""
    from core.app import state
    from core.engine.catalog import missing_components as missing_in

    registry = state().components.current
    messages: list[str] = []
    for body in flows:
        for item in missing_in(body.get("data") or {}, registry):
            if item["message"] not in messages:
                messages.append(item["message"])
    if messages:
        log.warning("Imported flows use components that are not installed: %s", "; ".join(messages))
    return messages
