"""Read File (``File``): the text of the user's uploaded files, by path or id.

Files are read only through ``RunContext.read_file``, which the run service
wires to the ``read_user_file`` hook (the files plugin answers with the
caller's own stored files; local paths only when
``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` is off, never inside the config
directory). Without it (an executor with no storage) the component refuses.
"""

from __future__ import annotations

from typing import Any

from core.engine import Component, ComponentError, Data, Message, Output
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
    outputs = [Output("message", "Raw Content", "load_files_message", ["Message"])]

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
        rows = []
        for ref in refs:
            if extension(ref) not in SUPPORTED_EXTENSIONS and extension(ref) and self.ignore_unsupported_extensions:
                self.log(f"Skipped {ref}: unsupported extension")
                continue
            try:
                text = extract_text(ref, reader(ref))
            except (FileNotFoundError, UnsupportedDocument, OSError) as exc:
                if self.silent_errors:
                    self.log(f"Skipped {ref}: {exc}")
                    continue
                message = f"File not found: {ref}" if isinstance(exc, FileNotFoundError) else str(exc)
                raise ComponentError(message) from None
            rows.append(Data({"text": text, "file_path": ref}))
        return rows

    def load_files_message(self) -> Message:
        rows = self.load_files()
        text = to_text(self.separator).join(to_text(r.get_text()) for r in rows)
        self.status = text
        return Message(text=text)


def _as_list(value: Any) -> list[Any]:
    if value in (None, ""):
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


COMPONENTS = [ReadFile]
