"""The browser fixtures of the end-to-end modules, and each phase's report kept on the test item (so the
``page`` fixture can save a screenshot when a test failed).

One served app (``shared_server``) per test process (each xdist worker): starting ``service run`` costs 2-15 s,
once for every module before. The browser stays one per module (``browser`` in tests/conftest.py: a live
Playwright owns the process's running asyncio loop, which later non-browser tests need). The served app has the
union of what the modules need where that union is harmless (the A2A surface on, loopback allowed by the SSRF
rules, no model provider from the environment); a module that needs other settings (auto-login on) starts its
own. The modules share the app's database, so none assumes a fresh one: each names what it creates uniquely
or checks only what it made, and a module that needs a state of the admin (no model provider, or one pointing
at its own LLM server) sets that state up itself (:func:`clear_variables`, :func:`provider_for_admin`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

#: when this test process started: failure screenshots older than that (by a margin) are a past run's
_STARTED = time.time()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory):
    """``service run`` for the browser modules of this test process: auto-login off, the A2A surface on,
    loopback allowed by the SSRF rules (the tests' LLM, MCP and API servers), no ``SERVICE_*`` or ``OPENAI_*``
    variable inherited (no model provider from the environment), the access log on. Its log is kept as
    ``test-artifacts/e2e-server-<worker>.log``."""
    from tests.editor.test_e2e import ARTIFACTS, running_service

    for stale in ARTIFACTS.glob("e2e-FAILED-*.png"):  # a past run's (this run's other worker may have saved some)
        with contextlib.suppress(OSError):
            if stale.stat().st_mtime < _STARTED - 60:
                stale.unlink()
    config = tmp_path_factory.mktemp("e2e-shared")
    with running_service(
        config,
        access_log=True,
        drop=("SERVICE_", "OPENAI_"),
        SERVICE_A2A_ENABLED="true",
        SERVICE_SSRF_ALLOWED_HOSTS="127.0.0.1",
    ) as base:
        yield base
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(config / "server.log", ARTIFACTS / f"e2e-server-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log")


@pytest.fixture(scope="session")
def sdk_server():
    """The MCP SDK's example server over Streamable HTTP, once per test process; its URL."""
    from tests.serverkit import mcp_sdk_server

    with mcp_sdk_server() as url:
        yield url


@pytest.fixture(scope="module")
def server(shared_server):
    """The served app a module's tests use, the admin without global variables as on a fresh app (no model
    provider: an earlier module's may point at its LLM server, stopped since). A module needing another state
    overrides this."""
    clear_variables(shared_server, bearer(shared_server))
    return shared_server


def unique(name: str) -> str:
    """``name`` with a short random suffix: what a test creates on the shared app does not meet another's."""
    return f"{name} {uuid.uuid4().hex[:6]}"


@contextlib.contextmanager
def watched_page(context, request) -> Iterator[Any]:
    """A new page of ``context`` for the test ``request`` names: the test fails on an uncaught page error or a
    Content Security Policy refusal, and a failed test leaves a screenshot in the artifacts."""
    from tests.editor.test_e2e import ARTIFACTS

    pg = context.new_page()
    pg.set_default_timeout(15_000)
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.on("console", lambda m: "Content Security Policy" in m.text and problems.append(f"CSP: {m.text}"))
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / f"e2e-FAILED-{request.node.name}.png"))
    pg.close()
    assert not problems, problems


def signed_in_context(
    browser, server: str, *, tap: bool = False, user: tuple[str, str] | None = None, **options: Any
) -> Any:
    """A browser context (``options``: its viewport or device) signed in as the admin (or ``user``: username
    and password) through the sign-in form (``tap``: with a finger, on a touch device); the caller closes it."""
    from playwright.sync_api import expect

    from tests.editor.test_e2e import ADMIN, PASSWORD

    username, password = user or (ADMIN, PASSWORD)
    ctx = browser.new_context(base_url=server, **options)
    pg = ctx.new_page()
    pg.set_default_timeout(15_000)
    pg.goto("/")
    pg.get_by_label("Username").fill(username)
    pg.get_by_label("Password").fill(password)
    button = pg.get_by_role("button", name="Sign in")
    button.tap() if tap else button.click()
    expect(pg.get_by_role("button", name="New flow")).to_be_visible(timeout=15_000)  # slow on a loaded machine
    pg.close()
    return ctx


def bearer(base: str, user: tuple[str, str] | None = None) -> dict[str, str]:
    """The bearer header of the admin (or ``user``: username and password), signed in on the served ``base``."""
    import json
    import urllib.parse
    import urllib.request

    from tests.editor.test_e2e import ADMIN, PASSWORD

    username, password = user or (ADMIN, PASSWORD)
    data = urllib.parse.urlencode({"username": username, "password": password}).encode()
    req = urllib.request.Request(base + "/api/v1/login", data=data, method="POST")  # noqa: S310 - local server
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        return {"Authorization": f"Bearer {json.loads(r.read())['access_token']}"}


def clear_variables(base: str, headers: dict[str, str]) -> None:
    """Delete every global variable of the user ``headers`` sign in: no model provider of theirs (the shared
    app keeps what an earlier module set)."""
    from tests.editor.test_e2e import api

    status, variables = api(base, "GET", "/api/v1/variables/", headers=headers)
    assert status == 200, variables
    for variable in variables:
        if variable.get("is_owner", True):
            status, body = api(base, "DELETE", f"/api/v1/variables/{variable['id']}", headers=headers)
            assert status == 204, body
    assert api(base, "GET", "/api/v1/variables/", headers=headers)[1] == []


def new_user(base: str, username: str, password: str, *, superuser: bool = False) -> dict[str, Any]:
    """An active user made by the admin on the served ``base``; the created user."""
    from tests.editor.test_e2e import api

    admin = bearer(base)
    status, user = api(base, "POST", "/api/v1/users/", body={"username": username, "password": password}, headers=admin)
    assert status == 201, user
    patch = {"is_active": True, "is_superuser": superuser}
    status, body = api(base, "PATCH", f"/api/v1/users/{user['id']}", body=patch, headers=admin)
    assert status == 200, body
    return user


def provider_for_admin(base: str, llm_url: str, key: str, *, user: tuple[str, str] | None = None) -> dict[str, str]:
    """Sign the admin (or ``user``: username and password) in on the served ``base``, delete their global
    variables and point their OpenAI Compatible provider (its two global variables) at the local test server
    ``llm_url`` with ``key``; their bearer header."""
    from tests.editor.test_e2e import api

    headers = bearer(base, user)
    clear_variables(base, headers)
    for name, value, kind in (
        ("OPENAI_COMPATIBLE_BASE_URL", llm_url, "Generic"),
        ("OPENAI_COMPATIBLE_API_KEY", key, "Credential"),
    ):
        status, body = api(
            base,
            "POST",
            "/api/v1/variables/",
            body={"name": name, "value": value, "type": kind, "default_fields": []},
            headers=headers,
        )
        assert status == 201, body
    return headers


@pytest.fixture
def page(browser, server, request):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server)
    with watched_page(context, request) as pg:
        yield pg
    context.close()


@pytest.fixture(scope="module")
def llm():
    """The local OpenAI-compatible test server (a module may define its own, with other models)."""
    from tests.openai_server import OpenAIServer

    with OpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def llm_service(shared_server, llm):
    """The shared app with the admin's OpenAI Compatible provider pointed at ``llm`` (the module's ``server``
    returns it)."""
    provider_for_admin(shared_server, llm.url, "sk-e2e")
    return shared_server
