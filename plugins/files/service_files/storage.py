"""Where file bytes live: one small interface, a local-directory implementation.

Stored objects are addressed by *keys* the plugin builds itself
(``<user_id>/<file_id>``), never by names users choose; user-named paths
(profile pictures, local paths given to the File component) go through
:func:`contained` before they touch the file system.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import IO, Protocol
from urllib.parse import unquote

CHUNK = 64 * 1024


class PathRefused(ValueError):
    """A user-named path escapes its root (``..``, absolute, symlink out, encoded variants)."""


def contained(root: Path, user_path: str) -> Path:
    """``root / user_path`` resolved, or :class:`PathRefused` if it leaves ``root``.

    The name is URL-decoded until it no longer changes (so ``%2e%2e`` and
    ``%252e%252e`` are seen as ``..``); NUL bytes, backslashes, absolute
    paths and ``..`` segments are refused outright, and the resolved path
    (symlinks followed) must still lie under the resolved root.
    """
    name = user_path
    for _ in range(4):
        decoded = unquote(name)
        if decoded == name:
            break
        name = decoded
    else:
        raise PathRefused("path is encoded too many times")
    if not name or "\x00" in name or "\\" in name:
        raise PathRefused("invalid path")
    if name.startswith("/") or Path(name).is_absolute() or (len(name) > 1 and name[1] == ":"):
        raise PathRefused("absolute paths are not allowed")
    if any(part == ".." for part in name.split("/")):
        raise PathRefused("'..' is not allowed in a path")
    base = root.resolve()
    target = (base / name).resolve()
    if target != base and not target.is_relative_to(base):
        raise PathRefused("path leaves its directory")
    return target


class Storage(Protocol):
    """What the files plugin needs from a store of bytes."""

    def new_upload(self) -> tuple[IO[bytes], str]:
        """A writable file for an incoming upload and its temporary token."""

    def commit(self, token: str, key: str, *, append: bool = False) -> int:
        """Move the upload ``token`` to ``key`` (or append it); returns the stored size."""

    def discard(self, token: str) -> None:
        """Drop an upload that will not be kept."""

    def open(self, key: str) -> IO[bytes]:
        """The stored bytes for reading (FileNotFoundError when missing)."""

    def local_path(self, key: str) -> Path | None:
        """A file-system path of ``key`` when the store has one (for zip streaming)."""

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key is not an error."""


class LocalStorage:
    """Files under one directory (``<config_dir>/files`` by default); share it between web processes."""

    def __init__(self, root: Path):
        self.root = root
        self.tmp = root / ".uploads"
        self.tmp.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return contained(self.root, key)

    def new_upload(self) -> tuple[IO[bytes], str]:
        fd, name = tempfile.mkstemp(dir=self.tmp, prefix="up-")
        return os.fdopen(fd, "w+b"), Path(name).name

    def _token_path(self, token: str) -> Path:
        if "/" in token or not token.startswith("up-"):
            raise PathRefused("invalid upload token")
        return self.tmp / token

    def commit(self, token: str, key: str, *, append: bool = False) -> int:
        source = self._token_path(token)
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        if append and target.exists():
            with open(target, "ab") as out, open(source, "rb") as src:
                shutil.copyfileobj(src, out, CHUNK)
            source.unlink(missing_ok=True)
        else:
            os.replace(source, target)  # atomic on one file system: readers never see half a file
        return target.stat().st_size

    def discard(self, token: str) -> None:
        self._token_path(token).unlink(missing_ok=True)

    def open(self, key: str) -> IO[bytes]:
        return open(self._path(key), "rb")

    def local_path(self, key: str) -> Path | None:
        return self._path(key)

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)


def storage_key(user_id: uuid.UUID | str, file_id: uuid.UUID | str) -> str:
    return f"{user_id}/{file_id}"
