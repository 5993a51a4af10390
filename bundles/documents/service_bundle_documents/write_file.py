"""Write File (``SaveToFile``): a Message, JSON or Table kept as one of the run user's stored files.

The file goes through ``RunContext.write_file`` (the ``write_user_file`` hook, answered by the files
plugin): it belongs to the run's user and shows on their Files page as ``<user_id>/<file name>``;
nothing is written to a path the flow names. Only the "Local" storage location exists here (the
reference's AWS and Google Drive fields are kept, hidden, so exported flows load).
"""

from __future__ import annotations

import csv
import html
import io
import json
from typing import Any

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.inputs import BoolInput, DropdownInput, HandleInput, SecretStrInput, SortableListInput, StrInput
from core.engine.types import jsonable, to_text

_LOCAL = [{"icon": "hard-drive", "name": "Local"}]
LOCAL_FORMATS = ["csv", "excel", "json", "markdown", "txt", "html"]
EXTENSIONS = {"csv": ".csv", "excel": ".xlsx", "json": ".json", "markdown": ".md", "txt": ".txt", "html": ".html"}
AWS_FORMATS = ["txt", "json", "csv", "xml", "html", "md", "yaml", "log", "tsv", "jsonl", "parquet", "xlsx", "zip"]
GDRIVE_FORMATS = ["txt", "html", "json", "csv", "xlsx", "slides", "docs", "jpg", "mp3"]
MAX_BYTES = 50 * 1024 * 1024


class SaveToFile(Component):
    key = "SaveToFile"
    display_name = "Write File"
    display_names = {"en": "Write File", "fr": "Écrire un fichier", "de": "Datei schreiben", "es": "Escribir archivo"}
    description = "Save a Message, JSON or Table as one of your files (CSV, Excel, JSON, Markdown, text, HTML)."
    icon = "file-pen"
    category = "files_and_knowledge"
    inputs = [
        SortableListInput("storage_location", "Storage Location", _LOCAL, advanced=True, options=_LOCAL),
        HandleInput(
            "input",
            "File Content",
            "",
            input_types=["Data", "JSON", "DataFrame", "Table", "Message"],
            required=True,
            info="The value to save.",
        ),
        StrInput(
            "file_name", "File Name", "", required=True, info="Name of the file (the format's extension is added)."
        ),
        StrInput("file_format", "File Format", "", show=False),
        BoolInput("append_mode", "Append", False, info="Add to the file of the same name instead of replacing it."),
        DropdownInput("local_format", "File Format", "json", options=LOCAL_FORMATS, info="Format of the saved file."),
        DropdownInput("aws_format", "File Format", "txt", options=AWS_FORMATS, show=False),
        DropdownInput("gdrive_format", "File Format", "txt", options=GDRIVE_FORMATS, show=False),
        SecretStrInput("aws_access_key_id", "AWS Access Key ID", "", advanced=True, show=False, load_from_db=True),
        SecretStrInput("aws_secret_access_key", "AWS Secret Key", "", advanced=True, show=False, load_from_db=True),
        StrInput("bucket_name", "S3 Bucket Name", "", advanced=True, show=False),
        StrInput("aws_region", "AWS Region", "", advanced=True, show=False),
        StrInput("s3_prefix", "S3 Prefix", "", advanced=True, show=False),
        SecretStrInput(
            "service_account_key",
            "GCP Credentials Secret Key",
            "",
            required=True,
            advanced=True,
            show=False,
            load_from_db=True,
        ),
        StrInput("folder_id", "Google Drive Folder ID", "", required=True, advanced=True, show=False),
    ]
    outputs = [Output("message", "File Path", "save_to_file", ["Message"])]

    # -- helpers -------------------------------------------------------------------------
    def _location(self) -> str:
        chosen = self.storage_location if isinstance(self.storage_location, list) else []
        names = [to_text(c.get("name")) for c in chosen if isinstance(c, dict)]
        return names[0] if names else "Local"

    def _format(self) -> str:
        fmt = to_text(self.file_format or self.local_format or "json").strip().lower()
        if fmt not in LOCAL_FORMATS:
            raise ComponentError(f"Unsupported file format '{fmt}': choose one of {', '.join(LOCAL_FORMATS)}")
        return fmt

    def _name(self, fmt: str) -> str:
        name = to_text(self.file_name).strip()
        if not name:
            raise ComponentError("A file name is required")
        if "/" in name or "\\" in name or "\x00" in name or name in (".", "..") or len(name) > 240:
            raise ComponentError("The file name must be a plain name of at most 240 characters, without folders")
        ext = EXTENSIONS[fmt]
        return name if name.lower().endswith(ext) or (fmt == "excel" and name.lower().endswith(".xls")) else name + ext

    def _value(self) -> tuple[str, Any]:
        value = self.input[0] if isinstance(self.input, list) and len(self.input) == 1 else self.input
        if value in (None, "", []):
            raise ComponentError("Nothing to save: connect a Message, JSON or Table")
        if isinstance(value, list):
            return "Table", DataFrame(value)
        if isinstance(value, DataFrame):
            return "Table", value
        if isinstance(value, Message):
            if not to_text(value.text):
                raise ComponentError("Nothing to save: the message is empty")
            return "Message", value
        if isinstance(value, Data):
            return "JSON", value
        if isinstance(value, dict):
            return "JSON", Data(value)
        return "Message", Message(text=to_text(value))

    @staticmethod
    def _rows(kind: str, value: Any) -> list[dict[str, Any]]:
        if kind == "Table":
            return [jsonable(r) for r in value.to_records()]
        if kind == "JSON":
            return [jsonable(value.data)]
        return [{"text": to_text(value.text)}]

    def _existing(self, name: str) -> bytes | None:
        reader = self.context.read_file
        if reader is None or not self.context.user_id:
            return None
        try:
            return reader(f"{self.context.user_id}/{name}")
        except (FileNotFoundError, OSError):
            return None

    # -- rendering -----------------------------------------------------------------------
    def _render(self, fmt: str, kind: str, value: Any, existing: bytes | None) -> tuple[bytes, bool]:
        """The bytes to write and whether they are appended (else they replace the file)."""
        rows = self._rows(kind, value)
        if fmt == "json":
            payload: Any = rows if kind == "Table" else rows[0]
            if existing is not None:  # append: the file becomes (or stays) a JSON list
                try:
                    before = json.loads(existing.decode("utf-8"))
                except ValueError:
                    raise ComponentError("Cannot append: the existing file is not valid JSON") from None
                before = before if isinstance(before, list) else [before]
                payload = before + (payload if isinstance(payload, list) else [payload])
            return json.dumps(payload, indent=2, ensure_ascii=False, default=str).encode("utf-8"), False
        if fmt == "csv":
            columns = list(dict.fromkeys(k for r in rows for k in r))
            buffer = io.StringIO()
            writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
            if existing is None or not existing.strip():
                writer.writeheader()
            for row in rows:
                writer.writerow({k: _cell(v) for k, v in row.items()})
            return buffer.getvalue().encode("utf-8"), existing is not None
        if fmt == "excel":
            return _xlsx(rows, existing), False
        if fmt == "html":
            body = _html(kind, rows)
            return body.encode("utf-8"), existing is not None
        text = _markdown(kind, rows) if fmt == "markdown" else _text(kind, value, rows)
        if existing is not None and existing.strip():
            text = "\n" + text
        return text.encode("utf-8"), existing is not None

    def save_to_file(self) -> Message:
        location = self._location()
        if location != "Local":
            raise ComponentError(f"Storage location '{location}' is not available here: only Local is supported")
        fmt = self._format()
        name = self._name(fmt)
        kind, value = self._value()
        writer = self.context.write_file
        if writer is None:
            raise ComponentError("Saving files is not available here (no file storage)")
        existing = self._existing(name) if self.append_mode else None
        content, append = self._render(fmt, kind, value, existing)
        if len(content) > MAX_BYTES:
            raise ComponentError(f"The file would be larger than {MAX_BYTES // (1024 * 1024)} MB")
        try:
            stored = writer(name, content, append)
        except (OSError, ValueError) as exc:
            raise ComponentError(f"Could not save the file: {exc}") from None
        # the reference's confirmation: its type names (DataFrame, Data, Message) and "appended to" on append
        noun = {"Table": "DataFrame", "JSON": "Data"}.get(kind, kind)
        text = f"{noun} {'appended to' if append else 'saved successfully as'} '{stored['path']}'"
        self.status = text
        return Message(text=text)


def _cell(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (dict, list)) else value


def _text(kind: str, value: Any, rows: list[dict[str, Any]]) -> str:
    if kind == "Message":
        return to_text(value.text)
    if kind == "JSON":
        return json.dumps(rows[0], indent=2, ensure_ascii=False, default=str)
    return "\n".join(json.dumps(r, ensure_ascii=False, default=str) for r in rows)


def _markdown(kind: str, rows: list[dict[str, Any]]) -> str:
    if kind == "Message":
        return to_text(rows[0]["text"])
    columns = list(dict.fromkeys(k for r in rows for k in r))
    if not columns:
        return ""

    def cell(v: Any) -> str:
        return to_text(_cell(v)).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def _html(kind: str, rows: list[dict[str, Any]]) -> str:
    if kind == "Message":
        return "<p>" + html.escape(to_text(rows[0]["text"])).replace("\n", "<br>") + "</p>\n"
    columns = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(to_text(_cell(r.get(c, ''))))}</td>" for c in columns) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"


def _xlsx(rows: list[dict[str, Any]], existing: bytes | None) -> bytes:
    from openpyxl import Workbook, load_workbook  # imported on use: start-up stays light

    if existing is not None:
        try:
            book = load_workbook(io.BytesIO(existing))
        except Exception:
            raise ComponentError("Cannot append: the existing file is not an Excel workbook") from None
        sheet = book.active
        header = [c.value for c in sheet[1]] if sheet.max_row >= 1 else []
    else:
        book = Workbook()
        sheet = book.active
        header = []
    columns = [c for c in header if c is not None]
    for key in dict.fromkeys(k for r in rows for k in r):
        if key not in columns:
            columns.append(key)
    for index, column in enumerate(columns, start=1):
        sheet.cell(row=1, column=index, value=column)
    for row in rows:
        sheet.append([_excel_cell(row.get(c)) for c in columns])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _excel_cell(value: Any) -> Any:
    if value is None or isinstance(value, (int, float, bool)):
        return value
    text = to_text(_cell(value))
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text  # no formula injection


COMPONENTS = [SaveToFile]
