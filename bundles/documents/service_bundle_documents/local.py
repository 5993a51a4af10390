"""Local-directory components: Directory (``Directory``) and File System (``FileSystemTool``).

Directory reads one root from ``RunContext.hardening.local_root``: with
``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` on (the default), inside the run user's own workspace
``<config_dir>/workspace/<user_id>`` (relative paths, ``.`` included, are always read there); with it
off, an absolute path too, never a never-reachable one (``/etc``, ``/proc``, home, the config and
working directories) or a directory holding one. The File System tool (an agent's, so possibly steered
by a prompt the user does not control) works in ``hardening.file_system_root``: the user's workspace
whatever that switch says, or the admin's ``SERVICE_FILE_SYSTEM_TOOL_ROOT``. Every path inside the root goes through
:func:`core.engine.host_access.contain` (``..``, encoded variants, absolute paths elsewhere,
NUL bytes, symlinks out: refused).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from core.engine import Component, ComponentError, Data, DataFrame, Output
from core.engine.documents import TEXT_EXTENSIONS, UnsupportedDocument, extension, extract_text
from core.engine.host_access import LocalAccessDenied, contain
from core.engine.inputs import BoolInput, DropdownInput, IntInput, MessageTextInput, StrInput
from core.engine.tools import Tool
from core.engine.types import to_text

DIRECTORY_TYPES = [
    "csv", "json", "pdf", "txt", "md", "mdx", "yaml", "yml", "xml", "html", "htm", "docx",
    "py", "sh", "sql", "js", "ts", "tsx",
]  # fmt: skip
MAX_FILES = 1000  # files one Directory run reads at most
MAX_FILE_BYTES = 20 * 1024 * 1024  # larger files are skipped (or an error without silent_errors)
MAX_TOOL_BYTES = 1024 * 1024  # what one File System tool call reads or writes at most
MAX_LISTING = 500  # entries one list call answers at most


def _root(component: Component, path: Any, *, tool: bool = False) -> Path:
    ctx = component.context
    if tool:  # the File System tool: the user's workspace (or SERVICE_FILE_SYSTEM_TOOL_ROOT) whatever else is open
        root = ctx.hardening.file_system_root(to_text(path), ctx.user_id)
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = ctx.hardening.local_root(to_text(path), ctx.user_id)
    if not root.is_dir():
        raise ComponentError(f"Directory not found: {to_text(path) or '.'}")
    return root


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


class Directory(Component):
    key = "Directory"
    display_name = "Directory"
    display_names = {"en": "Directory", "fr": "Répertoire", "de": "Verzeichnis", "es": "Directorio"}
    description = "Recursively load files from a directory."
    icon = "folder"
    category = "files_and_knowledge"
    legacy = True
    inputs = [
        MessageTextInput(
            "path",
            "Path",
            ".",
            info="The directory to load (restricted servers: inside your workspace of the config directory).",
        ),
        DropdownInput(
            "types",
            "File Types",
            [],
            options=DIRECTORY_TYPES,
            is_list=True,
            info="File types to load (all text types when none is chosen).",
        ),
        IntInput("depth", "Depth", 0, info="How many levels below the directory to load (0: no limit)."),
        IntInput("max_concurrency", "Max Concurrency", 2, advanced=True, info="Kept for compatibility."),
        BoolInput("load_hidden", "Load Hidden", False, advanced=True, info="Load files and folders starting with '.'."),
        BoolInput("recursive", "Recursive", False, advanced=True, info="Load files in sub-directories."),
        BoolInput("silent_errors", "Silent Errors", False, advanced=True, info="Skip unreadable files."),
        BoolInput("use_multithreading", "Use Multithreading", False, advanced=True, info="Kept for compatibility."),
    ]
    outputs = [Output("dataframe", "Files", "as_dataframe", ["Table"])]

    def _types(self) -> set[str]:
        chosen = self.types if isinstance(self.types, list) else [self.types] if self.types else []
        wanted = {to_text(t).strip().lower().lstrip(".") for t in chosen if to_text(t).strip()}
        unknown = wanted - set(DIRECTORY_TYPES)
        if unknown:
            raise ComponentError(f"Unsupported file types: {', '.join(sorted(unknown))}")
        return wanted or set(TEXT_EXTENSIONS)

    def _paths(self, root: Path) -> list[Path]:
        types = self._types()
        depth = int(self.depth or 0)
        if depth < 0:
            raise ComponentError("'depth' must be 0 or more")
        found: list[Path] = []
        for current, dirs, files in os.walk(root, followlinks=False):
            here = Path(current)
            rel_dir = here.relative_to(root)
            level = len(rel_dir.parts)
            dirs[:] = sorted(
                d
                for d in dirs
                if (self.load_hidden or not d.startswith(".")) and self.recursive and (depth == 0 or level + 1 <= depth)
            )
            for name in sorted(files):
                if not self.load_hidden and name.startswith("."):
                    continue
                if extension(name) not in types:
                    continue
                found.append(here / name)
                if len(found) > MAX_FILES:
                    raise ComponentError(f"The directory holds more than {MAX_FILES} matching files")
        return found

    def load_directory(self) -> list[Data]:
        root = _root(self, self.path)
        rows: list[Data] = []
        for path in self._paths(root):
            self.context.check()
            relative = path.relative_to(root)
            try:
                real = contain(root, relative.as_posix())  # a symlink out of the root is refused here
                if not real.is_file():
                    raise OSError("not a regular file")
                if real.stat().st_size > MAX_FILE_BYTES:
                    raise OSError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
                text = extract_text(path.name, real.read_bytes())
            except (LocalAccessDenied, UnsupportedDocument, OSError) as exc:
                if self.silent_errors:
                    self.log(f"Skipped {relative.as_posix()}: {exc}")
                    continue
                raise ComponentError(f"Could not read {relative.as_posix()}: {exc}") from None
            rows.append(Data({"text": text, "file_path": str(path)}))
        return rows

    def as_dataframe(self) -> DataFrame:
        frame = DataFrame(self.load_directory())
        self.status = f"{len(frame.rows)} files"
        return frame


class FileSystemTool(Component):
    key = "FileSystemTool"
    display_name = "File System"
    display_names = {"en": "File System", "fr": "Système de fichiers", "de": "Dateisystem", "es": "Sistema de archivos"}
    description = "Tools to list, read and write files under one root directory."
    icon = "hard-drive"
    category = "files_and_knowledge"
    inputs = [
        StrInput(
            "root_path",
            "Root Path",
            "",
            info="The directory the tools work in, inside your workspace (empty: the workspace itself).",
        ),
        BoolInput("read_only", "Read Only", False, advanced=True, info="Offer only the list and read tools."),
        StrInput("tool_mode_trigger", "Tool Mode Trigger", "", show=False),
    ]
    outputs = [Output("metadata", "Metadata", "build_metadata", ["JSON"])]

    def _root(self) -> Path:
        return _root(self, self.root_path, tool=True)

    def build_metadata(self) -> Data:
        root = self._root()
        tools = [t.name for t in self.as_tools()]
        result = Data({"root_path": str(root), "read_only": bool(self.read_only), "tools": tools})
        self.status = result
        return result

    # -- the tools ---------------------------------------------------------------------
    def list_files(self, path: str = ".") -> list[dict[str, Any]]:
        root = self._root()
        target = contain(root, path)
        if not target.is_dir():
            raise ComponentError(f"Not a directory: {path}")
        out: list[dict[str, Any]] = []
        for item in sorted(target.iterdir()):
            try:
                contain(root, item.relative_to(root).as_posix())
            except LocalAccessDenied:
                continue  # a symlink leading out of the root is not shown
            kind = "directory" if item.is_dir() else "file"
            out.append({"path": item.relative_to(root).as_posix(), "type": kind, "size": item.stat().st_size})
            if len(out) >= MAX_LISTING:
                break
        return out

    def read_file(self, path: str) -> str:
        target = contain(self._root(), path)
        if not target.is_file():
            raise ComponentError(f"File not found: {path}")
        if target.stat().st_size > MAX_TOOL_BYTES:
            raise ComponentError(f"File is larger than {MAX_TOOL_BYTES // 1024} KB: {path}")
        try:
            return extract_text(target.name, target.read_bytes())
        except UnsupportedDocument as exc:
            raise ComponentError(str(exc)) from None

    def write_file(self, path: str, content: str) -> str:
        if self.read_only:
            raise ComponentError("This file system is read-only")
        root = self._root()
        target = contain(root, path)
        if target == root or target.is_dir():
            raise ComponentError(f"Not a file path: {path}")
        data = to_text(content).encode("utf-8")
        if len(data) > MAX_TOOL_BYTES:
            raise ComponentError(f"Content is larger than {MAX_TOOL_BYTES // 1024} KB")
        target.parent.mkdir(parents=True, exist_ok=True)
        contain(root, target.parent.relative_to(root).as_posix())
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".write-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)  # readers never see half a file
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return f"Wrote {len(data)} bytes to {target.relative_to(root).as_posix()}"

    def as_tools(self) -> list[Tool]:
        def schema(**props: str) -> dict[str, Any]:
            return {
                "type": "object",
                "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
                "required": [k for k in props if k != "path" or "content" in props or len(props) == 1],
            }

        tools = [
            Tool(
                "list_files",
                "List the files and directories at a path relative to the root ('.' is the root).",
                self.list_files,
                {"type": "object", "properties": {"path": {"type": "string", "description": "Relative path"}}},
                source=self.vertex.id if self.vertex else "",
            ),
            Tool(
                "read_file",
                "Read a text file (path relative to the root).",
                self.read_file,
                schema(path="Relative path of the file"),
                source=self.vertex.id if self.vertex else "",
            ),
        ]
        if not self.read_only:
            tools.append(
                Tool(
                    "write_file",
                    "Write text to a file (path relative to the root; replaces it, creates folders as needed).",
                    self.write_file,
                    schema(path="Relative path of the file", content="The text to write"),
                    source=self.vertex.id if self.vertex else "",
                )
            )
        return tools


COMPONENTS = [Directory, FileSystemTool]
