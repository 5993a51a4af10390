"""End-to-end, as a new user: every starter flow is created from the "New flow" dialog, opened in the
editor and run (in the playground or with its Run button), with the LLM components pointed at the local
OpenAI-wire test server through the global variables a user would set. Also: the category icon colours
of the light and dark themes (distinct per category, readable on their chip and on the panel).

The shared app of tests/editor/conftest.py, one browser context (signed in once) and one LLM server for the
whole module: each test costs a page and its flow, not a start-up. Chromium from the system package, as
tests/editor/test_e2e.py.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.editor import test_e2e
from tests.editor.conftest import provider_for_admin, signed_in_context, watched_page
from tests.editor.test_e2e import api, shot
from tests.openai_server import OpenAIServer

pytest.importorskip("mcp")
from playwright.sync_api import expect

pytestmark = test_e2e.pytestmark  # the module's marks


STARTER_FILES = Path(__file__).resolve().parents[2] / "plugins" / "flows" / "service_flows" / "examples"
LLM_KEY = "sk-starter-test"


@pytest.fixture(scope="module")
def llm():
    # the starters' default model is gpt-4o-mini; the endpoint the user configures lists it
    with OpenAIServer(models=["gpt-4o-mini", "test-model"], api_key=LLM_KEY) as server:
        yield server


class _Repo(BaseHTTPRequestHandler):
    """Answers like GitHub's ``GET /repos/{owner}/{repo}`` (the API Request starter's default URL)."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        owner, repo = self.path.strip("/").split("/")[-2:]
        body = json.dumps(
            {
                "full_name": f"{owner}/{repo}",
                "description": "A local stand-in",
                "stargazers_count": 42,
                "open_issues_count": 3,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def repo_api():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Repo)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def server(shared_server):
    """The shared app (tests/editor/conftest.py: loopback allowed by the SSRF rules for the test's LLM, MCP and
    API servers; no model provider from the environment)."""
    return shared_server


@pytest.fixture(scope="module")
def auth(server, llm):
    """The admin's bearer header; the admin's global variables are only the two that point the OpenAI
    Compatible provider at ``llm`` (this module's)."""
    return provider_for_admin(server, llm.url, LLM_KEY)


@pytest.fixture(scope="module")
def context(browser, server, auth):
    """One signed-in browser context for the module."""
    ctx = signed_in_context(browser, server, viewport={"width": 1280, "height": 800})
    yield ctx
    ctx.close()


@pytest.fixture
def page(context, request):
    with watched_page(context, request) as pg:
        yield pg


def starter_names() -> dict[str, str]:
    """File stem -> starter name, from the shipped files."""
    return {
        f.name[: -len(".json")]: json.loads(f.read_text(encoding="utf-8"))["name"]
        for f in sorted(STARTER_FILES.glob("*.json"))
    }


def from_starter(page, name: str) -> str:
    """Create a flow from the starter ``name`` in the New flow dialog; returns the new flow's id."""
    page.goto("/")
    page.get_by_role("button", name="New flow").click()
    dialog = page.get_by_test_id("new-flow-dialog")
    dialog.locator(".starter-card", has=page.locator("strong", has_text=re.compile(f"^{re.escape(name)}$"))).click()
    expect(page).to_have_url(re.compile(r"/flow/[0-9a-f-]{36}$"))
    expect(page.locator(".react-flow__node").first).to_be_visible()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    return page.url.rsplit("/", 1)[-1]


def chat(page, text: str) -> None:
    playground = page.get_by_test_id("playground")
    if not playground.is_visible():
        page.get_by_role("button", name="Playground").click()
    expect(playground).to_be_visible()
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    box.press("Enter")


def last_answer(page):
    return page.get_by_test_id("playground").get_by_test_id("msg-ai").last


def node_status(page, node_id: str):
    return page.get_by_test_id(f"status-{node_id}")


def run_button(page) -> None:
    page.get_by_role("button", name="Run", exact=True).click()


def wait_for(predicate, timeout: float = 30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def system_and_user(request: dict) -> tuple[str, str]:
    system = "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")
    user = [m["content"] for m in request["messages"] if m["role"] == "user"][-1]
    return system, user


# --- the list ------------------------------------------------------------------------------------------------
def test_the_dialog_lists_every_starter(page):
    page.goto("/")
    page.get_by_role("button", name="New flow").click()
    cards = page.get_by_test_id("new-flow-dialog").locator(".starter-card:not(.starter-blank)")
    expect(cards).to_have_count(len(starter_names()))
    assert len(starter_names()) >= 8
    shot(page, "starters-dialog")


# --- one test per starter ------------------------------------------------------------------------------------
def test_basic_chat_echo(page):
    from_starter(page, "Basic Chat Echo")
    chat(page, "ping from the echo")
    expect(last_answer(page)).to_have_text(re.compile("ping from the echo"), timeout=30_000)


def test_text_uppercase(page):
    from_starter(page, "Text Uppercase")
    run_button(page)
    out = "ChatOutput-GGGGG"
    expect(node_status(page, out)).to_contain_text("Done", timeout=30_000)
    preview = page.get_by_test_id(f"preview-{out}")
    expect(preview).to_be_visible()
    text = preview.inner_text()
    assert text.strip() and text == text.upper(), text


def test_basic_prompting(page, llm):
    from_starter(page, "Basic Prompting")
    llm.reply("Start with the Playground, then add a tool.")
    before = len(llm.chat_requests)
    chat(page, "where do I start?")
    expect(last_answer(page)).to_contain_text("Start with the Playground, then add a tool.", timeout=30_000)
    system, user = system_and_user(llm.chat_requests[before])
    assert "friendly guide" in system and user == "where do I start?"
    assert llm.requests[-1]["headers"]["Authorization"] == f"Bearer {LLM_KEY}"  # the Credential variable
    shot(page, "starter-basic-prompting")


def test_memory_chatbot(page, llm):
    from_starter(page, "Memory Chatbot")
    before = len(llm.chat_requests)
    llm.reply("Nice to meet you, Ada.")
    chat(page, "my name is Ada")
    expect(last_answer(page)).to_contain_text("Nice to meet you, Ada.", timeout=30_000)
    llm.reply("Your name is Ada.")
    chat(page, "what is my name?")
    expect(last_answer(page)).to_contain_text("Your name is Ada.", timeout=30_000)
    system, user = system_and_user(llm.chat_requests[before + 1])
    assert user == "what is my name?"
    assert "my name is Ada" in system and "Nice to meet you, Ada." in system  # the earlier turn, from memory


def _upload(server: str, auth: dict[str, str], name: str, content: bytes) -> dict:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: text/plain\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    req = urllib.request.Request(server + "/api/v2/files/", data=body, method="POST")  # noqa: S310 - local server
    req.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    for k, v in auth.items():
        req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        return json.loads(r.read())


def test_document_qa(page, server, auth, llm):
    stored = _upload(server, auth, "handbook.txt", b"The office cat is called Pixel and she likes boxes.")
    from_starter(page, "Document Q&A")
    # the File node's picker lists the caller's uploaded files (value: the stored path)
    picker = page.get_by_test_id("node-File").get_by_test_id("file-picker").locator("select")
    expect(picker.locator(f'option[value="{stored["path"]}"]')).to_have_count(1)
    picker.select_option(stored["path"])
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    before = len(llm.chat_requests)
    llm.reply("The cat is called Pixel.")
    chat(page, "what is the cat called?")
    expect(last_answer(page)).to_contain_text("The cat is called Pixel.", timeout=30_000)
    _system, user = system_and_user(llm.chat_requests[before])
    assert "The office cat is called Pixel" in user and "Question: what is the cat called?" in user
    shot(page, "starter-document-qa")


def test_simple_agent(page, llm):
    from_starter(page, "Simple Agent")
    before = len(llm.chat_requests)
    llm.reply(tool_calls=[("evaluate_expression", {"expression": "1234*5678"})])
    llm.reply("1234 * 5678 = 7006652.")
    chat(page, "what is 1234 times 5678?")
    playground = page.get_by_test_id("playground")
    expect(last_answer(page)).to_contain_text("7006652", timeout=30_000)
    call = playground.get_by_test_id("tool-call")
    expect(call).to_have_count(1)
    call.locator("summary").click()
    expect(call).to_contain_text("7006652")  # the Calculator's own result
    tools = [t["function"]["name"] for t in llm.chat_requests[before].get("tools", [])]
    assert "evaluate_expression" in tools
    shot(page, "starter-simple-agent")


def test_webhook_to_chat(page, server, auth):
    flow_id = from_starter(page, "Webhook to Chat")
    run_button(page)  # no payload yet: the parser shows the empty body
    expect(node_status(page, "ChatOutput-CCCCC")).to_contain_text("Done", timeout=30_000)
    # the webhook itself (what an external system calls), then its message in the playground
    key = api(server, "POST", "/api/v1/api_key/", body={"name": "webhook"}, headers=auth)[1]["api_key"]
    status, started = api(
        server,
        "POST",
        f"/api/v1/webhook/{flow_id}",
        body={"event": "signup", "user": "ada"},
        headers={"x-api-key": key},
    )
    assert status == 202, started
    wait_for(lambda: api(server, "GET", started["status_url"], headers=auth)[1].get("status") == "finished")
    page.get_by_role("button", name="Playground").click()
    expect(last_answer(page)).to_contain_text('"user": "ada"', timeout=30_000)


def test_data_transformation(page):
    from_starter(page, "Data Transformation")
    chat(
        page,
        json.dumps({"orders": [{"customer": "bob", "qty": 1, "price": 12}, {"customer": "ada", "qty": 2, "price": 3}]}),
    )
    answer = last_answer(page)
    expect(answer).to_contain_text('"total": 18', timeout=30_000)
    expect(answer).to_contain_text('"ada"')
    shot(page, "starter-data-transformation")


def test_api_request(page, repo_api):
    from_starter(page, "API Request")
    url = page.get_by_test_id("node-APIRequest").get_by_label("URL", exact=True)
    assert url.input_value() == "https://api.github.com/repos/pallets/flask"
    url.fill(repo_api + "/repos/pallets/flask")  # the same answer, from loopback (no network in tests)
    url.blur()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    run_button(page)
    expect(node_status(page, "ChatOutput-AR003")).to_contain_text("Done", timeout=30_000)
    preview = page.get_by_test_id("preview-ChatOutput-AR003")
    expect(preview).to_contain_text("pallets/flask: A local stand-in (42 stars, 3 open issues)")
    shot(page, "starter-api-request")


def test_mcp_tool_agent(page, server, auth, llm, sdk_server):
    calc = f"calc-{uuid.uuid4().hex[:6]}"  # the shared app: the MCP module adds a "calc" of its own
    status, body = api(
        server,
        "POST",
        f"/api/v2/mcp/servers/{calc}",
        body={"url": sdk_server, "transport": "streamablehttp"},
        headers=auth,
    )
    assert status in (200, 201), body
    from_starter(page, "MCP Tool Agent")
    tools_node = page.get_by_test_id("node-MCPTools")
    tools_node.get_by_label("MCP server", exact=True).select_option(calc)
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    before = len(llm.chat_requests)
    llm.reply(tool_calls=[("shout", {"text": "quiet please"})])
    llm.reply("The server shouted back: QUIET PLEASE")
    chat(page, "shout 'quiet please' with the MCP tool")
    expect(last_answer(page)).to_contain_text("QUIET PLEASE", timeout=30_000)
    call = page.get_by_test_id("playground").get_by_test_id("tool-call")
    expect(call).to_have_count(1)
    call.locator("summary").click()
    expect(call).to_contain_text("QUIET PLEASE")  # the MCP server's own result
    tools = [t["function"]["name"] for t in llm.chat_requests[before].get("tools", [])]
    assert "shout" in tools and "add" in tools
    shot(page, "starter-mcp-tool-agent")


def test_every_starter_has_a_test():
    tested = {
        "Basic Chat Echo",
        "Text Uppercase",
        "Basic Prompting",
        "Memory Chatbot",
        "Document Q&A",
        "Simple Agent",
        "Webhook to Chat",
        "Data Transformation",
        "API Request",
        "MCP Tool Agent",
    }
    assert set(starter_names().values()) == tested


# --- category colours ------------------------------------------------------------------------------------------
CONTRAST = """(el) => {
  const parse = (c) => {
    const probe = document.createElement('canvas').getContext('2d');
    probe.fillStyle = '#000'; probe.fillStyle = c; probe.fillRect(0, 0, 1, 1);
    const d = probe.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2]];
  };
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = ([r, g, b]) => 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const s = getComputedStyle(el);
  const panel = parse(getComputedStyle(el.closest('.gnode, .sidebar') || document.body).backgroundColor);
  const fg = parse(s.color), chip = parse(s.backgroundColor);
  return {category: el.dataset.category, color: fg.join(','), chip: ratio(fg, chip), panel: ratio(fg, panel)};
}"""


def test_category_icon_colours_in_light_and_dark(page):
    page.goto("/")
    page.get_by_role("button", name="New flow").click()
    page.get_by_role("button", name=re.compile("Blank flow")).click()
    icons = page.locator(".sidebar .cat-icon[data-category]")
    expect(icons.first).to_be_visible()
    categories = icons.evaluate_all("(els) => els.map((e) => e.dataset.category)")
    assert len(categories) >= 8, categories
    seen: dict[str, dict[str, str]] = {}
    for theme in ("light", "dark"):
        page.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{theme}')")
        measured = [icons.nth(i).evaluate(CONTRAST) for i in range(icons.count())]
        colours = {m["category"]: m["color"] for m in measured}
        assert len(set(colours.values())) == len(colours), (theme, colours)  # one colour per category
        for m in measured:
            assert m["chip"] >= 4.5 and m["panel"] >= 3.0, (theme, m)
        seen[theme] = colours
        panel = page.evaluate("() => getComputedStyle(document.querySelector('.sidebar')).backgroundColor")
        for part in (".react-flow__minimap", ".react-flow__controls-button"):  # no light island on a dark canvas
            assert page.locator(part).first.evaluate("(e) => getComputedStyle(e).backgroundColor") == panel, part
        shot(page, f"category-icons-{theme}")
    assert seen["light"] != seen["dark"]
    muted = page.evaluate("() => getComputedStyle(document.documentElement).getPropertyValue('--muted').trim()")
    assert muted  # the grey the icons used to inherit in the palette is not one of the category colours
    # a node on the canvas takes its category's colour too
    page.evaluate("() => document.documentElement.setAttribute('data-theme', 'light')")
    page.get_by_placeholder("Search components").fill("Chat Input")
    page.get_by_test_id("component-ChatInput").click()
    node_icon = page.get_by_test_id("node-ChatInput").locator(".gnode-icon")
    assert node_icon.evaluate(CONTRAST)["color"] == seen["light"]["input_output"]
