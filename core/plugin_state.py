"""Plugins switched on or off at run time, persisted in the database (table ``core_plugin_state``).

A row overrides the start-up settings for one plugin: ``enabled = False`` skips it although
``SERVICE_PLUGINS`` / ``SERVICE_DISABLED_PLUGINS`` would load it, ``enabled = True`` loads it
although ``SERVICE_DISABLED_PLUGINS`` names it. A change bumps the shared generation
``core:gen:apps`` (:mod:`core.reload`); every web process rebuilds its Flask app through
:class:`core.holder.AppHolder` when it sees it. Switching a plugin off never touches its tables.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from core import appstate, db

if TYPE_CHECKING:
    from core.appstate import PluginHostPort
    from core.records import Migrations

log = logging.getLogger(__name__)

#: plugins that cannot be switched off at run time (the core itself)
ALWAYS_ON = frozenset({"core"})


class PluginState(db.Base):
    __tablename__ = "core_plugin_state"

    name: Mapped[str] = mapped_column(sa.String(100), primary_key=True)
    enabled: Mapped[bool] = mapped_column(sa.Boolean, nullable=False)
    changed_at: Mapped[dt.datetime] = mapped_column(db.UTCDateTime(), nullable=False, default=db.utcnow)
    changed_by: Mapped[str | None] = mapped_column(sa.String(100), nullable=True)


def migration_records(host: PluginHostPort) -> list[Migrations]:
    """The migrations every plugin of ``host`` contributes (``register_migrations``), one branch each."""
    return host.collect("register_migrations", key=lambda m: m.branch)


def overrides(engine: sa.Engine) -> dict[str, bool]:
    """``{plugin: enabled}`` as stored; empty before the core's migrations created the table."""
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(PluginState.name, PluginState.enabled)).all()
    except (sa.exc.OperationalError, sa.exc.ProgrammingError):  # no table yet: first start
        return {}
    return {name: bool(enabled) for name, enabled in rows}


def effective(
    engine: sa.Engine, allow: Iterable[str] | None, deny: Iterable[str]
) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """The allow and deny lists the plugin host uses: the settings with the stored overrides applied.

    Also forgets the import system's directory caches, so a plugin pip installed while the
    service runs is found by the app being built.
    """
    import importlib

    importlib.invalidate_caches()
    stored = overrides(engine)
    if not stored:
        return (tuple(allow) if allow is not None else None), tuple(deny)
    on = {n for n, e in stored.items() if e}
    off = {n for n, e in stored.items() if not e}
    new_deny = (set(deny) - on) | off
    new_allow = None if allow is None else tuple(sorted((set(allow) | on) - off))
    return new_allow, tuple(sorted(new_deny))


def drop_disabled(engine: sa.Engine, plugins: Iterable[Any]) -> list[Any]:
    """An explicit plugin list (names, import paths, modules, ``(name, object)`` pairs) without the stored-off ones."""
    from types import ModuleType

    from core.plugins import plugin_name

    off = {n for n, e in overrides(engine).items() if not e}
    if not off:
        return list(plugins)

    def name(item: Any) -> str:
        if isinstance(item, tuple):
            return str(item[0])
        if isinstance(item, ModuleType):
            return plugin_name(item)
        text = str(item)
        return text.split(".")[0].removeprefix("service_") if "." in text else text

    return [p for p in plugins if name(p) not in off]


def set_enabled(engine: sa.Engine, name: str, enabled: bool, by: str | None = None) -> None:
    """Store the override for ``name`` (insert or update) in one transaction."""
    with engine.begin() as conn:
        updated = conn.execute(
            sa.update(PluginState)
            .where(PluginState.name == name)
            .values(enabled=enabled, changed_at=db.utcnow(), changed_by=by)
        ).rowcount
        if not updated:
            conn.execute(
                sa.insert(PluginState).values(name=name, enabled=enabled, changed_at=db.utcnow(), changed_by=by)
            )


def installed_plugins() -> dict[str, Any]:
    """Every installed ``service.plugins`` entry point by name (read again: a fresh pip install shows up)."""
    import importlib
    import importlib.metadata

    from core.plugins import PLUGIN_GROUP

    importlib.invalidate_caches()
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=PLUGIN_GROUP)}


def _end_session(app: Any) -> None:
    """End the caller's request session: these functions use connections of their own, and an
    SQLite pool has one connection (the request's session would hold it)."""
    factory = app.extensions.get("service.db")
    if factory is not None:
        factory.remove()


class SwitchError(ValueError):
    """A plugin cannot be switched (unknown name, the core, a failing migration)."""


def switch(app: Any, name: str, enabled: bool, by: str | None = None) -> dict[str, Any]:
    """Switch plugin ``name`` on or off for the whole deployment.

    Switching on runs the plugin's migrations first (a failure leaves everything as it was);
    then the override is stored and the shared plugin generation bumped, so every web process
    (and RQ worker) rebuilds its app. Returns ``{name, enabled, generation}``.
    """
    from core.plugins import build_host
    from core.reload import APPS_GEN

    svc = appstate.state(app)
    _end_session(app)
    if name in ALWAYS_ON:
        raise SwitchError(f"'{name}' cannot be switched off")
    if name not in installed_plugins():
        raise SwitchError(f"No installed plugin is named '{name}'")
    if enabled:
        stored = overrides(svc.engine)
        stored[name] = True
        on = {n for n, e in stored.items() if e}
        off = {n for n, e in stored.items() if not e}
        allow = svc.settings.plugins
        new_allow = None if allow is None else tuple((set(allow) | on) - off)
        deny = tuple((set(svc.settings.disabled_plugins) - on) | off)
        try:
            host = build_host(None, new_allow, deny)
            db.upgrade(svc.engine, svc.settings, migration_records(host))
        except Exception as exc:
            raise SwitchError(f"Plugin '{name}' cannot be enabled: {type(exc).__name__}: {exc}") from exc
        if name in host.failures:
            raise SwitchError(f"Plugin '{name}' cannot be enabled: {host.failures[name]}")
    set_enabled(svc.engine, name, enabled, by)
    generation = int(svc.shared.incr(APPS_GEN))
    log.info("plugin %s %s (plugin generation %s)", name, "enabled" if enabled else "disabled", generation)
    return {"name": name, "enabled": enabled, "generation": generation}


def status(app: Any) -> dict[str, Any]:
    """Installed plugins with their stored and effective state, and this process's view of them."""
    import os

    from core.reload import APPS_GEN, COMPONENTS_GEN, generation

    svc = appstate.state(app)
    _end_session(app)
    stored = overrides(svc.engine)
    allow, deny = effective(svc.engine, svc.settings.plugins, svc.settings.disabled_plugins)
    loaded = {info.name: info for info in svc.host.list()}
    plugins = []
    for name, ep in sorted(installed_plugins().items()):
        on = name not in deny and (allow is None or name in allow)
        info = loaded.get(name)
        plugins.append(
            {
                "name": name,
                "distribution": ep.dist.name if ep.dist is not None else None,
                "version": ep.dist.version if ep.dist is not None else None,
                "enabled": on,
                "stored": stored.get(name),
                "loaded": info is not None,
                "failure": svc.host.failures.get(name),
            }
        )
    sources = svc.component_sources
    return {
        "generation": generation(svc.shared, APPS_GEN),
        "process_generation": svc.plugins_generation,
        "components_generation": generation(svc.shared, COMPONENTS_GEN),
        "process": {
            "pid": os.getpid(),
            "plugins_generation": svc.plugins_generation,
            "components_generation": sources.generation,
        },
        "plugins": plugins,
    }
