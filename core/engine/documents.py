"""Text out of a document's bytes, by file type: what file and knowledge components read.

Plain-text formats are decoded as UTF-8 (invalid bytes replaced); PDF goes
through pypdf and DOCX through python-docx, imported lazily so that the core
does not depend on them (the distributions that read documents, the files
bundle and the knowledge plugin, install them).
"""

from __future__ import annotations

import io

__all__ = ["SUPPORTED_EXTENSIONS", "TEXT_EXTENSIONS", "UnsupportedDocument", "extension", "extract_text"]

TEXT_EXTENSIONS = frozenset(
    {"txt", "md", "mdx", "csv", "json", "yaml", "yml", "xml", "html", "htm", "py", "sh", "sql", "js", "ts", "tsx"}
)
SUPPORTED_EXTENSIONS = TEXT_EXTENSIONS | {"pdf", "docx"}


class UnsupportedDocument(ValueError):
    """The file's type cannot be read as text."""


def extension(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base else ""


def extract_text(name: str, content: bytes) -> str:
    """The text of ``content``, read as the type its ``name``'s extension (or its magic bytes) says."""
    ext = extension(name)
    if content.startswith(b"%PDF-"):
        ext = "pdf"
    elif ext not in SUPPORTED_EXTENSIONS and content.startswith(b"PK\x03\x04") and b"word/" in content[:4096]:
        ext = "docx"
    if ext == "pdf":
        return _pdf(content)
    if ext == "docx":
        return _docx(content)
    if ext in TEXT_EXTENSIONS or (ext == "" and b"\x00" not in content[:8192]):
        return content.decode("utf-8", "replace")
    raise UnsupportedDocument(f"Unsupported file type: {name}")


def _pdf(content: bytes) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise UnsupportedDocument("Reading PDF files needs the 'pypdf' package") from exc
    try:
        reader = PdfReader(io.BytesIO(content))
        return "\n\n".join((page.extract_text() or "").strip() for page in reader.pages).strip()
    except (PdfReadError, ValueError, KeyError) as exc:
        raise UnsupportedDocument(f"Invalid PDF file: {exc}") from None


def _docx(content: bytes) -> str:
    try:
        import docx
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise UnsupportedDocument("Reading DOCX files needs the 'python-docx' package") from exc
    try:
        document = docx.Document(io.BytesIO(content))
    except Exception as exc:  # python-docx raises zipfile/KeyError/ValueError variants on broken files
        raise UnsupportedDocument(f"Invalid DOCX file: {exc}") from None
    parts = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            parts.append("\t".join(cell.text for cell in row.cells))
    return "\n".join(parts).strip()
