"""The typed application state (core.appstate): the accessors, the leaf, the plugins' public API."""

from __future__ import annotations

import configparser
import types
from dataclasses import dataclass
from pathlib import Path

import grimp
import pytest
from flask import Flask

from core import appstate, hookimpl
from core.hookcalls import Hooks
from core.records import SettingsSection

ROOT = Path(__file__).resolve().parents[2]

#: modules below the app factory: they read the state through core.appstate, never core.app
LOWER_CORE = (
    "core.auth",
    "core.errors",
    "core.reload",
    "core.limits",
    "core.plugin_state",
    "core.requests",
    "core.shared",
    "core.startup",
    "core.builtin",
)


@dataclass(frozen=True)
class ProbeConfig:
    level: int = 3


@hookimpl
def register_settings():
    return [SettingsSection("probe", ProbeConfig, "SERVICE_PROBE_")]


PROBE = types.ModuleType("probe")
PROBE.register_settings = register_settings  # type: ignore[attr-defined]


def test_the_accessors_read_the_current_app(make_app):
    app = make_app(plugins=[("probe", PROBE)], probe_level=5)
    svc = appstate.state(app)
    with app.app_context():
        assert appstate.state() is svc
        assert appstate.settings() is svc.settings
        assert appstate.engine() is svc.engine
        assert appstate.jobs() is svc.jobs
        assert appstate.shared() is svc.shared
        assert appstate.registry() is svc.components.current
        assert appstate.components() is svc.components
        assert appstate.host() is svc.host
        assert appstate.hooks() is svc.host.hooks  # the typed facade over the relay (core.hookcalls)
        assert isinstance(appstate.hooks(), Hooks)
        assert appstate.settings_of(ProbeConfig) == ProbeConfig(level=5)
        assert appstate.plugin_settings("probe") is appstate.settings_of(ProbeConfig)
    assert appstate.jobs(app) is svc.jobs  # or of the app given, outside its context
    with pytest.raises(RuntimeError):
        appstate.settings()  # no app context, no app given


def test_settings_of_an_unloaded_section_is_a_lookup_error(make_app):
    with pytest.raises(LookupError, match="ProbeConfig"):
        appstate.settings_of(ProbeConfig, make_app(plugins=[]))


def test_state_or_none_tells_apps_create_app_built():
    assert appstate.state_or_none(Flask("bare")) is None


def _graph(exclude_type_checking: bool) -> grimp.ImportGraph:
    return grimp.build_graph("core", exclude_type_checking_imports=exclude_type_checking, cache_dir=None)


def test_appstate_is_a_leaf():
    """At run time it imports core.appctx only, and core.appctx no core module: no circle can pass."""
    graph = _graph(exclude_type_checking=True)
    core_imports = {m for m in graph.find_modules_directly_imported_by("core.appstate") if m.startswith("core")}
    assert core_imports <= {"core", "core.appctx"}
    assert not {m for m in graph.find_modules_directly_imported_by("core.appctx") if m.startswith("core.")}


def test_the_lower_core_never_imports_the_app_factory():
    graph = _graph(exclude_type_checking=False)
    importers = graph.find_modules_directly_imported_by
    for package in LOWER_CORE:
        for module in {package} | graph.find_descendants(package):
            assert "core.app" not in importers(module), module


def test_every_plugin_is_held_to_the_public_api():
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    sources = set(config["importlinter:contract:plugins-use-public-core-api"]["source_modules"].split())
    plugins = {f"service_{p.name}" for p in (ROOT / "plugins").iterdir() if (p / "setup.cfg").exists()}
    assert plugins == sources
