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
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from core.engine.errors import ComponentError
from core.sandbox import SandboxLimits

__all__ = ["CodeExecutionDenied", "Hardening", "LocalAccessDenied"]

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
    allow_code_execution: bool = False
    block_code_interpreter: bool = False
    sandbox: SandboxLimits = field(default_factory=SandboxLimits)

    @classmethod
    def from_settings(cls, settings: object) -> Hardening:
        """From :class:`core.settings.Settings` (duck-typed to keep the engine free of core imports)."""
        limits = SandboxLimits(
            cpu_seconds=int(getattr(settings, "sandbox_cpu_seconds", 5)),
            wall_seconds=float(getattr(settings, "sandbox_wall_seconds", 10)),
            memory_mb=int(getattr(settings, "sandbox_memory_mb", 256)),
            output_bytes=int(getattr(settings, "sandbox_output_bytes", 1_000_000)),
            processes=int(getattr(settings, "sandbox_processes", 16)),
        )
        restrict = bool(getattr(settings, "restrict_local_file_access", False))
        return cls(
            restrict_local_files=restrict,
            config_dir=getattr(settings, "resolved_config_dir", None) if restrict else None,
            allow_code_execution=bool(getattr(settings, "allow_custom_components", False)),
            block_code_interpreter=bool(getattr(settings, "block_code_interpreter_components", False)),
            sandbox=limits,
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
