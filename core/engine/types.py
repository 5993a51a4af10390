"""Typed values that travel along edges: :class:`Message`, :class:`Data` (JSON) and :class:`DataFrame` (Table).

They are small plain classes (no pydantic, no pandas) so importing the engine
stays fast. :meth:`DataFrame.to_pandas` imports pandas lazily for the rare
component that wants it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from uuid_utils.compat import uuid7

__all__ = ["JSON", "Data", "DataFrame", "Message", "Table", "jsonable", "message_timestamp", "to_text"]


def message_timestamp() -> str:
    """The reference's message timestamp format: ``"YYYY-MM-DD HH:MM:SS.ffffff UTC"`` (microseconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def jsonable(value: Any) -> Any:
    """Turn engine values (and nested containers of them) into JSON-ready values."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Message):
        return value.to_dict()
    if isinstance(value, Data):
        return value.to_dict()
    if isinstance(value, DataFrame):
        return value.to_records()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


class Data:
    """A dict wrapper (the reference's ``Data``, shown as ``JSON`` in 1.12).

    ``text_key`` names the member holding the text; ``default_value`` is what
    :meth:`get_text` returns when that member is missing.
    """

    __slots__ = ("data", "default_value", "text_key")
    type_name = "JSON"

    def __init__(
        self, data: dict[str, Any] | None = None, text_key: str = "text", default_value: Any = "", **kwargs: Any
    ):
        merged = dict(data) if data else {}
        if kwargs:
            merged.update(kwargs)
        self.data: dict[str, Any] = merged
        self.text_key = text_key or "text"
        self.default_value = default_value

    def get_text(self) -> Any:
        return self.data.get(self.text_key, self.default_value)

    @property
    def text(self) -> Any:
        return self.get_text()

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Data) and type(other) is type(self) and other.data == self.data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(data={self.data!r})"

    def copy(self) -> Data:
        return Data(dict(self.data), text_key=self.text_key, default_value=self.default_value)

    def to_dict(self) -> dict[str, Any]:
        return {"text_key": self.text_key, "data": jsonable(self.data), "default_value": self.default_value}

    def to_message(self) -> Message:
        if self.text_key in self.data:
            return Message(text=to_text(self.data[self.text_key]))
        return Message(text=json.dumps(jsonable(self.data), ensure_ascii=False))

    def to_dataframe(self) -> DataFrame:
        values = list(self.data.values())
        if len(values) == 1 and isinstance(values[0], list) and all(isinstance(v, dict) for v in values[0]):
            return DataFrame(values[0])
        return DataFrame([self.data])


JSON = Data

_MESSAGE_FIELDS = (
    "sender",
    "sender_name",
    "files",
    "session_id",
    "context_id",
    "run_id",
    "timestamp",
    "flow_id",
    "error",
    "edit",
    "properties",
    "category",
    "content_blocks",
    "duration",
    "session_metadata",
)


def default_properties() -> dict[str, Any]:
    return {
        "text_color": "",
        "background_color": "",
        "edited": False,
        "source": {"id": None, "display_name": None, "source": None},
        "icon": "",
        "allow_markdown": False,
        "positive_feedback": None,
        "state": "complete",
        "targets": [],
    }


class Message(Data):
    """A chat message. Serialises (``to_dict``) like the reference: nested ``data`` plus flattened fields."""

    __slots__ = (
        "category",
        "content_blocks",
        "context_id",
        "duration",
        "edit",
        "error",
        "files",
        "flow_id",
        "id",
        "properties",
        "run_id",
        "sender",
        "sender_name",
        "session_id",
        "session_metadata",
        "timestamp",
    )
    type_name = "Message"

    def __init__(
        self,
        text: Any = "",
        *,
        sender: str | None = None,
        sender_name: str | None = None,
        session_id: str | None = None,
        context_id: str | None = None,
        flow_id: str | None = None,
        run_id: str | None = None,
        timestamp: str | None = None,
        id: str | None = None,
        files: list[Any] | None = None,
        error: bool = False,
        edit: bool = False,
        properties: dict[str, Any] | None = None,
        category: str = "message",
        content_blocks: list[Any] | None = None,
        duration: float | None = None,
        session_metadata: dict[str, Any] | None = None,
    ):
        super().__init__({"text": "" if text is None else text})
        self.sender = sender
        self.sender_name = sender_name
        self.session_id = session_id or ""
        self.context_id = context_id or ""
        self.flow_id = flow_id
        self.run_id = run_id
        self.timestamp = timestamp or message_timestamp()
        self.id = id
        self.files = list(files) if files else []
        self.error = error
        self.edit = edit
        props = default_properties()
        if properties:
            props.update(properties)
        self.properties = props
        self.category = category
        self.content_blocks = list(content_blocks) if content_blocks else []
        self.duration = duration
        self.session_metadata = session_metadata

    @property
    def text(self) -> Any:  # type: ignore[override]
        return self.data.get("text", "")

    @text.setter
    def text(self, value: Any) -> None:
        self.data["text"] = value

    def get_text(self) -> Any:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and other.text == self.text and other.sender == self.sender

    def __repr__(self) -> str:
        return f"Message(text={self.text!r}, sender={self.sender!r})"

    def copy(self) -> Message:  # type: ignore[override]
        new = Message(self.text)
        for name in _MESSAGE_FIELDS:
            value = getattr(self, name)
            if isinstance(value, dict):
                value = dict(value)
            elif isinstance(value, list):
                value = list(value)
            setattr(new, name, value)
        new.id = self.id
        return new

    def to_message(self) -> Message:
        return self

    def to_data(self) -> Data:
        return Data({"text": self.text})

    def to_dataframe(self) -> DataFrame:
        return DataFrame([{"text": self.text}])

    def to_dict(self) -> dict[str, Any]:
        props = dict(self.properties)
        source = props.get("source")
        if isinstance(source, dict):
            props["source"] = dict(source)
        for key in ("targets", "usage"):
            if isinstance(props.get(key), (list, dict)):
                props[key] = jsonable(props[key])
        text = self.text
        flat: dict[str, Any] = {
            "sender": self.sender,
            "sender_name": self.sender_name,
            "files": [f if isinstance(f, str) else jsonable(f) for f in self.files],
            "session_id": self.session_id,
            "context_id": self.context_id,
            "run_id": self.run_id,
            "timestamp": self.timestamp,
            "flow_id": self.flow_id,
            "error": self.error,
            "edit": self.edit,
            "properties": props,
            "category": self.category,
            "content_blocks": jsonable(self.content_blocks) if self.content_blocks else [],
            "duration": self.duration,
            "session_metadata": dict(self.session_metadata)
            if isinstance(self.session_metadata, dict)
            else self.session_metadata,
            "text": text if isinstance(text, str) else jsonable(text),
            "id": self.id,
        }
        return {"text_key": "text", "data": dict(flat), "default_value": "", **flat}

    @classmethod
    def from_dict(cls, value: dict[str, Any]) -> Message:
        nested = value.get("data")
        src: dict[str, Any] = nested if isinstance(nested, dict) else value
        src = {**src, **{k: v for k, v in value.items() if k in _MESSAGE_FIELDS or k in ("text", "id")}}
        kwargs = {k: src[k] for k in (*_MESSAGE_FIELDS, "id") if k in src}
        files = kwargs.get("files")
        if isinstance(files, str):
            try:
                kwargs["files"] = json.loads(files)
            except ValueError:
                kwargs["files"] = []
        return cls(src.get("text", ""), **kwargs)


class DataFrame:
    """A table as a list of row dicts (the reference's ``DataFrame``, shown as ``Table``).

    Columns keep first-seen order. No pandas: :meth:`to_pandas` imports it on demand.
    """

    __slots__ = ("columns", "rows")
    type_name = "Table"

    def __init__(self, rows: Iterable[Any] | None = None, columns: Iterable[str] | None = None):
        normalised: list[dict[str, Any]] = []
        for row in rows or ():
            if isinstance(row, Data) and not isinstance(row, Message):
                normalised.append(dict(row.data))
            elif isinstance(row, Message):
                normalised.append({"text": row.text})
            elif isinstance(row, dict):
                normalised.append(dict(row))
            else:
                normalised.append({"value": row})
        cols: list[str] = list(columns) if columns is not None else []
        if columns is None:
            seen: set[str] = set()
            for row in normalised:
                for key in row:
                    if key not in seen:
                        seen.add(key)
                        cols.append(key)
        self.rows = normalised
        self.columns = cols

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataFrame) and other.to_records() == self.to_records()

    def __repr__(self) -> str:
        return f"DataFrame(columns={self.columns!r}, rows={len(self.rows)})"

    @property
    def empty(self) -> bool:
        return not self.rows

    def to_records(self) -> list[dict[str, Any]]:
        return [{col: jsonable(row.get(col)) for col in self.columns} for row in self.rows]

    def to_data_list(self) -> list[Data]:
        return [Data({col: row.get(col) for col in self.columns}) for row in self.rows]

    def to_data(self) -> Data:
        return Data({"results": self.to_records()})

    def to_message(self) -> Message:
        return Message(text=self.to_markdown())

    def to_dataframe(self) -> DataFrame:
        return self

    def to_markdown(self) -> str:
        if not self.columns:
            return ""

        def cell(value: Any) -> str:
            if value is None:
                return ""
            return to_text(value).replace("|", "\\|").replace("\n", " ")

        header = "| " + " | ".join(str(c) for c in self.columns) + " |"
        sep = "|" + "|".join("-" * (len(str(c)) + 2) for c in self.columns) + "|"
        body = ["| " + " | ".join(cell(row.get(c)) for c in self.columns) + " |" for row in self.rows]
        return "\n".join([header, sep, *body])

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.to_records(), columns=self.columns)

    @classmethod
    def from_pandas(cls, frame: Any) -> DataFrame:
        return cls(frame.to_dict(orient="records"), columns=[str(c) for c in frame.columns])


Table = DataFrame


class AttachedText(str):
    """A :class:`Message`'s text as a text input receives it, still carrying the message's ``files``.

    Text inputs (``MessageTextInput`` and the like) turn a connected Message into its text; a chat input's
    attachments would be lost on the way to a model. This ``str`` behaves as the text everywhere and keeps
    the file references (``files``: stored-file paths or ids) for the components that send them on.
    """

    files: list[Any]

    def __new__(cls, text: str, files: list[Any]) -> AttachedText:
        obj = super().__new__(cls, text)
        obj.files = list(files)
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (AttachedText, (str(self), self.files))


def message_text(value: Any) -> str:
    """:func:`to_text`, keeping a Message's attachments (:class:`AttachedText`) when it has any."""
    if isinstance(value, Message) and value.files:
        return AttachedText(to_text(value), value.files)
    return to_text(value)


def to_text(value: Any) -> str:
    """Best-effort plain text of any engine value (used for string inputs)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Message):
        return to_text(value.text)
    if isinstance(value, Data):
        text = value.get_text()
        if value.text_key in value.data or text not in (None, ""):
            return to_text(text)
        return json.dumps(jsonable(value.data), ensure_ascii=False)
    if isinstance(value, DataFrame):
        return value.to_markdown()
    if isinstance(value, (list, tuple)):
        return "\n".join(to_text(v) for v in value)
    if isinstance(value, (dict,)):
        return json.dumps(jsonable(value), ensure_ascii=False)
    return str(value)


def new_id() -> str:
    """A new message id: a time-ordered UUIDv7 (see ``core.db.new_id``; messages are the busiest table)."""
    return str(uuid7())
