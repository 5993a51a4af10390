"""Read File (``File``): the text of the user's uploaded files, by path or id.

Files are read only through ``RunContext.read_file``, which the run service
wires to the ``read_user_file`` hook (the files plugin answers with the
caller's own stored files; local paths only when
``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` is off, never inside the config
directory). Without it (an executor with no storage) the component refuses.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import mimetypes
import re
from typing import Any

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.documents import SUPPORTED_EXTENSIONS, UnsupportedDocument, extension, extract_text
from core.engine.inputs import (
    BoolInput,
    DropdownInput,
    FileInput,
    HandleInput,
    IntInput,
    MessageTextInput,
    SecretStrInput,
    SortableListInput,
    StrInput,
)
from core.engine.types import to_text

_LOCAL = [{"icon": "hard-drive", "name": "Local"}]


class ReadFile(Component):
    key = "File"
    display_name = "Read File"
    display_names = {"en": "Read File", "fr": "Lire un fichier", "de": "Datei lesen", "es": "Leer archivo"}
    description = "Loads content from one or more files (text, Markdown, CSV, JSON, PDF, DOCX)."
    icon = "file-text"
    category = "files_and_knowledge"
    inputs = [
        SortableListInput("storage_location", "Storage Location", _LOCAL, advanced=True, options=_LOCAL),
        FileInput(
            "path",
            "Files",
            "",
            is_list=True,
            info=f"Supported file extensions: {', '.join(sorted(SUPPORTED_EXTENSIONS))}",
            fileTypes=sorted(SUPPORTED_EXTENSIONS),
        ),
        HandleInput(
            "file_path",
            "Server File Path",
            "",
            input_types=["Data", "JSON", "Message"],
            is_list=True,
            advanced=True,
            info="Data with a 'file_path' property, or Messages whose text is a stored file's path or id.",
        ),
        StrInput("separator", "Separator", "\n\n", advanced=True, info="Placed between the texts of several files."),
        BoolInput("silent_errors", "Silent Errors", False, advanced=True, info="Skip unreadable files."),
        BoolInput(
            "delete_server_file_after_processing",
            "Delete Server File After Processing",
            True,
            advanced=True,
            info="Kept for compatibility: stored files are never deleted by a run.",
        ),
        BoolInput("ignore_unsupported_extensions", "Ignore Unsupported Extensions", True, advanced=True),
        BoolInput("ignore_unspecified_files", "Ignore Unspecified Files", False, advanced=True),
        StrInput("file_path_str", "File Path", "", advanced=True, show=False),
        SecretStrInput("aws_access_key_id", "AWS Access Key ID", "", required=True, show=False, load_from_db=True),
        SecretStrInput("aws_secret_access_key", "AWS Secret Key", "", required=True, show=False, load_from_db=True),
        StrInput("bucket_name", "S3 Bucket Name", "", required=True, show=False),
        StrInput("aws_region", "AWS Region", "", show=False),
        StrInput("s3_file_key", "S3 File Key", "", required=True, show=False),
        SecretStrInput(
            "service_account_key", "GCP Credentials Secret Key", "", required=True, show=False, load_from_db=True
        ),
        StrInput("file_id", "Google Drive File ID", "", required=True, show=False),
        BoolInput("advanced_mode", "Advanced Parser", False, info="Not available here: the standard parser is used."),
        DropdownInput("pipeline", "Pipeline", "standard", options=["standard", "vlm"], advanced=True),
        DropdownInput("ocr_engine", "OCR Engine", "easyocr", options=["None", "easyocr"], advanced=True, show=False),
        StrInput("md_image_placeholder", "Image placeholder", "<!-- image -->", advanced=True, show=False),
        StrInput("md_page_break_placeholder", "Page break placeholder", "", advanced=True, show=False),
        MessageTextInput("doc_key", "Doc Key", "doc", advanced=True, show=False),
        BoolInput("use_multithreading", "[Deprecated] Use Multithreading", True, advanced=True),
        IntInput("concurrency_multithreading", "Processing Concurrency", 1, advanced=True),
        BoolInput("markdown", "Markdown Export", False, show=False),
    ]
    # The reference shows these by file type (one CSV/XLSX: "Structured Content" table; one JSON: its object;
    # several files: the "Files" table; "File Path" beside "Raw Content"): a flow saved on it keeps the
    # output it connected, so each runs here; the catalog node shows "Raw Content", and as a tool the
    # component stays one tool (Raw Content)
    outputs = [
        Output("message", "Raw Content", "load_files_message", ["Message"]),
        Output("dataframe", "Files", "load_files_dataframe", ["Table"], tool_mode=False),
        Output("json", "Structured Content", "load_files_json", ["JSON"], tool_mode=False),
        Output("path", "File Path", "load_files_path", ["Message"], tool_mode=False),
    ]
    frontend_outputs = ("message",)

    def active_outputs(self) -> list[str] | None:
        return ["message"]

    def _refs(self) -> list[str]:
        refs: list[str] = []
        for value in _as_list(self.path) + _as_list(self.file_path) + _as_list(self.file_path_str):
            if isinstance(value, Message):
                text = to_text(value.text)
            elif isinstance(value, Data):
                text = to_text(value.data.get("file_path") or value.data.get("path") or value.get_text())
            else:
                text = to_text(value)
            if text.strip():
                refs.append(text.strip())
        return refs

    def load_files(self) -> list[Data]:
        refs = self._refs()
        if not refs:
            if self.ignore_unspecified_files:
                return []
            raise ComponentError("No files to read: choose a file or connect a file path.")
        reader = self.context.read_file
        if reader is None:
            raise ComponentError("Reading files from the server is not available here.")
        if hasattr(self, "_rows"):
            return self._rows
        rows = []
        for ref in refs:
            if extension(ref) not in SUPPORTED_EXTENSIONS and extension(ref) and self.ignore_unsupported_extensions:
                self.log(f"Skipped {ref}: unsupported extension")
                continue
            try:
                content = reader(ref)
                text = extract_text(ref, content)
            except (FileNotFoundError, UnsupportedDocument, OSError) as exc:
                if self.silent_errors:
                    self.log(f"Skipped {ref}: {exc}")
                    continue
                message = f"File not found: {ref}" if isinstance(exc, FileNotFoundError) else str(exc)
                raise ComponentError(message) from None
            rows.append(Data({"file_path": ref, "text": text, "file_size": len(content)}))
        self._rows = rows
        return rows

    def load_files_message(self) -> Message:
        """The files' texts joined by the separator; beside the text, the reference's metadata of the first
        file (``file_path``, ``filename``, ``file_size``, ``mimetype``) and, for several files, each file's
        own text (``source_files``: ``file_path`` and ``text``)."""
        rows = self.load_files()
        sep = to_text(self.separator) or "\n\n"
        text = sep.join(to_text(r.get_text()) for r in rows)
        self.status = text
        message = Message(text=text)
        if rows:
            message.data.update(file_metadata(rows[0]))
        if len(rows) > 1:
            sources: dict[str, dict[str, str]] = {}
            for row in rows:
                path, part = to_text(row.get("file_path")), to_text(row.get_text())
                if path in sources:
                    sources[path]["text"] += sep + part
                else:
                    sources[path] = {"file_path": path, "text": part}
            message.data["source_files"] = list(sources.values())
        return message

    def load_files_dataframe(self) -> DataFrame:
        """One CSV or XLSX file: its rows (the reference's "Structured Content"); otherwise one row per file
        with its ``file_path`` and ``text`` (the reference's "Files")."""
        rows = self.load_files()
        if len(rows) == 1 and extension(to_text(rows[0].get("file_path"))) in ("csv", "xlsx"):
            ref = to_text(rows[0].get("file_path"))
            reader = self.context.read_file
            assert reader is not None  # load_files refused without one
            table = structured_rows(ref, reader(ref), to_text(rows[0].get_text()))
            self.status = table
            return table
        table = DataFrame([{"file_path": r.get("file_path"), "text": r.get_text()} for r in rows])
        self.status = table
        return table

    def load_files_json(self) -> Data:
        """The first file's JSON object (a non-object value as ``{"value": text}``, as the reference)."""
        rows = self.load_files()
        text = to_text(rows[0].get_text()) if rows else ""
        try:
            value = json.loads(text)
        except ValueError:
            try:
                value = ast.literal_eval(text) if len(text) <= 100_000 else None
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                value = None
        data = Data(value if isinstance(value, dict) else {"value": text})
        self.status = data
        return data

    def load_files_path(self) -> Message:
        """The files' stored paths, one a line."""
        text = "\n".join(to_text(r.get("file_path")) for r in self.load_files())
        self.status = text
        return Message(text=text)


def file_metadata(row: Data) -> dict[str, Any]:
    """The reference's metadata of a read file: path, name, size in bytes and MIME type."""
    path = to_text(row.get("file_path"))
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return {
        "file_path": path,
        "filename": name,
        "file_size": row.get("file_size", 0),
        "mimetype": mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream",
    }


def structured_rows(name: str, content: bytes, text: str) -> DataFrame:
    """A CSV's (header row, then records; numbers as numbers) or an XLSX's first sheet's rows."""
    if extension(name) == "xlsx":
        from openpyxl import load_workbook

        sheet = load_workbook(io.BytesIO(content), read_only=True, data_only=True).worksheets[0]
        values = [list(r) for r in sheet.iter_rows(values_only=True)]
        if not values:
            return DataFrame([])
        header = [to_text(h) for h in values[0]]
        return DataFrame([dict(zip(header, r, strict=False)) for r in values[1:]], columns=header)
    reader = csv.reader(io.StringIO(text))
    header = next(reader, [])
    return DataFrame([{h: _number(v) for h, v in zip(header, r, strict=False)} for r in reader if r], columns=header)


def _number(value: str) -> Any:
    """A CSV cell as pandas reads it: an int or a float when it is one, else the text (empty: None)."""
    if value == "":
        return None
    if _INT.fullmatch(value):
        return int(value)
    if _FLOAT.fullmatch(value):
        return float(value)
    return value


_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _as_list(value: Any) -> list[Any]:
    if value in (None, ""):
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


COMPONENTS = [ReadFile]
