"""Component hardening: what a component may touch on this host.

``RunContext.hardening`` carries one :class:`Hardening` record built from the
settings (``SERVICE_RESTRICT_LOCAL_FILE_ACCESS``, ``SERVICE_ALLOW_CUSTOM_COMPONENTS``,
``SERVICE_BLOCK_CODE_INTERPRETER_COMPONENTS``, ``SERVICE_SANDBOX_*``). File, SQL
and git components call its helpers before they open anything::

    path = self.context.hardening.local_path(user_path)        # LocalAccessDenied outside the config dir
    self.context.hardening.check_database_url(url)             # refuses sqlite:/duckdb: files when restricted
    self.context.hardening.check_git_source(repo)              # refuses local clones when restricted

Code-execution components run user code with :func:`core.sandbox.run_python`
and ``hardening.sandbox`` limits, after ``hardening.check_code_execution()``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from core.engine.errors import ComponentError
from core.sandbox import SandboxLimits, StdioSandbox

__all__ = ["CodeExecutionDenied", "Hardening", "LocalAccessDenied", "contain"]

#: SQLAlchemy-style dialects whose "database" is a local file (or memory) rather than a server.
FILE_DIALECTS = ("sqlite", "duckdb", "sqlcipher", "pysqlite", "aiosqlite", "access", "mdb")


class LocalAccessDenied(ComponentError):
    """A component tried to reach a local path, file database or local repository it may not."""


class CodeExecutionDenied(ComponentError):
    """A code-execution component is switched off on this server."""


@dataclass(frozen=True)
class Hardening:
    """What components may do on this host (defaults: nothing restricted but code execution)."""

    restrict_local_files: bool = False
    config_dir: Path | None = None
    #: the config directory whether or not restricted: keys, database, stored files; never a local root
    private_dir: Path | None = None
    allow_code_execution: bool = False
    block_code_interpreter: bool = False
    sandbox: SandboxLimits = field(default_factory=SandboxLimits)
    #: how stdio MCP servers start (``SERVICE_SANDBOX_STDIO_*``; :func:`core.sandbox.stdio_server`)
    stdio: StdioSandbox = field(default_factory=StdioSandbox)

    @classmethod
    def from_settings(cls, settings: object) -> Hardening:
        """From :class:`core.settings.Settings` (duck-typed to keep the engine free of core imports)."""
        limits = SandboxLimits(
            cpu_seconds=int(getattr(settings, "sandbox_cpu_seconds", 5)),
            wall_seconds=float(getattr(settings, "sandbox_wall_seconds", 10)),
            memory_mb=int(getattr(settings, "sandbox_memory_mb", 256)),
            output_bytes=int(getattr(settings, "sandbox_output_bytes", 1_000_000)),
            processes=int(getattr(settings, "sandbox_processes", 16)),
            disk_mb=int(getattr(settings, "sandbox_disk_mb", 64)),
        )
        restrict = bool(getattr(settings, "restrict_local_file_access", False))
        return cls(
            restrict_local_files=restrict,
            config_dir=getattr(settings, "resolved_config_dir", None) if restrict else None,
            private_dir=getattr(settings, "resolved_config_dir", None),
            allow_code_execution=bool(getattr(settings, "allow_custom_components", False)),
            block_code_interpreter=bool(getattr(settings, "block_code_interpreter_components", False)),
            sandbox=limits,
            stdio=StdioSandbox.from_settings(settings),
        )

    # -- code execution -------------------------------------------------------------
    def code_execution_refusal(self) -> str | None:
        """Why code-execution components may not run here, or None."""
        if self.block_code_interpreter:
            return "Code-execution components are blocked on this server (SERVICE_BLOCK_CODE_INTERPRETER_COMPONENTS)"
        if not self.allow_code_execution:
            return "Code-execution components are disabled on this server (SERVICE_ALLOW_CUSTOM_COMPONENTS is false)"
        return None

    def check_code_execution(self) -> None:
        reason = self.code_execution_refusal()
        if reason:
            raise CodeExecutionDenied(reason)

    # -- local files ------------------------------------------------------------------
    def local_path(self, path: str | os.PathLike[str]) -> Path:
        """``path`` resolved; with restriction on, only inside the config directory (symlinks followed)."""
        raw = Path(path).expanduser()
        if not self.restrict_local_files:
            return raw
        root = self._root()
        resolved = (root / raw).resolve() if not raw.is_absolute() else raw.resolve()
        if resolved != root and root not in resolved.parents:
            raise LocalAccessDenied(
                f"Access to '{path}' is refused: local file access is restricted to the config directory "
                "(SERVICE_RESTRICT_LOCAL_FILE_ACCESS)"
            )
        return resolved

    def local_root(self, path: str, user_id: str | None) -> Path:
        """The directory a local-directory component (Directory, File System) may work in.

        With restriction on: ``<config_dir>/workspace/<user_id>`` (created on demand), and ``path`` resolved
        inside it (``.``/empty is the workspace itself); without a user nothing. With it off: ``path`` as given
        (relative to the server's working directory, the reference's default ``.``), never inside the config
        directory. ``..``, encoded variants, NUL bytes and symlinks out are refused either way.
        """
        name = _decoded(str(path or "").strip()) or "."
        if self.restrict_local_files:
            if not user_id or not _SAFE_SEGMENT.match(str(user_id)):
                raise LocalAccessDenied(
                    "Local directories need a signed-in user here (SERVICE_RESTRICT_LOCAL_FILE_ACCESS)"
                )
            base = self._root() / "workspace" / str(user_id)
            base.mkdir(parents=True, exist_ok=True)
            return contain(base, name)
        if "\x00" in name:
            raise LocalAccessDenied("Invalid path")
        if any(part == ".." for part in Path(name).parts):
            raise LocalAccessDenied(f"Access to '{path}' is refused: '..' is not allowed in a path")
        resolved = Path(name).expanduser().resolve()
        private = Path(self.private_dir).resolve() if self.private_dir is not None else None
        if private is not None and (resolved == private or private in resolved.parents or resolved in private.parents):
            raise LocalAccessDenied(f"Access to '{path}' is refused: it holds the service's private files")
        return resolved

    def check_database_url(self, url: str) -> None:
        """Refuse embedded-file database dialects (``sqlite:///...``, ``duckdb:...``) when restricted."""
        if not self.restrict_local_files:
            return
        scheme = (url or "").split(":", 1)[0].lower()
        dialect = scheme.split("+", 1)[0]
        driver = scheme.split("+", 1)[1] if "+" in scheme else ""
        if dialect in FILE_DIALECTS or driver in FILE_DIALECTS:
            raise LocalAccessDenied(
                f"Database dialect '{dialect}' reads local files and is refused (SERVICE_RESTRICT_LOCAL_FILE_ACCESS)"
            )

    def check_git_source(self, source: str) -> None:
        """Refuse cloning a local repository (a path or ``file://``) when restricted."""
        if not self.restrict_local_files:
            return
        text = (source or "").strip()
        scheme = urlsplit(text).scheme.lower()
        remote = scheme in ("http", "https", "ssh", "git") or (
            "@" in text.split("/", 1)[0] and ":" in text  # scp-like user@host:path
        )
        if not remote:
            raise LocalAccessDenied(
                f"Cloning the local repository '{text}' is refused (SERVICE_RESTRICT_LOCAL_FILE_ACCESS)"
            )

    def _root(self) -> Path:
        if self.config_dir is None:
            raise LocalAccessDenied("Local file access is restricted and no config directory is set")
        return Path(self.config_dir).resolve()


_SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")


def _decoded(name: str) -> str:
    """``name`` URL-decoded until it no longer changes (``%2e%2e``, ``%252e%252e`` are ``..``)."""
    for _ in range(4):
        decoded = unquote(name)
        if decoded == name:
            return name
        name = decoded
    raise LocalAccessDenied("Invalid path: encoded too many times")


def contain(root: Path, user_path: str) -> Path:
    """``root / user_path`` resolved, or :class:`LocalAccessDenied` when it leaves ``root``.

    Decoded first (``%2e%2e``), then NUL bytes, backslashes, absolute paths (unless already inside
    ``root``) and ``..`` segments are refused, and the resolved path (symlinks followed) must lie under
    the resolved ``root``.
    """
    base = Path(root).resolve()
    name = _decoded(str(user_path or "").strip()) or "."
    if "\x00" in name or "\\" in name:
        raise LocalAccessDenied(f"Access to '{user_path}' is refused: invalid path")
    if any(part == ".." for part in name.split("/")):
        raise LocalAccessDenied(f"Access to '{user_path}' is refused: '..' is not allowed in a path")
    candidate = Path(name)
    if candidate.is_absolute() or (len(name) > 1 and name[1] == ":"):
        if not (candidate == base or base in candidate.parents):
            raise LocalAccessDenied(f"Access to '{user_path}' is refused: it is outside the root directory")
        target = candidate.resolve()
    else:
        target = (base / candidate).resolve()
    if target != base and base not in target.parents:
        raise LocalAccessDenied(f"Access to '{user_path}' is refused: it leads outside the root directory")
    return target
