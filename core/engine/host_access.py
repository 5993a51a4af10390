"""Component hardening: what a component may touch on this host.

``RunContext.hardening`` carries one :class:`Hardening` record built from the
settings (``SERVICE_RESTRICT_LOCAL_FILE_ACCESS``, ``SERVICE_FILE_SYSTEM_TOOL_ROOT``,
``SERVICE_ALLOW_CUSTOM_COMPONENTS``, ``SERVICE_BLOCK_CODE_INTERPRETER_COMPONENTS``,
``SERVICE_SANDBOX_*``, and the service's own ``SERVICE_DATABASE_URL``/``SERVICE_REDIS_URL``).
File, SQL and git components call its helpers before they open anything::

    path = self.context.hardening.local_path(user_path, user_id)     # LocalAccessDenied outside the workspace
    root = self.context.hardening.local_root(path, user_id)          # Directory's root
    root = self.context.hardening.file_system_root(path, user_id)    # File System tool's root (always confined)
    file = self.context.hardening.check_database_url(url, user_id)   # a file dialect's checked path, or None
    self.context.hardening.check_service_endpoint(host, port)        # never the service's database or Redis
    self.context.hardening.check_git_source(repo)                    # refuses local clones when restricted

Local files (issue 26): with ``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` on (the default) a run reaches only
its user's workspace ``<config_dir>/workspace/<user_id>`` (and, through the files plugin, the user's
stored files). Off, absolute paths elsewhere are allowed too, but :meth:`Hardening.refuse_never` (the one
deny check every helper calls) keeps ``/proc``, ``/sys``, ``/dev``, ``/etc``, ``/boot``, ``/run``,
``/root``, the service user's home, the config directory (other users' workspaces included), the
server's working directory and the ``SERVICE_ENV_FILE`` directory out, after decoding and resolving
symlinks. Relative paths are always read from the user's workspace.

Code-execution components run user code with :func:`core.sandbox.run_python`
and ``hardening.sandbox`` limits, after ``hardening.check_code_execution()``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from core.engine.errors import ComponentError
from core.engine.hostreach import DEFAULT_PORTS, ServiceEndpoint, endpoint_of_url, is_service_endpoint, never_paths
from core.engine.hostreach import within as _within
from core.sandbox import SandboxLimits, StdioSandbox

__all__ = ["CodeExecutionDenied", "Hardening", "LocalAccessDenied", "ServiceEndpoint", "contain"]

#: SQLAlchemy-style dialects whose "database" is a local file (or memory) rather than a server.
FILE_DIALECTS = ("sqlite", "duckdb", "sqlcipher", "pysqlite", "aiosqlite", "access", "mdb")
#: URL query options a network database connection may carry; others can name sockets or local files
#: (``host=/run/postgresql``, ``unix_socket``, ``service``, ``passfile``, ``sslkey``, ``read_default_file``...)
SAFE_DATABASE_OPTIONS = frozenset(
    {"sslmode", "application_name", "connect_timeout", "charset", "client_encoding", "target_session_attrs"}
)
RESTRICT = "SERVICE_RESTRICT_LOCAL_FILE_ACCESS"


class LocalAccessDenied(ComponentError):
    """A component tried to reach a local path, file database or local repository it may not."""


class CodeExecutionDenied(ComponentError):
    """A code-execution component is switched off on this server."""


def _default_never() -> tuple[Path, ...]:
    return never_paths(os.environ.get("SERVICE_ENV_FILE"), os.getcwd())


@dataclass(frozen=True)
class Hardening:
    """What components may do on this host (defaults: local files restricted, code execution off)."""

    restrict_local_files: bool = True
    #: the root of the per-user workspaces (``<config_dir>/workspace/<user_id>``)
    config_dir: Path | None = None
    #: the config directory: keys, database, stored files, other users' workspaces; never reachable
    private_dir: Path | None = None
    #: paths no component reaches, whatever the settings (see :func:`core.engine.hostreach.never_paths`)
    never: tuple[Path, ...] = field(default_factory=_default_never)
    #: SERVICE_FILE_SYSTEM_TOOL_ROOT: the admin's root for the File System tool (None: the user's workspace)
    tool_root: Path | None = None
    #: the service's own database and Redis: never a connector's target
    service_endpoints: tuple[ServiceEndpoint, ...] = ()
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
        config = getattr(settings, "resolved_config_dir", None)
        endpoints = [
            endpoint_of_url("database", getattr(settings, "resolved_database_url", None)),
            endpoint_of_url("Redis", getattr(settings, "redis_url", None)),
            endpoint_of_url("Redis", getattr(settings, "rate_limit_storage_uri", None)),
        ]
        tool_root = getattr(settings, "file_system_tool_root", None)
        return cls(
            restrict_local_files=bool(getattr(settings, "restrict_local_file_access", True)),
            config_dir=config,
            private_dir=config,
            tool_root=Path(tool_root).expanduser().resolve() if tool_root else None,
            service_endpoints=tuple(dict.fromkeys(e for e in endpoints if e is not None)),
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
    def workspace(self, user_id: str | None, *, create: bool = True) -> Path:
        """``<config_dir>/workspace/<user_id>`` resolved (created on demand); refused without a user."""
        if not user_id or not _SAFE_SEGMENT.match(str(user_id)) or str(user_id) in (".", ".."):
            raise LocalAccessDenied(f"Local files need a signed-in user here ({RESTRICT})")
        base = self._root() / "workspace" / str(user_id)
        if create:
            base.mkdir(parents=True, exist_ok=True)
        return base.resolve()

    def refuse_never(
        self, path: str | os.PathLike[str], user_id: str | None = None, *, directory: bool = False
    ) -> Path:
        """``path`` resolved, or :class:`LocalAccessDenied` when it is one of the never-reachable paths.

        The one deny check of every local-path helper: decoded (``%2e``), NUL refused, then both the
        normalised path and its symlink-resolved target are compared with :attr:`never` and the config
        directory; the run user's own workspace (inside the config directory) is the one exception. With
        ``directory``, a directory holding a never-reachable path (``/``, ``/home``) is refused too.
        """
        text = _decoded(os.fspath(path))
        if "\x00" in text:
            raise LocalAccessDenied("Invalid path")
        raw = Path(text).expanduser()
        normalised = Path(os.path.abspath(raw))
        resolved = raw.resolve()
        if self._own_workspace(resolved, user_id):
            return resolved
        for root in self._never_roots():
            hit = _within(normalised, root) or _within(resolved, root)
            if hit or (directory and (resolved in root.parents or normalised in root.parents)):
                raise LocalAccessDenied(
                    f"Access to '{path}' is refused: system paths and the service's private files are never "
                    "reachable by components"
                )
        return resolved

    def local_path(self, path: str | os.PathLike[str], user_id: str | None = None) -> Path:
        """The file ``path`` names for ``user_id``'s run (relative paths: in their workspace).

        Restricted (the default): only inside the user's workspace. Opened: anywhere
        :meth:`refuse_never` allows. Symlinks are followed before either check.
        """
        name = _decoded(os.fspath(path).strip())
        if self.restrict_local_files or not Path(name).expanduser().is_absolute():
            return self._in_workspace(name, user_id, path)
        return self.refuse_never(name, user_id)

    def local_root(self, path: str, user_id: str | None) -> Path:
        """The directory a local-directory component (Directory) may work in.

        Restricted: ``path`` inside ``<config_dir>/workspace/<user_id>`` (``.``/empty is the workspace).
        Opened: an absolute ``path`` :meth:`refuse_never` allows (not a directory holding a
        never-reachable one); relative paths stay in the workspace. ``..``, encoded variants, NUL bytes
        and symlinks out are refused either way.
        """
        name = _decoded(str(path or "").strip()) or "."
        if self.restrict_local_files or not Path(name).expanduser().is_absolute():
            return self._in_workspace(name, user_id, path)
        if "\x00" in name:
            raise LocalAccessDenied("Invalid path")
        if any(part == ".." for part in Path(name).parts):
            raise LocalAccessDenied(f"Access to '{path}' is refused: '..' is not allowed in a path")
        return self.refuse_never(name, user_id, directory=True)

    def file_system_root(self, path: str, user_id: str | None) -> Path:
        """The File System tool's root: ``path`` inside the user's workspace, whatever the local-file switch.

        With ``SERVICE_FILE_SYSTEM_TOOL_ROOT`` set, inside that admin-chosen root instead (never outside
        it, never a never-reachable path). An agent's model may be steered by a prompt the user does not
        control, so the tool gets no wider reach than this.
        """
        name = _decoded(str(path or "").strip()) or "."
        if self.tool_root is None:
            try:
                return contain(self.workspace(user_id), name)
            except LocalAccessDenied as exc:
                raise LocalAccessDenied(
                    f"{exc}: the File System tool works in your workspace only (SERVICE_FILE_SYSTEM_TOOL_ROOT)"
                ) from None
        try:
            target = contain(self.tool_root, name)
        except LocalAccessDenied as exc:
            raise LocalAccessDenied(f"{exc} (SERVICE_FILE_SYSTEM_TOOL_ROOT)") from None
        return self.refuse_never(target, user_id, directory=True)

    # -- databases ----------------------------------------------------------------------
    def check_database_url(self, url: str, user_id: str | None = None) -> Path | None:
        """Vet a connector's database URL; the checked file of an embedded-file dialect, else None.

        File dialects (``sqlite``, ``duckdb``...): memory is fine; a file only where :meth:`local_path`
        allows (the user's workspace by default; never the config directory); SQLite URI filenames
        (``file:``, ``?uri=true``) are refused. Network dialects: a host is required (no Unix sockets),
        only :data:`SAFE_DATABASE_OPTIONS` in the query, and never the service's own database or Redis.
        """
        text = (url or "").strip()
        scheme = text.split(":", 1)[0].lower()
        dialect, _, driver = scheme.partition("+")
        try:
            parts = urlsplit(text)
            options = [key.lower() for key, _value in parse_qsl(parts.query, keep_blank_values=True)]
            port = parts.port
        except ValueError:
            raise LocalAccessDenied("Invalid database URL") from None
        if dialect in FILE_DIALECTS or driver in FILE_DIALECTS:
            database = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
            if parts.netloc or "uri" in options or database.lower().startswith("file:"):
                raise LocalAccessDenied(f"Database URL form of '{dialect}' is refused: give a plain file path")
            if database in ("", ":memory:"):
                return None
            try:
                return self.local_path(database, user_id)
            except LocalAccessDenied as exc:
                raise LocalAccessDenied(f"Database file refused: {exc}") from None
        unsafe = [key for key in options if key not in SAFE_DATABASE_OPTIONS]
        if unsafe:
            raise LocalAccessDenied(
                f"Database connection option '{unsafe[0]}' is refused: it can reach local sockets or files"
            )
        if not parts.hostname:
            raise LocalAccessDenied("A database host is required: local sockets are refused")
        self.check_service_endpoint(parts.hostname, port or DEFAULT_PORTS.get(dialect, 5432))
        return None

    def check_service_endpoint(self, host: str, port: int) -> None:
        """Refuse ``host:port`` when it reaches the service's own database or Redis (names resolved)."""
        hit = is_service_endpoint(host, port, self.service_endpoints)
        if hit is not None:
            raise LocalAccessDenied(
                f"Connections to '{host}:{port}' are refused: it is the service's own {hit.name}, "
                "never reachable by components"
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
            raise LocalAccessDenied(f"Cloning the local repository '{text}' is refused ({RESTRICT})")

    # -- helpers ------------------------------------------------------------------------
    def _in_workspace(self, name: str, user_id: str | None, shown: object) -> Path:
        try:
            target = contain(self.workspace(user_id), name)
        except LocalAccessDenied as exc:
            why = "" if "signed-in" not in str(exc) else f"; {exc}"
            raise LocalAccessDenied(
                f"Access to '{shown}' is refused: local files are limited to your workspace and stored files "
                f"({RESTRICT}){why}"
            ) from None
        return target

    def _own_workspace(self, resolved: Path, user_id: str | None) -> bool:
        if not user_id or not _SAFE_SEGMENT.match(str(user_id)) or self._base() is None:
            return False
        try:
            return _within(resolved, self.workspace(user_id, create=False))
        except LocalAccessDenied:
            return False

    def _never_roots(self) -> tuple[Path, ...]:
        private = [Path(d).resolve() for d in (self.private_dir, self.config_dir) if d is not None]
        return (*self.never, *private)

    def _base(self) -> Path | None:
        base = self.config_dir if self.config_dir is not None else self.private_dir
        return Path(base) if base is not None else None

    def _root(self) -> Path:
        base = self._base()
        if base is None:
            raise LocalAccessDenied("Local file access is restricted and no config directory is set")
        return base.resolve()


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
