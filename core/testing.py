"""Pytest fixtures for the core and for plugin authors (a ``pytest11`` plugin).

* ``make_app(plugins=None, **config)`` builds an app with exactly the named
  plugins (default: every installed one) on a fresh config directory.
* The database is SQLite in that directory, or PostgreSQL when
  ``SERVICE_TEST_DATABASE_URL`` is set (one database per xdist worker, created
  on demand, emptied after each test).
* ``SERVICE_*`` variables and ``.env`` files of the developer's shell never
  leak into tests.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TEST_DATABASE_ENV = "SERVICE_TEST_DATABASE_URL"


def _worker_database(base_url: str, worker: str) -> str:
    """``<base>_<worker>``, created if missing (PostgreSQL only)."""
    import sqlalchemy as sa

    url = sa.make_url(base_url)
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    name = f"{url.database}_{worker}".replace("-", "_")
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            exists = conn.scalar(sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
            if not exists:
                conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def service_database_url(request: pytest.FixtureRequest) -> str | None:
    """The PostgreSQL URL for this test process, or None for SQLite."""
    base = os.environ.get(TEST_DATABASE_ENV)
    if not base:
        return None
    worker = getattr(request.config, "workerinput", {}).get("workerid", "main")
    return _worker_database(base, worker)


@pytest.fixture(autouse=True)
def _isolated_service_env(monkeypatch: pytest.MonkeyPatch) -> None:
    _isolate(monkeypatch)


def _isolate(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("SERVICE_") and key != TEST_DATABASE_ENV:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("SERVICE_ENV_FILE", os.devnull)


#: migrated SQLite databases of this test process, by the migrations they hold (see _migrated_copy)
_TEMPLATES: dict[tuple[tuple[str, str], ...], Path] = {}
#: the migrations (a _TEMPLATES key) of the plugins a test names by entry point, or of every installed one
_KEYS: dict[tuple[Any, ...], tuple[tuple[str, str], ...]] = {}


def _migrated_copy(cfg: dict[str, Any], plugins: Any) -> None:
    """Start a new SQLite database as a copy of one this process already migrated for the same plugins.

    Migrating every plugin's branch cost about 0.35 s of each app a test built; the copy is a file
    copy, and the app then finds its schema current (``core.db.schema_current``) and skips Alembic. The
    template is the database right after ``core.db.upgrade``, before the app's start-up writes anything.
    """
    import atexit
    import shutil
    import tempfile

    import sqlalchemy as sa

    from core import db
    from core.plugin_state import migration_records
    from core.plugins import BUNDLE_GROUP, PLUGIN_GROUP, build_host, installed_entry_points
    from core.settings import Settings

    settings = Settings.load(cfg, strict=False)
    target = settings.resolved_config_dir / "service.db"
    if settings.database_url or target.exists():
        return

    def migrations() -> list[Any]:  # the plugins' migration branches (a host built for them: about 40 ms)
        return migration_records(build_host(plugins, settings.plugins, settings.disabled_plugins))

    records = None
    cacheable = all(isinstance(p, str) for p in plugins or ())  # entry point names, or every installed plugin
    installed = tuple(e.ep.value for g in (PLUGIN_GROUP, BUNDLE_GROUP) for e in installed_entry_points(g))
    chosen = (installed, tuple(plugins or ()), repr(settings.plugins), repr(settings.disabled_plugins))
    key = _KEYS.get(chosen) if cacheable else None
    if key is None:
        records = migrations()
        key = tuple(sorted((r.branch, str(r.path)) for r in records))
        if cacheable:
            _KEYS[chosen] = key
    template = _TEMPLATES.get(key)
    if template is None or not template.exists():  # a temporary-files cleaner may have removed it
        records = migrations() if records is None else records
        where = Path(tempfile.mkdtemp(prefix="service-test-schema-"))
        atexit.register(shutil.rmtree, where, ignore_errors=True)  # one per test process: not left behind
        engine = sa.create_engine(f"sqlite:///{where / 'service.db'}")
        try:
            db.upgrade(engine, Settings.load({"config_dir": where}, strict=False), records)
        finally:
            engine.dispose()
        template = _TEMPLATES[key] = where / "service.db"
    shutil.copyfile(template, target)


_frozen = False


def _freeze_once() -> None:
    """After this test process's first app, move everything it holds (the modules, the test modules, that app)
    out of the cyclic collector's reach, as ``service run`` does before it forks: every later full collection
    scans only what the tests made since. It made an app about 20% cheaper on average (the collections that
    fell inside building one took 0.2 s instead of 0.08); the first app's own cycles are kept, once."""
    global _frozen
    if not _frozen:
        import gc

        gc.freeze()
        _frozen = True


@contextlib.contextmanager
def app_factory(config_dir: Path, database_url: str | None) -> Iterator[Callable[..., Any]]:
    """What ``make_app`` yields, for any scope: apps on ``config_dir`` and ``database_url`` (None: SQLite
    in ``config_dir``); on exit their job queues close and the database is emptied (PostgreSQL) or its
    engine disposed (SQLite). A module- or session-scoped user gives PostgreSQL a database of its own
    (:func:`own_database`): every ``make_app`` empties the worker's database after its test."""
    from core import appstate, db
    from core.app import create_app

    built: list[Any] = []

    def factory(plugins: Any = None, **config: Any) -> Any:
        cfg: dict[str, Any] = {"config_dir": config_dir, "rate_limit_storage_uri": "memory://"}
        if database_url:
            cfg["database_url"] = database_url
        cfg.update(config)
        if not database_url:
            _migrated_copy(cfg, plugins)
        app = create_app(config=cfg, plugins=plugins)
        app.testing = True
        built.append(app)
        _freeze_once()
        return app

    try:
        yield factory
    finally:
        for app in built:
            appstate.jobs(app).close()
        if built:
            svc = appstate.state(built[0])
            if database_url:
                db.truncate_all(svc.engine)
            else:
                db.dispose_engine(svc.settings)


def own_database(database_url: str | None, name: str) -> str | None:
    """A PostgreSQL database of its own beside the worker's ``database_url`` (``<it>_<name>``, created if
    missing), or None (SQLite) when ``database_url`` is None."""
    return _worker_database(database_url, name) if database_url else None


@contextlib.contextmanager
def isolated_service_env() -> Iterator[pytest.MonkeyPatch]:
    """``_isolated_service_env`` for a fixture of a wider scope than a test (which builds before it)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(monkeypatch)
        yield monkeypatch


@pytest.fixture
def make_app(tmp_path: Any, service_database_url: str | None) -> Iterator[Callable[..., Any]]:
    """Factory: ``make_app(plugins=["accounts"], auto_login=False, superuser_password="...")``."""
    with app_factory(tmp_path / "config", service_database_url) as factory:
        yield factory
