"""End-to-end, as a newcomer: an LLM starter with no model provider set up shows a call to action (no error),
the Model providers page sets up an OpenAI-compatible endpoint (base URL + a Credential key through the
variables API), tests the connection and lists its models; the model node then picks from it, the choice
survives a reload, and the flow answers through tests/openai_server.py.
"""

from __future__ import annotations

import json
import re
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.editor.conftest import clear_variables
from tests.editor.test_e2e import (  # noqa: F401 - fixtures
    ADMIN,
    ARTIFACTS,
    PASSWORD,
    api,
    pytestmark,
    running_service,
    shot,
)
from tests.editor.test_e2e_starters import chat, from_starter, last_answer
from tests.openai_server import OpenAIServer

KEY = "sk-provider-page"


@pytest.fixture(scope="module")
def llm():
    with OpenAIServer(models=["gpt-4o-mini", "test-model"], api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def server(shared_server):
    """The shared app (no provider from the environment, loopback allowed for the test's LLM) with no global
    variable of the admin: no provider at all (an earlier module may have set one up)."""
    clear_variables(shared_server, _bearer(shared_server))
    return shared_server


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server)
    pg = ctx.new_page()
    pg.set_default_timeout(15_000)
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.goto("/")
    pg.get_by_label("Username").fill(ADMIN)
    pg.get_by_label("Password").fill(PASSWORD)
    pg.get_by_role("button", name="Sign in").click()
    expect(pg.get_by_role("button", name="New flow")).to_be_visible()
    yield pg
    ctx.close()
    assert not problems, problems


def _bearer(server: str) -> dict[str, str]:
    req = urllib.request.Request(  # noqa: S310 - local server
        server + "/api/v1/login", data=f"username={ADMIN}&password={PASSWORD}".encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        return {"Authorization": f"Bearer {json.loads(r.read())['access_token']}"}


def set_up_provider(page, url: str, key: str):
    """On the Model providers page (the page open, or opened): the OpenAI-compatible endpoint ``url`` with
    ``key``, saved and its connection tested (2 models listed). Returns the provider's card and test result."""
    if not re.search("/settings/model-providers$", page.url):
        page.get_by_role("link", name="Settings", exact=True).click()
        page.get_by_role("link", name="Model providers").click()
    expect(page).to_have_url(re.compile("/settings/model-providers$"))
    card = page.get_by_test_id("provider-openai-compatible")
    expect(card).to_contain_text("Not set up")
    card.get_by_label("Base URL").fill(url)
    card.get_by_label("API key (optional)").fill(key)
    card.get_by_role("button", name="Save").click()
    result = page.get_by_test_id("provider-test-openai-compatible")
    expect(result).to_contain_text("Connected: 2 models", timeout=20_000)
    expect(result).to_contain_text("gpt-4o-mini")
    expect(card).to_contain_text("Set up")
    return card, result


def test_set_up_a_provider_from_the_first_llm_starter(page, server, llm):
    from_starter(page, "Basic Prompting")
    # no provider yet: a call to action on the canvas and in the model field, and no error notification
    cta = page.get_by_test_id("provider-cta")
    expect(cta).to_contain_text("no model provider is set up yet")
    model_node = page.get_by_test_id("node-LanguageModelComponent")
    expect(model_node.get_by_test_id("model-cta")).to_contain_text("Set up a model provider")
    page.wait_for_timeout(500)
    expect(page.get_by_role("alert")).to_have_count(0)
    shot(page, "providers-cta")
    flow_url = page.url

    cta.get_by_role("link", name="Set up a model provider").click()
    card, result = set_up_provider(page, llm.url, KEY)
    shot(page, "providers-page")
    # the key is a Credential variable (never shown), the base URL a Generic one
    status, variables = api(server, "GET", "/api/v1/variables/", headers=_bearer(server))
    assert status == 200
    kinds = {v["name"]: v for v in variables}
    assert kinds["OPENAI_COMPATIBLE_API_KEY"]["type"] == "Credential"
    assert kinds["OPENAI_COMPATIBLE_API_KEY"].get("value") != KEY
    assert kinds["OPENAI_COMPATIBLE_BASE_URL"]["value"] == llm.url
    # a wrong key: the test says so in plain words
    card.get_by_label("API key (optional)").fill("sk-wrong")
    card.get_by_role("button", name="Save").click()
    expect(result.locator(".form-error")).to_be_visible(timeout=20_000)
    assert "Traceback" not in result.inner_text()
    card.get_by_label("API key (optional)").fill(KEY)
    card.get_by_role("button", name="Save").click()
    expect(result).to_contain_text("Connected: 2 models", timeout=20_000)

    # back on the flow: the model field picks from the provider set up, the choice survives a reload
    page.goto(flow_url)
    expect(page.get_by_test_id("provider-cta")).to_have_count(0)
    picker = page.get_by_test_id("node-LanguageModelComponent").get_by_test_id("model-picker")
    expect(picker.get_by_label("Language Model provider")).to_have_value("OpenAI Compatible")
    models = picker.get_by_label("Language Model", exact=True)
    expect(models.locator("option", has_text="test-model")).to_have_count(1)
    models.select_option("test-model")
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    page.reload()
    picker = page.get_by_test_id("node-LanguageModelComponent").get_by_test_id("model-picker")
    expect(picker.get_by_label("Language Model", exact=True)).to_have_value("test-model")
    expect(picker.get_by_label("Language Model provider")).to_have_value("OpenAI Compatible")

    llm.reply("Hello from the provider you set up.")
    before = len(llm.chat_requests)
    chat(page, "hi")
    expect(last_answer(page)).to_contain_text("Hello from the provider you set up.", timeout=30_000)
    assert llm.chat_requests[before]["model"] == "test-model"
    shot(page, "providers-run")
