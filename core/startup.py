"""Start-up checks and the start-up summary: what a new operator sees first.

* :func:`check_database` and :func:`check_redis` turn an unreachable database or Redis into a
  :class:`~core.errors.StartupError` (one line, exit status 3) naming the variable and the
  host, never the password, instead of a driver traceback on the first request.
* :func:`warn_unknown_names` warns about ``SERVICE_*`` variables nobody reads, with the
  closest known name (``SERVICE_AUTOLOGIN`` -> ``SERVICE_AUTO_LOGIN``).
* :func:`warn_opened_host_reach` warns when an admin opened what components may reach on the
  host (issue 26: ``SERVICE_RESTRICT_LOCAL_FILE_ACCESS=false``, ``SERVICE_CONNECTOR_SSRF_ALLOW_LOOPBACK=true``).
* :func:`summary` is the few lines ``service run`` logs: config dir, database, plugins,
  auth mode, job backend.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import click
import sqlalchemy as sa

from core.errors import StartupError
from core.settings import PREFIX, Settings

if TYPE_CHECKING:
    from flask import Flask

log = logging.getLogger("service.startup")

#: variables read outside the settings classes and CLI options
OTHER_NAMES = frozenset({"SERVICE_ENV_FILE"})
#: prefixes of variables that belong to tooling (the test suites), never warned about
IGNORED_PREFIXES = ("SERVICE_TEST_",)
_warned: set[str] = set()


def safe_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (host, port, database kept)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _reason(exc: BaseException) -> str:
    original = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(original).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(original).__name__


def check_database(engine: sa.Engine, settings: Settings) -> None:
    """Connect once; an unreachable or refused database stops start-up with one line."""
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.DBAPIError as exc:
        where = "SERVICE_DATABASE_URL" if settings.database_url else "the default SQLite database"
        raise StartupError(
            f"{where}: cannot connect to {safe_url(settings.resolved_database_url)} ({_reason(exc)})"
        ) from None


def required_redis(settings: Settings) -> dict[str, str]:
    """The Redis URLs this configuration cannot run without, by the variable that names them."""
    needed: dict[str, str] = {}
    if settings.job_backend == "rq" and settings.redis_url:
        needed["SERVICE_REDIS_URL"] = settings.redis_url
    if settings.rate_limit_storage_uri.startswith(("redis://", "rediss://")):
        needed["SERVICE_RATE_LIMIT_STORAGE_URI"] = settings.rate_limit_storage_uri
    return needed


def check_redis(settings: Settings) -> None:
    """Ping every required Redis (2 s timeout); a dead one stops start-up with one line."""
    needed = required_redis(settings)
    if not needed:
        return
    import redis  # only when a Redis is configured (about 50 ms)

    for var, url in needed.items():
        try:
            client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        except ValueError as exc:
            raise StartupError(f"{var}: {exc}") from None
        try:
            client.ping()
        except redis.RedisError as exc:
            raise StartupError(f"{var}: cannot connect to Redis at {safe_url(url)} ({_reason(exc)})") from None
        finally:
            client.close()


def known_names(app: Flask, sections: Iterable[Any]) -> set[str]:
    """Every ``SERVICE_*`` name something reads: core settings, plugin sections, CLI options."""
    names = {Settings.env_name(f.name) for f in dataclasses.fields(Settings)} | set(OTHER_NAMES)
    for section in sections:
        names |= {section.prefix + f.name.upper() for f in dataclasses.fields(section.schema)}
    stack: list[click.Command] = list(app.cli.commands.values())
    while stack:
        command = stack.pop()
        for param in command.params:
            envvars = param.envvar if isinstance(param.envvar, list | tuple) else [param.envvar]
            names |= {e for e in envvars if isinstance(e, str) and e.startswith(PREFIX)}
        if isinstance(command, click.Group):
            stack.extend(command.commands.values())
    return names


def warn_unknown_names(environ: Mapping[str, str], known: set[str]) -> list[str]:
    """Log (once per process) a warning for each unknown ``SERVICE_*`` variable; return the messages."""
    messages = []
    for name in sorted(environ):
        if not name.startswith(PREFIX) or name in known or name.startswith(IGNORED_PREFIXES):
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]}?" if close else ""
        messages.append(_warn_once(name, f"{name} is not a setting of this service and is ignored{hint}"))
    return messages


def _warn_once(key: str, message: str) -> str:
    """Log ``message`` as a warning the first time this process sees ``key``; return it."""
    if key not in _warned:
        _warned.add(key)
        log.warning(message)
    return message


#: (setting, opened value, what it lets every user's components reach)
OPENED_HOST_REACH = (
    ("restrict_local_file_access", False, "absolute local paths outside their workspace"),
    ("connector_ssrf_allow_loopback", True, "database and other connectors on loopback hosts"),
    ("connector_ssrf_validation_enabled", False, "database and other connectors on any private or loopback host"),
    ("ssrf_protection_enabled", False, "private and loopback addresses over HTTP"),
    ("sandbox_stdio_network", True, "the host's network, loopback services included, from stdio MCP servers"),
    ("sandbox_stdio_unsandboxed", True, "the host's processes and files through stdio MCP servers (no sandbox)"),
)


def warn_opened_host_reach(settings: Settings) -> list[str]:
    """Log (once per process) a warning for each host-reach default an admin opened; return the messages.

    Until issue 26 these were the defaults; a deployment that relied on them sets them explicitly now
    and is reminded at every start that every user's flows reach more of the host.
    """
    messages = []
    for name, opened, what in OPENED_HOST_REACH:
        if getattr(settings, name) != opened:
            continue
        var = Settings.env_name(name)
        messages.append(_warn_once(var, f"{var} is {str(opened).lower()}: every user's components may reach {what}"))
    return messages


def summary(app: Flask) -> list[str]:
    """The start-up log lines: what is running where."""
    from core import appstate

    service = appstate.state(app)
    s = service.settings
    # a plugin's settings section may add a line (the accounts plugin's ``auth: ...``)
    extra = [line for section in service.plugin_settings.values() if (line := _section_summary(section))]
    if s.job_backend == "rq":
        jobs = f"rq on {safe_url(s.redis_url or '')} (run `service worker` processes)"
    else:
        jobs = "in-process (jobs run in the web process)"
    plugins = [p.name for p in service.host.list()]
    loaded = f"plugins: {len(plugins)} loaded ({', '.join(plugins)})"
    if service.host.failures:
        loaded += "; not loaded: " + ", ".join(f"{n} ({r})" for n, r in sorted(service.host.failures.items()))
    return [
        f"config dir: {s.resolved_config_dir}",
        f"database: {safe_url(s.resolved_database_url)}",
        loaded,
        *extra,
        f"jobs: {jobs}",
    ]


def _section_summary(section: Any) -> str | None:
    summary = getattr(section, "summary", None)
    return summary() if callable(summary) else None
