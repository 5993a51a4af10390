"""Receiving a multipart upload straight into the storage, never into memory.

werkzeug's form parser is given a stream factory that writes each file part
into a temporary file of the storage (same file system, so keeping it is a
rename) through a writer that counts bytes and stops at the size limit: a
1 GB upload costs 64 KB of buffer, and an oversized one is cut off as soon as
it crosses the limit instead of filling the disk first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import IO, Any

import puremagic
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.formparser import parse_form_data

from core.errors import ApiError, validation_error
from service_files.storage import Storage

SNIFF_BYTES = 8192
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class _Limited:
    """A file-like writer that refuses to grow past ``limit`` bytes."""

    def __init__(self, handle: IO[bytes], limit: int):
        self.handle, self.limit, self.size = handle, limit, 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise RequestEntityTooLarge()
        return self.handle.write(data)

    def seek(self, *args: Any) -> int:
        return self.handle.seek(*args)

    def read(self, *args: Any) -> bytes:
        return self.handle.read(*args)

    def close(self) -> None:
        self.handle.close()


@dataclass
class Received:
    """One uploaded file part, sitting in the storage under ``token``."""

    filename: str
    token: str
    size: int
    content_type: str


def too_large(limit_mb: int) -> ApiError:
    return ApiError(413, f"File size is larger than the maximum file size {limit_mb}MB.")


def receive(environ: dict[str, Any], storage: Storage, limit_mb: int, field: str = "file") -> Received:
    """Parse the request body of ``environ``; return its ``field`` file part (422 when absent, 413 when too big)."""
    limit = limit_mb * 1024 * 1024
    opened: list[tuple[_Limited, str]] = []

    def factory(total_content_length: Any, content_type: Any, filename: Any, content_length: Any = None) -> Any:
        handle, token = storage.new_upload()
        writer = _Limited(handle, limit)
        opened.append((writer, token))
        return writer

    def discard_all(keep: str | None = None) -> None:
        for writer, token in opened:
            writer.close()
            if token != keep:
                storage.discard(token)

    try:
        _stream, _form, files = parse_form_data(environ, stream_factory=factory, silent=False)
    except RequestEntityTooLarge:
        discard_all()
        raise too_large(limit_mb) from None
    except ValueError:
        discard_all()
        raise validation_error(["body", field], "Invalid multipart body", "value_error") from None
    part = files.get(field)
    if part is None or not part.filename:
        discard_all()
        raise validation_error(["body", field], "Field required", "missing")
    chosen = next(((w, t) for w, t in opened if w is part.stream), None)
    if chosen is None:  # pragma: no cover - werkzeug always wraps the factory's stream
        discard_all()
        raise ApiError(500, "upload lost")
    writer, token = chosen
    writer.seek(0)
    head = writer.read(SNIFF_BYTES)
    discard_all(keep=token)
    filename = clean_filename(part.filename)
    return Received(filename, token, writer.size, sniff(head, filename))


def clean_filename(raw: str) -> str:
    """The last segment of a client's file name, without control characters (``file`` when nothing is left)."""
    name = _CONTROL.sub("", raw.replace("\\", "/").rsplit("/", 1)[-1]).strip()
    if name in ("", ".", ".."):
        name = "file"
    if len(name) > 200:
        stem, dot, ext = name.rpartition(".")
        name = (stem[: 200 - len(ext) - 1] + dot + ext) if dot and len(ext) < 20 else name[:200]
    return name


_TEXT_TYPES = {
    "md": "text/markdown",
    "markdown": "text/markdown",
    "csv": "text/csv",
    "json": "application/json",
    "svg": "image/svg+xml",
    "html": "text/html",
    "htm": "text/html",
}


def sniff(head: bytes, filename: str) -> str:
    """The content type from the bytes (magic numbers), not from what the client claims.

    Text has no magic number: valid UTF-8 without NULs is text, typed by its
    extension among a few text formats (plain text otherwise).
    """
    if head:
        try:
            found = puremagic.from_string(head, mime=True)
        except (puremagic.PureError, ValueError):
            found = ""
        if found and not found.startswith("text/"):
            return str(found)
    ext = filename.rpartition(".")[2].lower() if "." in filename else ""
    if b"\x00" not in head:
        try:
            head.decode("utf-8")
            is_text = True
        except UnicodeDecodeError as exc:  # a multi-byte character cut at the sniff boundary is still text
            is_text = exc.start >= len(head) - 4
        if is_text:
            return _TEXT_TYPES.get(ext, "text/plain")
    return "application/octet-stream"
