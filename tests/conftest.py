"""Shared helpers for the service's own tests (fixtures of the core come from core.testing)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from tests import postgres_cover

PASSWORD = "correct-horse-battery"
_names = itertools.count()


@dataclass
class Caller:
    """A signed-in user: ids and ready-made headers for each credential kind."""

    id: str
    username: str
    token: str
    api_key: str

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def key(self) -> dict[str, str]:
        return {"x-api-key": self.api_key}


def superuser(client: Any) -> Caller:
    """The auto-login superuser (the app must run with auto-login on)."""
    token = client.get("/api/v1/auto_login").get_json()["access_token"]
    client.delete_cookie("access_token_svc")
    client.delete_cookie("refresh_token_svc")
    return _finish(client, token)


def login(client: Any, username: str, password: str = PASSWORD) -> Any:
    return client.post("/api/v1/login", data={"username": username, "password": password})


def make_user(
    client: Any,
    admin: Caller,
    *,
    username: str | None = None,
    password: str = PASSWORD,
    active: bool = True,
    is_superuser: bool = False,
) -> Caller:
    """Create a user as ``admin``, activate it, sign it in and give it an API key."""
    username = username or f"user{next(_names)}"
    created = client.post("/api/v1/users/", json={"username": username, "password": password}, headers=admin.bearer)
    assert created.status_code == 201, created.get_json()
    user_id = created.get_json()["id"]
    if active or is_superuser:
        patched = client.patch(
            f"/api/v1/users/{user_id}", json={"is_active": active, "is_superuser": is_superuser}, headers=admin.bearer
        )
        assert patched.status_code == 200, patched.get_json()
    if not active:
        return Caller(user_id, username, "", "")
    response = login(client, username, password)
    assert response.status_code == 200, response.get_json()
    client.delete_cookie("access_token_svc")
    client.delete_cookie("refresh_token_svc")
    return _finish(client, response.get_json()["access_token"])


def _finish(client: Any, token: str) -> Caller:
    headers = {"Authorization": f"Bearer {token}"}
    me = client.get("/api/v1/users/whoami", headers=headers).get_json()
    key = client.post("/api/v1/api_key/", json={"name": "test"}, headers=headers).get_json()["api_key"]
    return Caller(me["id"], me["username"], token, key)


@pytest.fixture(autouse=True)
def _cheap_password_hashing(monkeypatch):
    """Argon2 with minimal cost in the apps built in process: the tests check behaviour, not the work factor
    (``tests/accounts/test_users.py`` checks the production hasher, which this returns). A user made, a
    sign-in and the superuser's start-up each hashed at about 20-45 ms before; servers started as processes
    (``service run``) keep the production cost."""
    from argon2 import PasswordHasher

    try:
        from service_accounts import security
    except ImportError:  # an install without the accounts plugin
        return None
    original = security._hasher
    monkeypatch.setattr(security, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    return original


@pytest.fixture(scope="module")
def _playwright_installed():
    """Chromium is there (the browser modules skip otherwise) but not the driver: a broken set-up, not a skip."""
    from tests.editor.test_e2e import sync_api

    if sync_api is None:
        pytest.fail("the playwright pip package is missing: pip install playwright (never `playwright install`)")


@pytest.fixture(scope="module")
def browser(_playwright_installed):
    """Debian's chromium for a module's browser tests (the editor's, SSO's, teams', extensions'); each test or
    module opens its own context (cookies, storage) in it and closes it. Per module, not per test process:
    while Playwright's sync API is started, its asyncio loop is the thread's running loop, so every later test
    of the process that runs a loop of its own (the MCP and A2A clients, ``asyncio.run``) would fail with
    "Cannot run the event loop while another loop is running" (about 1 s a module to start chromium)."""
    from pathlib import Path

    from tests.editor.test_e2e import CHROME_ARGS, CHROMIUM, sync_api

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is absent: apt-get install -y chromium")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS)
        yield b
        b.close()


@pytest.fixture
def app(make_app):
    """An app with every installed plugin, auto-login on (the default)."""
    return make_app()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def admin(client) -> Caller:
    return superuser(client)


@pytest.fixture
def alice(client, admin) -> Caller:
    return make_user(client, admin, username="alice")


@pytest.fixture
def bob(client, admin) -> Caller:
    return make_user(client, admin, username="bob")


# --- the PostgreSQL pass runs what can reach PostgreSQL -------------------------------------------------------
#: the only ways a test reaches the PostgreSQL database: core.testing's fixture, or the variable itself
_DATABASE_FIXTURE = "service_database_url"
_DATABASE_ENV = "SERVICE_TEST_DATABASE_URL"
#: run every test in the PostgreSQL pass too (for a check of the rule below)
_ALL_ENV = "SERVICE_TEST_POSTGRES_ALL"
_mentions: dict[str, bool] = {}


def _mentions_database(path: str | None) -> bool:
    """Whether a source file names the test database variable (core.testing, which defines the fixture
    and keeps the variable in the test's environment, is covered by the fixture's name)."""
    if not path or path.endswith(("core/testing.py", "tests/conftest.py")):
        return False
    if path not in _mentions:
        try:
            with open(path, encoding="utf-8") as source:
                _mentions[path] = _DATABASE_ENV in source.read()
        except OSError:
            _mentions[path] = True  # unreadable: keep the test
    return _mentions[path]


def reaches_database(item: pytest.Item) -> bool:
    """True when the test can run on PostgreSQL: it uses the database fixture (directly or through any
    fixture it depends on: ``app``, ``client``, ``make_app``...), or its module or one of its fixtures'
    modules reads ``SERVICE_TEST_DATABASE_URL``. Every other test (the browser tests against a live
    server on SQLite, Vitest, pure functions, CLI parsing, the sandbox, ...) runs the same code with or
    without the variable, so the SQLite pass already proves it."""
    import inspect

    info = getattr(item, "_fixtureinfo", None)
    if info is None or _DATABASE_FIXTURE in getattr(item, "fixturenames", ()):
        return True
    if _mentions_database(str(getattr(item, "path", "")) or None):
        return True
    for definitions in info.name2fixturedefs.values():
        for definition in definitions:
            try:
                where = inspect.getsourcefile(definition.func)
            except TypeError:
                continue
            if _mentions_database(where):
                return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    """``SERVICE_TEST_SQL_RECORD=DIR`` in the PostgreSQL pass: record each test's SQL (``make postgres-cover``)."""
    import os

    directory = os.environ.get(postgres_cover.RECORD_ENV)
    # an xdist worker or a run without xdist (its controller runs no test)
    runs_tests = hasattr(config, "workerinput") or getattr(config.option, "dist", "no") == "no"
    if directory and os.environ.get(_DATABASE_ENV) and runs_tests:
        worker = getattr(config, "workerinput", {}).get("workerid", "main")
        config.pluginmanager.register(postgres_cover.Recorder(directory, worker), "postgres-cover-recorder")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the PostgreSQL pass (``SERVICE_TEST_DATABASE_URL`` set), deselect the tests that cannot reach
    PostgreSQL (see :func:`reaches_database`): they ran the same code in the SQLite pass. Set
    ``SERVICE_TEST_POSTGRES_ALL=1`` to run them anyway. Then deselect those whose statements and outcomes
    the others send too (``tests/postgres_covered.txt``; ``SERVICE_TEST_POSTGRES_FULL=1`` keeps them)."""
    import os

    if not os.environ.get(_DATABASE_ENV) or os.environ.get(_ALL_ENV):
        return
    keep = [item for item in items if reaches_database(item)]
    covered = postgres_cover.covered_tests()  # whose SQL others of the pass send too (tests/postgres_cover.py)
    hashes: dict[str, str] = {}

    def still_covered(item: pytest.Item) -> bool:
        module = item.nodeid.split("::", 1)[0]
        if module not in hashes:
            always = postgres_cover.always_on_postgres(module)
            hashes[module] = "always" if always else postgres_cover.module_hash(str(postgres_cover.ROOT / module))
        return covered.get(item.nodeid) == hashes[module]

    if covered:
        keep = [item for item in keep if not still_covered(item)]
    if len(keep) < len(items):
        kept = set(map(id, keep))
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept])
        items[:] = keep
