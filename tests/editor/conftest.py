"""The browser fixtures of the end-to-end modules, and each phase's report kept on the test item (so the
``page`` fixture can save a screenshot when a test failed)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="module")
def _playwright_installed():
    """Chromium is there (the end-to-end modules skip otherwise) but not the driver: a broken set-up, not a skip."""
    from tests.editor.test_e2e import sync_api

    if sync_api is None:
        pytest.fail("the playwright pip package is missing: pip install playwright (never `playwright install`)")


@pytest.fixture(scope="module")
def browser(_playwright_installed):
    from tests.editor.test_e2e import CHROME_ARGS, CHROMIUM, sync_api

    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS)
        yield b
        b.close()


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


def signed_in_context(browser, server: str, *, tap: bool = False, **options: Any) -> Any:
    """A browser context (``options``: its viewport or device) signed in as the admin through the sign-in form
    (``tap``: with a finger, on a touch device); the caller closes it."""
    from playwright.sync_api import expect

    from tests.editor.test_e2e import ADMIN, PASSWORD

    ctx = browser.new_context(base_url=server, **options)
    pg = ctx.new_page()
    pg.set_default_timeout(15_000)
    pg.goto("/")
    pg.get_by_label("Username").fill(ADMIN)
    pg.get_by_label("Password").fill(PASSWORD)
    button = pg.get_by_role("button", name="Sign in")
    button.tap() if tap else button.click()
    expect(pg.get_by_role("button", name="New flow")).to_be_visible(timeout=15_000)  # slow on a loaded machine
    pg.close()
    return ctx


def provider_for_admin(base: str, llm_url: str, key: str) -> dict[str, str]:
    """Sign the admin in on the served ``base`` and point their OpenAI Compatible provider (its two global
    variables) at the local test server ``llm_url`` with ``key``; the admin's bearer header."""
    import json
    import urllib.request

    from tests.editor.test_e2e import ADMIN, PASSWORD, api

    req = urllib.request.Request(  # noqa: S310 - local server
        base + "/api/v1/login", data=f"username={ADMIN}&password={PASSWORD}".encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        headers = {"Authorization": f"Bearer {json.loads(r.read())['access_token']}"}
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
def llm_service(tmp_path_factory, llm, request):
    """``service run`` whose OpenAI Compatible provider is ``llm`` (the module's ``server`` returns it)."""
    from tests.editor.test_e2e import running_service

    config = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1].replace("test_", ""))
    with running_service(config, SERVICE_SSRF_ALLOWED_HOSTS="127.0.0.1", OPENAI_COMPATIBLE_BASE_URL=llm.url) as base:
        yield base
