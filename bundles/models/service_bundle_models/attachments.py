"""A chat message's attached files as OpenAI content parts, the way the reference sends them.

A chat input's ``files`` (stored-file paths or ids: a v1 flow upload ``<flow_id>/<name>``, a v2 file
``<user_id>/<name>``) ride on its Message; a text input receives them on the text
(:class:`core.engine.AttachedText`). For a model call the user turn then becomes a list of parts: the
text first, then per file

* an image (PNG, JPEG, GIF or WebP, told by its content, never by its name): an ``image_url`` part
  whose URL is a base64 ``data:`` URL (the reference's ``create_image_content_dict``);
* UTF-8 text: a text part ``File '<name>' contents:\\n<text>``.

Files are read only through the run context's ``read_file`` (the files plugin's storage, scoped to the
run's user: another user's file, or a host path while ``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` is on, is
"not found"). Caps: :data:`MAX_IMAGE_BYTES` per image (OpenAI's own limit) and :data:`MAX_TEXT_BYTES`
per text file. A file that is missing, too large, or neither image nor text stops the run with a clear
error naming the file: the reference skips such files silently, and a model that answers about an
image it never received is the defect this module exists to remove (issue 27).
"""

from __future__ import annotations

import base64
import posixpath
from typing import Any

import puremagic

from core.engine import ComponentError
from core.engine.types import to_text

MAX_IMAGE_BYTES = 20 * 1024 * 1024
MAX_TEXT_BYTES = 1024 * 1024
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")  # what OpenAI-style vision models take


def files_of(value: Any) -> list[Any]:
    """The attachments a text input received with its value (none for plain text)."""
    files = getattr(value, "files", None)
    return [f for f in files if f] if isinstance(files, list) else []


def _ref(file: Any) -> str:
    if isinstance(file, dict):
        return str(file.get("path") or file.get("id") or "")
    return str(getattr(file, "path", None) or file)


def _image_type(content: bytes) -> str | None:
    try:
        found = str(puremagic.from_string(content[:64], mime=True))
    except (puremagic.PureError, ValueError):
        return None
    return found if found in IMAGE_TYPES else None


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"


def part(context: Any, file: Any) -> dict[str, Any]:
    """The content part of one attached file (:class:`ComponentError` when it cannot be sent)."""
    ref = _ref(file)
    name = posixpath.basename(ref.replace("\\", "/")) or "attachment"
    if context.read_file is None:
        raise ComponentError(f"Attached file '{name}' cannot be read: no file storage is installed")
    try:
        content: bytes = context.read_file(ref)
    except (FileNotFoundError, ValueError):
        raise ComponentError(f"Attached file '{name}' was not found") from None
    mime = _image_type(content)
    if mime is not None:
        if len(content) > MAX_IMAGE_BYTES:
            raise ComponentError(f"Attached image '{name}' is larger than {_mb(MAX_IMAGE_BYTES)}")
        url = f"data:{mime};base64,{base64.b64encode(content).decode('ascii')}"
        return {"type": "image_url", "image_url": {"url": url}}
    if len(content) > MAX_TEXT_BYTES:
        raise ComponentError(f"Attached file '{name}' is larger than {_mb(MAX_TEXT_BYTES)}")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        raise ComponentError(f"Attached file '{name}' is neither an image (PNG, JPEG, GIF, WebP) nor UTF-8 text")
    return {"type": "text", "text": f"File '{name}' contents:\n{text}"}


def user_content(context: Any, value: Any) -> str | list[dict[str, Any]]:
    """The ``content`` of a user turn: the plain text, or text and file parts when files are attached."""
    text = str(to_text(value)) if value is not None else ""
    files = files_of(value)
    if not files:
        return text
    return [{"type": "text", "text": text}, *(part(context, f) for f in files)]
