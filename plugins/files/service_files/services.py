"""File logic: owner-scoped metadata in the database, bytes in the storage (no request objects).

Every lookup is scoped by owner (another user's file answers 404 like a
missing one). Bytes are in place before their row commits and deleted after it, so a
row never points at a half-written file; a failure in between leaves at
worst unreferenced bytes, never a readable half file.
"""

from __future__ import annotations

import datetime as dt
import logging
import mimetypes
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.auth import Actor, check_access
from core.contracts import ResourceRef
from core.db import utcnow
from core.engine.host_access import Hardening
from core.errors import ApiError, validation_error
from service_files.models import StoredFile
from service_files.storage import PathRefused, Storage, contained, storage_key
from service_files.uploads import Received

log = logging.getLogger(__name__)
NOT_FOUND = "File not found"
MAX_CONTENT_BYTES = 10 * 1024 * 1024  # largest file returned inline by return_content=true


def _aware(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value


def file_out(row: StoredFile, *, listing: bool = False) -> dict[str, Any]:
    """The reference's shape: ``{id, name, path, size, provider}``; the list form adds owner and times."""
    out: dict[str, Any] = {"id": row.id, "name": row.name, "path": row.path, "size": row.size, "provider": row.provider}
    if listing:
        out.update(user_id=row.user_id, created_at=_aware(row.created_at), updated_at=_aware(row.updated_at))
    return out


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        return None


def own(s: Session, user_id: uuid.UUID, file_id: Any) -> StoredFile:
    key = _uuid(file_id)
    row = None if key is None else s.scalar(_mine(user_id).where(StoredFile.id == key))
    if row is None:
        raise ApiError(404, NOT_FOUND)
    return row


def file_ref(row: StoredFile) -> ResourceRef:
    return ResourceRef("file", str(row.id), str(row.user_id), None)


def accessible(s: Session, actor: Actor, file_id: Any, verb: str) -> StoredFile:
    """The caller's file, or another user's shared with them allowing ``verb`` (``core.auth``: 404 when
    they may not see it, 403 when they may see but not ``verb`` it)."""
    key = _uuid(file_id)
    row = None if key is None else s.get(StoredFile, key)
    if row is None or (row.user_id != actor.id and row.ephemeral):
        raise ApiError(404, NOT_FOUND)
    if row.user_id != actor.id:
        check_access(actor, verb, file_ref(row), not_found=NOT_FOUND)
    return row


def _mine(user_id: uuid.UUID) -> sa.Select[StoredFile]:
    return sa.select(StoredFile).where(StoredFile.user_id == user_id)


def _user_files(user_id: uuid.UUID) -> sa.Select[StoredFile]:
    return _mine(user_id).where(StoredFile.flow_id.is_(None))


def list_files(s: Session, user_id: uuid.UUID) -> list[StoredFile]:
    """The user's files (per-flow and ephemeral uploads excluded), oldest first."""
    query = _user_files(user_id).where(StoredFile.ephemeral.is_(False)).order_by(StoredFile.created_at)
    return list(s.scalars(query))


def _split(filename: str) -> tuple[str, str]:
    stem, dot, ext = filename.rpartition(".")
    return (stem, dot + ext) if dot and stem else (filename, "")


def _free_path(s: Session, user_id: uuid.UUID, prefix: str, filename: str, lost: set[str]) -> str:
    """``prefix/filename``, or ``prefix/stem (n).ext`` with the first free ``n``; never one of ``lost`` (names
    this upload lost to concurrent ones that have not committed yet, so they are not visible here)."""
    stem, ext = _split(filename)
    taken = set(s.scalars(sa.select(StoredFile.path).where(StoredFile.user_id == user_id))) | lost
    candidate, n = f"{prefix}/{filename}", 1
    while candidate in taken:
        candidate, n = f"{prefix}/{stem} ({n}){ext}", n + 1
    return candidate


#: how many times a name taken by a concurrent upload (between choosing it and inserting) is chosen anew;
#: each loss moves to the next free name, so N uploads of one name at once need at most N attempts
NAME_ATTEMPTS = 16


def _name_taken(path: str) -> ApiError:
    return ApiError(409, f"A file named {path.rsplit('/', 1)[-1]!r} is being stored at the same time; try again")


def _insert(s: Session, row: StoredFile) -> bool:
    """Insert ``row`` in a savepoint; False when its path is taken (the transaction stays usable)."""
    try:
        with s.begin_nested():
            s.add(row)
    except IntegrityError:  # the savepoint's rollback has made ``row`` transient again
        return False
    return True


def store_upload(
    s: Session,
    storage: Storage,
    user_id: uuid.UUID,
    upload: Received,
    *,
    append: bool = False,
    ephemeral: bool = False,
    flow_id: uuid.UUID | None = None,
    path: str | None = None,
    unique: bool = False,
) -> StoredFile:
    """Keep ``upload`` for ``user_id``: a new file, or appended to the file of the same path when ``append``.

    The stored path is unique per owner: without ``path`` (or with ``unique``, for ``path`` as a wish)
    the first free ``name (n).ext`` is taken; a name a concurrent upload takes between that choice
    and the insert is chosen again (``NAME_ATTEMPTS`` times, then 409). The row is inserted in a
    savepoint before the bytes are moved in place, and becomes visible only when the caller's
    transaction commits, after the bytes: no 500, and no row without its file.
    """
    prefix = str(flow_id) if flow_id else str(user_id)
    wanted = path or f"{prefix}/{upload.filename}"
    folder, _, filename = wanted.rpartition("/")
    lost: set[str] = set()
    for _attempt in range(NAME_ATTEMPTS):
        # locked until this request commits: concurrent appends to one file take turns, so each stores the
        # size its own append left (unlocked, an earlier append's size could be written last: a lost update)
        existing = s.scalar(_mine(user_id).where(StoredFile.path == wanted).with_for_update()) if append else None
        if existing is not None:
            existing.size = storage.commit(upload.token, existing.storage_key, append=True)
            existing.updated_at = utcnow()
            return existing
        chosen = wanted if (path and not unique) or append else _free_path(s, user_id, folder, filename, lost)
        row = StoredFile(
            id=uuid.uuid4(),
            user_id=user_id,
            flow_id=flow_id,
            name=_split(upload.filename)[0] if flow_id is None else chosen.rsplit("/", 1)[-1],
            path=chosen,
            provider="Local",
            content_type=upload.content_type,
            ephemeral=ephemeral,
            size=upload.size,
        )
        row.storage_key = storage_key(user_id, row.id)
        if not _insert(s, row):
            if path and not unique and not append:
                break  # an exact path was asked for (a run's Write File): the caller decides
            lost.add(chosen)
            continue
        try:
            row.size = storage.commit(upload.token, row.storage_key)
        except BaseException:
            storage.delete(row.storage_key)
            raise
        return row
    raise _name_taken(wanted)


def rename(s: Session, user_id: uuid.UUID, file_id: Any, name: str) -> StoredFile:
    name = name.strip()
    if not name or len(name) > 255 or "/" in name or "\\" in name or "\x00" in name:
        raise validation_error(["query", "name"], "A file name of 1 to 255 characters without slashes is required")
    row = own(s, user_id, file_id)
    row.name = name
    row.updated_at = utcnow()
    return row


def delete_rows(s: Session, storage: Storage, rows: Iterable[StoredFile]) -> list[str]:
    """Delete rows now; returns the storage keys to remove once the transaction commits."""
    keys = []
    for row in rows:
        keys.append(row.storage_key)
        s.delete(row)
    return keys


def remove_bytes(storage: Storage, keys: Iterable[str]) -> None:
    for key in keys:
        try:
            storage.delete(key)
        except OSError:
            log.warning("could not remove stored bytes %s", key)


def delete_all(s: Session, storage: Storage, user_id: uuid.UUID) -> list[str]:
    return delete_rows(s, storage, s.scalars(_user_files(user_id)))


def by_ids(s: Session, user_id: uuid.UUID, ids: list[uuid.UUID]) -> list[StoredFile]:
    """The caller's files among ``ids`` (404 when none is found)."""
    rows = list(s.scalars(_mine(user_id).where(StoredFile.id.in_(ids)).order_by(StoredFile.created_at)))
    if not rows:
        raise ApiError(404, "No files found")
    return rows


def zip_names(rows: list[StoredFile]) -> Iterator[tuple[StoredFile, str]]:
    """Each row with a unique archive name (its file name; ``name (n).ext`` on clashes)."""
    seen: set[str] = set()
    for row in rows:
        filename = row.path.rsplit("/", 1)[-1]
        stem, ext = _split(filename)
        candidate, n = filename, 1
        while candidate in seen:
            candidate, n = f"{stem} ({n}){ext}", n + 1
        seen.add(candidate)
        yield row, candidate


def read_content(storage: Storage, row: StoredFile) -> str:
    if row.size > MAX_CONTENT_BYTES:
        raise ApiError(413, f"File is larger than {MAX_CONTENT_BYTES // (1024 * 1024)}MB; download it instead")
    with storage.open(row.storage_key) as handle:
        return handle.read().decode("utf-8", "replace")


# --- per-flow (deprecated) --------------------------------------------------------
def flow_files(s: Session, user_id: uuid.UUID, flow_id: uuid.UUID) -> list[StoredFile]:
    query = _mine(user_id).where(StoredFile.flow_id == flow_id).order_by(StoredFile.created_at)
    return list(s.scalars(query))


def flow_file(s: Session, user_id: uuid.UUID, flow_id: uuid.UUID, file_name: str) -> StoredFile:
    row = s.scalar(_mine(user_id).where(StoredFile.path == f"{flow_id}/{file_name}"))
    if row is None:
        raise ApiError(404, NOT_FOUND)
    return row


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def flow_upload_path(flow_id: uuid.UUID, filename: str) -> str:
    """The reference's ``<flow_id>/<YYYY-MM-DD_HH-MM-SS>_<name>`` (made unique by :func:`store_upload`)."""
    stamp = _now().strftime("%Y-%m-%d_%H-%M-%S")
    return f"{flow_id}/{stamp}_{filename}"


# --- reading for runs ----------------------------------------------------------------
def find_for_user(s: Session, user_id: uuid.UUID, ref: str) -> StoredFile | None:
    """The caller's file named by ``ref``: its id, its path, or a path under the files directory."""
    ref = ref.strip()
    key = _uuid(ref)
    if key is not None:
        row = s.scalar(_mine(user_id).where(StoredFile.id == key))
        if row is not None:
            return row
    return s.scalar(_mine(user_id).where(StoredFile.path == ref.lstrip("/")))


def read_for_user(
    s: Session, storage: Storage, root: Path, hardening: Hardening, user_id: uuid.UUID, ref: str
) -> bytes | None:
    """Bytes of ``ref`` for a run of ``user_id``, or None when it names nothing the user may read.

    Stored files are matched by id or path, owner first. Anything else is a local path checked by
    ``hardening.local_path`` (:class:`core.engine.host_access.LocalAccessDenied`, a component error naming
    the rule, when refused): with ``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` on (the default) only the
    user's workspace; off, any path but the never-reachable ones (``/etc``, ``/proc``, home, the config
    and working directories...). The storage directory is never read as a path (other users' bytes).
    """
    row = find_for_user(s, user_id, ref)
    if row is None and ref.startswith(str(root.resolve())):
        # an absolute path into the storage: only the caller's own bytes
        tail = ref[len(str(root.resolve())) :].lstrip("/")
        row = s.scalar(_mine(user_id).where(StoredFile.storage_key == tail))
    if row is not None:
        with storage.open(row.storage_key) as handle:
            return handle.read()
    resolved = hardening.local_path(ref, str(user_id))
    if resolved.is_relative_to(root.resolve()) or not resolved.is_file():
        return None
    return resolved.read_bytes()


def write_for_user(
    s: Session, storage: Storage, user_id: uuid.UUID, name: str, content: bytes, *, append: bool
) -> StoredFile:
    """Keep ``content`` as the user's file ``<user_id>/<name>`` (a run's Write File): replaced, or appended to.

    ``name`` must be a plain file name (no folders, no ``..``, no NUL). The bytes go to a temporary
    upload first and are then moved (or appended) in place, before the row is written.
    """
    name = name.strip()
    if not name or len(name) > 255 or name in (".", "..") or any(c in name for c in "/\\\x00"):
        raise ValueError("A file name of 1 to 255 characters without folders is required")
    handle, token = storage.new_upload()
    try:
        with handle:
            handle.write(content)
    except BaseException:
        storage.discard(token)
        raise
    path = f"{user_id}/{name}"
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    for _attempt in range(2):  # the second time, the file a concurrent write just created is found
        existing = s.scalar(_mine(user_id).where(StoredFile.path == path).with_for_update())  # as store_upload
        if existing is not None:
            existing.size = storage.commit(token, existing.storage_key, append=append)
            existing.updated_at = utcnow()
            existing.ephemeral = False
            return existing
        try:
            return store_upload(s, storage, user_id, Received(name, token, len(content), content_type), path=path)
        except ApiError as exc:
            if exc.status != 409:
                raise
    storage.discard(token)
    raise ValueError(f"The file {name!r} is being written at the same time; try again")


# --- profile pictures -----------------------------------------------------------------
PICTURE_TYPES = {".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


def list_pictures(roots: list[Path]) -> list[str]:
    """``folder/file`` of every picture, config directory first, then the shipped ones (names deduplicated)."""
    seen: dict[str, None] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
            for item in sorted(folder.iterdir()):
                if item.suffix.lower() in PICTURE_TYPES and item.is_file() and not item.is_symlink():
                    seen.setdefault(f"{folder.name}/{item.name}", None)
    return list(seen)


def find_picture(roots: list[Path], folder: str, file_name: str) -> Path:
    for root in roots:
        try:
            path = contained(root, f"{folder}/{file_name}")
        except PathRefused:
            raise ApiError(404, "Profile picture not found") from None
        if path.is_file() and path.suffix.lower() in PICTURE_TYPES:
            return path
    raise ApiError(404, "Profile picture not found")
