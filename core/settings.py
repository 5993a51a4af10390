"""The core's ``SERVICE_*`` settings, and the parser every plugin's settings section uses.

The core keeps only what the core reads: storage and processes, the secret,
CORS, rate-limit storage, egress (SSRF) rules, the sandbox and component
hardening, request bodies and the run service's limits. Each plugin declares
its own settings through ``register_settings`` (same parser, same errors; see
docs/hooks.md and docs/architecture.md).

Values come from, in rising priority: the defaults below, an optional
``.env`` file (``SERVICE_ENV_FILE``, else ``./.env``), the process
environment, and the ``config`` mapping given to :func:`core.app.create_app`
(keys are field names or ``SERVICE_*`` names). A value that does not parse
stops start-up with a :class:`SettingsError` naming the variable.

Host reach (issue 26): ``SERVICE_RESTRICT_LOCAL_FILE_ACCESS`` (default true) limits
components to the run user's stored files and workspace ``<config_dir>/workspace/<user_id>``;
``SERVICE_CONNECTOR_SSRF_ALLOW_LOOPBACK`` (default false) lets connectors reach loopback
hosts; ``SERVICE_FILE_SYSTEM_TOOL_ROOT`` (default unset: each user's workspace) names the
directory the File System tool is confined to. Whatever they say, components never reach
``/proc``, ``/etc``, home, the config and working directories, or the service's own
database and Redis (see :mod:`core.engine.host_access`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, get_args, get_type_hints

PREFIX = "SERVICE_"
T = TypeVar("T")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


def _choice(*values: str) -> dict[str, Any]:
    return {"choices": values}


@dataclass(frozen=True)
class Settings:
    """Typed settings. The environment variable of ``field_name`` is ``SERVICE_FIELD_NAME``."""

    # --- storage and processes -------------------------------------------------
    config_dir: Path | None = None
    database_url: str | None = None
    redis_url: str | None = None
    job_backend: str = field(default="inprocess", metadata=_choice("inprocess", "rq"))
    job_event_ttl_seconds: int = 3600
    job_time_limit_seconds: int = 600
    run_time_limit_seconds: int = 300
    run_checkpoint_ttl_seconds: int = 86400
    plugins: tuple[str, ...] | None = None
    disabled_plugins: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    port: int = 7860
    workers: int = 2
    log_level: str = field(default="info", metadata=_choice("debug", "info", "warning", "error", "critical"))
    db_pool_size: int = 5
    db_max_overflow: int = 10

    # --- secret and authorization (authz_enabled: read by authz, authz_hosts and flows) ---
    secret_key: str | None = field(default=None, repr=False)
    authz_enabled: bool = False

    # --- cross-origin ----------------------------------------------------------
    cors_origins: tuple[str, ...] = ("*",)
    cors_allow_credentials: bool = True
    cors_allow_headers: tuple[str, ...] = ("*",)
    cors_allow_methods: tuple[str, ...] = ("*",)

    # --- limits ----------------------------------------------------------------
    rate_limit_enabled: bool = True
    public_flow_rate_limit_per_minute: int = 20
    rate_limit_storage_uri: str = "memory://"
    rate_limit_trust_proxy: bool = False

    # --- outbound requests and component hardening ------------------------------
    ssrf_protection_enabled: bool = True
    ssrf_allowed_hosts: tuple[str, ...] = ()
    connector_ssrf_validation_enabled: bool = True
    connector_ssrf_allow_loopback: bool = False  # issue 26: was true
    block_code_interpreter_components: bool = False
    restrict_local_file_access: bool = True  # issue 26: was false
    tweaks_policy: str = field(default="permissive", metadata=_choice("permissive", "declared", "off"))
    allow_custom_components: bool = False

    # --- host reach (issue 26; core.engine.host_access) -----------------------------
    #: the File System tool's root chosen by an admin (None: each user's own workspace)
    file_system_tool_root: Path | None = None

    # --- uploads, public runs (core.runs.public) and custom components ------------
    max_file_size_upload: int = 1024
    public_flow_expiration: int = 86400
    custom_component_admin_only: bool = False

    # --- code-execution sandbox (core.sandbox; appended) --------------------------
    sandbox_cpu_seconds: int = 5
    sandbox_wall_seconds: float = 10.0
    sandbox_memory_mb: int = 256
    sandbox_output_bytes: int = 1_000_000
    sandbox_processes: int = 16

    # --- sandbox disk quota and stdio MCP servers (issue 26; core.sandbox.StdioSandbox) ---
    #: MB; total of a sandbox's temp dir (a tmpfs quota, or watched and killed past it: "disk limit")
    sandbox_disk_mb: int = 64
    #: host paths bound read-only into a stdio MCP server's sandbox (a virtualenv, /opt/tool); none by default
    sandbox_stdio_binds: tuple[str, ...] = ()
    #: give stdio MCP servers the host's network, loopback (database, Redis) included; off: no network
    sandbox_stdio_network: bool = False
    #: start stdio MCP servers without the sandbox (as the service's user) when bwrap cannot run; off: refused
    sandbox_stdio_unsandboxed: bool = False
    #: MB of address space per stdio MCP server process (RLIMIT_AS; Node-based servers reserve much)
    sandbox_stdio_memory_mb: int = 2048
    #: CPU seconds a stdio MCP server may use over one connection (RLIMIT_CPU), then it is killed
    sandbox_stdio_cpu_seconds: int = 300

    # --- request bodies (issue 20) ------------------------------------------------
    #: MB; every route's body unless it declares a larger class (checked before reading and before auth)
    max_json_body_size: int = 2
    #: MB; routes taking whole flows (create, update, batch, build with flow data)
    max_flow_body_size: int = 32
    json_max_depth: int = 100
    json_max_int_digits: int = 64

    #: (lowest, highest or None) of numeric settings where 0 or a huge value cannot work; checked
    #: by :func:`load_section` (a plugin section may declare its own ``BOUNDS``)
    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {
        "port": (1, 65535),
        "workers": (1, 64),
        "db_pool_size": (1, None),
        "job_event_ttl_seconds": (1, None),
        "job_time_limit_seconds": (1, None),
        "run_time_limit_seconds": (1, None),
        "public_flow_rate_limit_per_minute": (1, None),
        "max_file_size_upload": (1, None),
        "sandbox_cpu_seconds": (1, None),
        "sandbox_memory_mb": (1, None),
        "sandbox_processes": (1, None),
        "sandbox_disk_mb": (1, None),
        "sandbox_stdio_memory_mb": (64, None),
        "sandbox_stdio_cpu_seconds": (1, None),
    }

    # ---------------------------------------------------------------------------
    @staticmethod
    def env_name(name: str) -> str:
        return PREFIX + name.upper()

    @property
    def resolved_config_dir(self) -> Path:
        """The storage directory, created on first use (per-user data dir by default)."""
        path = self.config_dir
        if path is None:
            import platformdirs

            path = Path(platformdirs.user_data_dir("service", appauthor=False))
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.resolved_config_dir / 'service.db'}"

    @classmethod
    def load(
        cls,
        overrides: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
        *,
        strict: bool = True,
    ) -> Settings:
        """Build settings from defaults, ``.env``, the environment and ``overrides``.

        With ``strict`` false, override keys that are not core settings are left
        for plugin sections (see :func:`load_section`) instead of being refused.
        """
        return load_section(cls, PREFIX, overrides, environ, strict=strict)

    def as_env(self) -> dict[str, str]:
        """The settings as ``SERVICE_*`` strings (for child processes such as gunicorn workers)."""
        out: dict[str, str] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, tuple):
                value = ",".join(value)
            out[self.env_name(f.name)] = str(value)
        return out


def environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment plus ``SERVICE_*`` lines of the ``.env`` file (the environment wins)."""
    env = dict(os.environ if environ is None else environ)
    env_file = env.get("SERVICE_ENV_FILE") or ".env"
    if Path(env_file).is_file():
        from dotenv import dotenv_values

        for key, value in dotenv_values(env_file).items():
            if key.startswith(PREFIX) and value is not None:
                env.setdefault(key, value)
    return env


def load_section(
    cls: type[T],
    prefix: str,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    strict: bool = True,
) -> T:
    """Parse the frozen dataclass ``cls`` from ``<prefix><FIELD>`` variables and ``overrides``.

    The same parser serves the core's :class:`Settings` and every plugin's
    section (``register_settings``): booleans, integers, floats, paths, lists
    and choices, with a :class:`SettingsError` naming the variable.
    """
    env = environment(environ)
    hints = get_type_hints(cls)
    fields_by_name = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for f in fields_by_name.values():
        var = prefix + f.name.upper()
        if var in env:
            values[f.name] = _parse(var, env[var], hints[f.name], f.metadata)
    lower_prefix = prefix.removeprefix(PREFIX).lower()  # "build_" for SERVICE_BUILD_, "" for the core
    for key, value in (overrides or {}).items():
        if key.startswith(prefix):
            name = key[len(prefix) :].lower()
        elif key.startswith(lower_prefix):
            name = key[len(lower_prefix) :]
        else:
            name = key
        if name not in fields_by_name:
            if strict:
                raise SettingsError(f"{key}: unknown setting")
            continue
        var = prefix + name.upper()
        meta = fields_by_name[name].metadata
        values[name] = _parse(var, value, hints[name], meta) if isinstance(value, str) else _check(var, value, meta)
    _check_bounds(cls, prefix, values)
    return cls(**values)


def _check_bounds(cls: type, prefix: str, values: Mapping[str, Any]) -> None:
    """Refuse numbers outside the section's ``BOUNDS`` (``SERVICE_WORKERS=0`` would serve nothing)."""
    for name, (lowest, highest) in getattr(cls, "BOUNDS", {}).items():
        value = values.get(name)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        if value < lowest or (highest is not None and value > highest):
            var = prefix + name.upper()
            allowed = f"between {lowest} and {highest}" if highest is not None else f"at least {lowest}"
            raise SettingsError(f"{var}: must be {allowed}, got {value}")


def _check(var: str, value: Any, metadata: Mapping[str, Any]) -> Any:
    choices = metadata.get("choices")
    if choices and value not in choices:
        raise SettingsError(f"{var}: must be one of {', '.join(choices)}, got {value!r}")
    return value


def _parse(var: str, raw: str, hint: Any, metadata: Mapping[str, Any]) -> Any:
    text = raw.strip()
    args = [a for a in get_args(hint) if a is not type(None)]
    optional = type(None) in get_args(hint)
    base_type = args[0] if optional and args else hint
    base = getattr(base_type, "__name__", str(base_type))
    if optional and text == "":
        return None
    if base == "bool":
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise SettingsError(f"{var}: expected a boolean (true/false/1/0), got {raw!r}")
    if base == "int":
        try:
            number = int(text)
        except ValueError:
            raise SettingsError(f"{var}: expected an integer, got {raw!r}") from None
        if number < 0:
            raise SettingsError(f"{var}: must not be negative, got {raw!r}")
        return number
    if base == "float":
        try:
            real = float(text)
        except ValueError:
            raise SettingsError(f"{var}: expected a number, got {raw!r}") from None
        if real < 0:
            raise SettingsError(f"{var}: must not be negative, got {raw!r}")
        return real
    if base == "Path":
        return Path(text).expanduser()
    if base == "tuple":
        return tuple(item.strip() for item in text.split(",") if item.strip())
    if base == "str" and metadata.get("choices"):
        for choice in metadata["choices"]:
            if text.lower() == choice.lower():
                return choice
        raise SettingsError(f"{var}: must be one of {', '.join(metadata['choices'])}, got {raw!r}")
    return raw
