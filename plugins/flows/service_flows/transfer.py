"""Import and export: read uploaded JSON or ZIP files, write ZIP archives.

Reading is strict and happens entirely before anything is written, so an
upload is all-or-nothing: one corrupt entry, one invalid flow or a duplicate
id refuses the whole file.

Bounded before anything is parsed, so an archive bomb cannot exhaust memory (:func:`upload_limits`,
settings in :mod:`service_flows.config`): the entry count the archive's end record declares and the
size of its central directory (before :class:`zipfile.ZipFile` builds an object per entry), then the
real entry count, the declared expanded sizes (all entries, and each one), and, while decompressing,
what actually comes out (never read past an entry's declared size nor past the cap). Nested archives
are never expanded. Error bodies are bounded too: at most ``MAX_ERRORS`` errors (the rest counted),
names and messages cut to ``MAX_TEXT`` characters.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import re
import struct
import uuid
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

from marshmallow import ValidationError
from sqlalchemy.orm import Session

from core.errors import ApiError, ValidationFailed, flatten_marshmallow, validation_error
from core.requests import parse_json
from service_flows import examples, services
from service_flows.config import settings as flows_settings
from service_flows.models import Flow
from service_flows.schemas import FlowCreateSchema

log = logging.getLogger(__name__)
MB = 1024 * 1024
#: errors listed in one 422 (the rest are counted): an upload of a million bad items answers a few KB
MAX_ERRORS = 20
#: characters of a name (an entry, a key) or a message kept in an error
MAX_TEXT = 200
#: central-directory bytes allowed per entry of the cap (a record is 46 bytes plus its name and extras)
CD_BYTES_PER_ENTRY = 1024


@dataclass(frozen=True)
class UploadLimits:
    """What one upload may hold: ZIP entries (and flows), one document's bytes, all documents' bytes."""

    entries: int
    document_bytes: int
    total_bytes: int


def upload_limits() -> UploadLimits:
    """The limits in force: ``SERVICE_MAX_ZIP_ENTRIES``, ``SERVICE_MAX_ZIP_EXPANDED_MB`` (see config)."""
    from core import appstate

    core = appstate.settings()
    mine = flows_settings()
    total = (mine.max_zip_expanded_mb or 2 * core.max_flow_body_size) * MB
    return UploadLimits(mine.max_zip_entries, min(core.max_flow_body_size * MB, total), total)


def short(text: Any, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters (names and messages in error bodies)."""
    value = str(text)
    return value if len(value) <= limit else value[: limit - 3] + "..."


def _too_large(what: str) -> ApiError:
    return ApiError(413, what)


# --- reading ------------------------------------------------------------------------------------------
def _json(raw: bytes, where: str) -> Any:
    """One uploaded document, through the core's hardened JSON parser (422 naming the entry)."""
    return parse_json(raw, loc=["body", "file", short(where)])


def read_documents(filename: str, raw: bytes, limits: UploadLimits | None = None) -> list[tuple[str, Any]]:
    """``[(entry name, parsed JSON)]`` of a JSON file or of every ``.json`` entry of a ZIP (bounded: 413)."""
    limits = limits or upload_limits()
    if not raw:
        raise ApiError(400, "The uploaded file is empty")
    if raw[:4] == b"PK\x03\x04" or filename.lower().endswith(".zip"):
        return _read_zip(raw, limits)
    if len(raw) > limits.total_bytes:
        raise _too_large(
            f"The uploaded file is larger than {limits.total_bytes // MB} MB (SERVICE_MAX_ZIP_EXPANDED_MB)"
        )
    return [(filename or "upload.json", _json(raw, filename or "the file"))]


def _central_directory(raw: bytes) -> tuple[int, int]:
    """``(entries, bytes)`` the archive's end record declares, read before :class:`zipfile.ZipFile` parses
    the directory (it builds one object per entry: a large upload of empty entries would cost gigabytes).

    ``zipfile._EndRecData`` is the standard library's own reader of that record (zip64 included); the
    module has no public way to read it, and it has kept this name and shape since Python 2.
    """
    end = zipfile._EndRecData(io.BytesIO(raw))  # type: ignore[attr-defined]
    if not end:
        raise ApiError(400, "Invalid ZIP file: no end of central directory")
    return int(end[zipfile._ECD_ENTRIES_TOTAL]), int(end[zipfile._ECD_SIZE])  # type: ignore[attr-defined]


def _read_zip(raw: bytes, limits: UploadLimits) -> list[tuple[str, Any]]:
    try:
        entries, directory = _central_directory(raw)
    except (OSError, ValueError, struct.error, zipfile.BadZipFile) as exc:
        raise ApiError(400, f"Invalid ZIP file: {short(exc)}") from None
    too_many = f"The ZIP file has more than {limits.entries} entries (SERVICE_MAX_ZIP_ENTRIES)"
    if entries > limits.entries or directory > limits.entries * CD_BYTES_PER_ENTRY:
        raise _too_large(too_many)
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        everything = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, struct.error) as exc:
        raise ApiError(400, f"Invalid ZIP file: {short(exc)}") from None
    if len(everything) > limits.entries:  # the end record lied about the count
        raise _too_large(too_many)
    infos = [
        i
        for i in everything
        if not i.is_dir() and i.filename.lower().endswith(".json") and not i.filename.startswith("__MACOSX/")
    ]
    if not infos:
        raise ApiError(400, "The ZIP file contains no .json flow files (nested archives are not expanded)")
    expanded = f"The ZIP file expands to more than {limits.total_bytes // MB} MB (SERVICE_MAX_ZIP_EXPANDED_MB)"
    if sum(i.file_size for i in infos) > limits.total_bytes:
        raise _too_large(expanded)
    for info in infos:
        if info.file_size > limits.document_bytes:
            raise _too_large(
                f"{short(info.filename)} expands to more than {limits.document_bytes // MB} MB "
                "(SERVICE_MAX_FLOW_BODY_SIZE)"
            )
    total = 0
    out = []
    with archive:
        for info in infos:
            name = short(info.filename)
            try:
                with archive.open(info) as handle:
                    # never more than the entry declares (+1 to see a lie), nor than what is left of the cap
                    data = handle.read(min(info.file_size, limits.total_bytes - total) + 1)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, zlib.error) as exc:
                raise ApiError(400, f"Invalid ZIP entry {name}: {short(exc)}") from None
            if len(data) > info.file_size:
                raise ApiError(400, f"Invalid ZIP entry {name}: larger than its declared size")
            total += len(data)
            if total > limits.total_bytes:
                raise _too_large(expanded)
            if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
                raise validation_error(
                    ["body", "file", name], "is a ZIP archive: nested archives are not expanded", "value_error"
                )
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
    raise ApiError(400, f"{short(where)} holds no flow")


def _bounded(errors: list[dict[str, Any]], more: bool) -> ValidationFailed:
    """The 422 of an upload: its first errors, names and messages cut short, and a last item saying more."""
    items = [
        {
            "loc": [short(part, MAX_TEXT) for part in err.get("loc") or []],
            "msg": short(err.get("msg", ""), 2 * MAX_TEXT),
            "type": short(err.get("type", "value_error"), 60),
        }
        for err in errors[:MAX_ERRORS]
    ]
    if more or len(errors) > MAX_ERRORS:
        items.append(
            {
                "loc": ["body", "file"],
                "msg": f"more errors not shown: the first {MAX_ERRORS} are listed",
                "type": "too_many_errors",
            }
        )
    return ValidationFailed(items)


def validate_flows(documents: list[tuple[str, Any]], limits: UploadLimits | None = None) -> list[dict[str, Any]]:
    """Every flow of every document, loaded through the create schema; the errors at once (422), at most
    ``MAX_ERRORS`` of them (checking stops there); at most ``SERVICE_MAX_ZIP_ENTRIES`` flows (413)."""
    limits = limits or upload_limits()
    count = sum(len(flows_of(document, short(where))) for where, document in documents)
    if count > limits.entries:
        raise _too_large(f"The upload holds more than {limits.entries} flows (SERVICE_MAX_ZIP_ENTRIES)")
    schema = FlowCreateSchema()
    loaded: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for where, document in documents:
        where = short(where)
        for index, item in enumerate(flows_of(document, where)):
            if len(errors) > MAX_ERRORS:
                raise _bounded(errors, True)
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
        raise _bounded(errors, False)
    if not loaded:
        raise ApiError(400, "No flows found in the file")
    seen: set[str] = set()
    duplicates: list[str] = []
    for flow_id in (str(f["id"]) for f in loaded if f.get("id") is not None):
        if flow_id in seen and flow_id not in duplicates:
            duplicates.append(flow_id)
        seen.add(flow_id)
    if duplicates:
        shown = ", ".join(sorted(duplicates)[:10]) + (
            f" and {len(duplicates) - 10} more" if len(duplicates) > 10 else ""
        )
        msg = f"Duplicate flow ids in the upload: {shown}"
        raise ValidationFailed([{"loc": ["body", "file"], "msg": msg, "type": "value_error"}])
    return loaded


def import_flows(
    s: Session,
    user_id: uuid.UUID,
    flows: list[dict[str, Any]],
    folder_id: uuid.UUID | None,
    *,
    keep_ids: bool = True,
    into_shared: bool = False,
) -> list[Flow]:
    """Create or update (stable ids) every flow in one transaction.

    An id the caller owns updates that flow; an unused id creates the flow with
    it; an id owned by someone else (or an example's) creates a copy with a new
    id, so an export shared between users imports for each of them. ``into_shared``:
    ``folder_id`` is another user's project the caller may ``create`` in (checked): every
    flow is created there (the project owner's), the caller's own flows are never moved.
    """
    out = []
    for body in flows:
        body = {**body, "folder_id": folder_id if folder_id is not None else body.get("folder_id")}
        key = body.get("id") if keep_ids else None
        existing = s.get(Flow, key) if key is not None else None
        if into_shared:
            new_key = key if key is not None and existing is None and not examples.is_example(key) else None
            out.append(services.create_flow(s, user_id, body, flow_id=new_key))
            continue
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
    from core import appstate
    from core.engine.catalog import missing_components as missing_in

    registry = appstate.registry()
    messages: list[str] = []
    for body in flows:
        for item in missing_in(body.get("data") or {}, registry):
            if item["message"] not in messages:
                messages.append(item["message"])
    if messages:
        log.warning("Imported flows use components that are not installed: %s", "; ".join(messages))
    return messages
