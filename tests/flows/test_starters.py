"""The starter flows: the committed files are what ``tests/flows/starter_flows.py`` builds from the catalog,
and each one runs over HTTP with every plugin it needs (the LLM ones against the local OpenAI-wire test
server through the owner's global variables, as a user sets them). The browser tests of each starter are in
``tests/editor/test_e2e_starters.py``."""

from __future__ import annotations

import io
import json

import pytest

from tests.conftest import make_user, superuser
from tests.flows import starter_flows
from tests.mcp.test_mcp_servers_component import http_server  # noqa: F401 - fixture
from tests.openai_server import OpenAIServer
from tests.run.runkit import answer, create_flow, wait_jobs

pytest.importorskip("mcp")

PLUGINS = [
    "accounts",
    "flows",
    "variables",
    "run",
    "monitor",
    "files",
    "mcp",
    "standard",
    "models",
    "documents",
    "mcp_tools",
]


def test_committed_starters_are_what_the_generator_builds():
    shipped = {p.name[: -len(".json")] for p in starter_flows.EXAMPLES.glob("*.json")}
    assert set(starter_flows.STARTERS) <= shipped
    assert len(shipped) >= 8
    for stem, build in starter_flows.STARTERS.items():
        committed = (starter_flows.EXAMPLES / f"{stem}.json").read_text(encoding="utf-8")
        assert committed == starter_flows.render(build), f"{stem}.json is stale: python -m tests.flows.starter_flows"


def test_starters_use_catalog_nodes_only():
    registry = starter_flows.registry()
    for path in starter_flows.EXAMPLES.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
        for n in data["nodes"]:
            if n["type"] == "noteNode":
                continue
            klass = registry[n["data"]["type"]]
            template = n["data"]["node"]["template"]
            declared = {i.name for i in klass.inputs}
            custom = set((n["data"]["node"].get("custom_fields") or {}).get("template", []))
            assert set(template) - {"_type", "code", "tools_metadata"} <= declared | custom, (path.name, n["id"])
        ids = {n["id"] for n in data["nodes"]}
        for e in data["edges"]:
            assert e["source"] in ids and e["target"] in ids, (path.name, e["id"])


@pytest.fixture(scope="module")
def llm():
    with OpenAIServer(models=["gpt-4o-mini"], api_key="sk-starters") as server:
        yield server


@pytest.fixture
def env(make_app, llm, http_server):  # noqa: F811 - the fixture
    app = make_app(plugins=PLUGINS, ssrf_allowed_hosts=("127.0.0.1",))
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    for name, value, kind in (
        ("OPENAI_COMPATIBLE_BASE_URL", llm.url, "Generic"),
        ("OPENAI_COMPATIBLE_API_KEY", "sk-starters", "Credential"),
    ):
        made = client.post(
            "/api/v1/variables/",
            json={"name": name, "value": value, "type": kind, "default_fields": []},
            headers=alice.bearer,
        )
        assert made.status_code == 201, made.get_json()
    added = client.post(
        "/api/v2/mcp/servers/calc", json={"url": http_server, "transport": "streamablehttp"}, headers=alice.bearer
    )
    assert added.status_code in (200, 201), added.get_json()
    return app, client, alice


def _starter(client, alice, name):
    starters = client.get("/api/v1/starter-projects/", headers=alice.bearer).get_json()
    found = next(s for s in starters if s["name"] == name)
    return create_flow(client, alice, found["data"], name=name)


def _run(client, alice, flow, text="", tweaks=None, session=None):
    body = {"input_value": text, "tweaks": tweaks or {}}
    if session:
        body["session_id"] = session
    response = client.post(f"/api/v1/run/{flow['id']}", json=body, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    return answer(response.get_json())


def test_llm_starters_run(env, llm):
    _app, client, alice = env
    llm.reply("a pirate answer")
    assert _run(client, alice, _starter(client, alice, "Basic Prompting"), "hi") == "a pirate answer"
    assert "friendly guide" in llm.chat_requests[-1]["messages"][0]["content"]

    memory = _starter(client, alice, "Memory Chatbot")
    llm.reply("hello Ada")
    _run(client, alice, memory, "I am Ada", session="s1")
    llm.reply("you are Ada")
    assert _run(client, alice, memory, "who am I?", session="s1") == "you are Ada"
    assert "I am Ada" in llm.chat_requests[-1]["messages"][0]["content"]

    upload = client.post(
        "/api/v2/files/", data={"file": (io.BytesIO(b"Pixel is the office cat."), "cat.txt")}, headers=alice.bearer
    )
    assert upload.status_code == 201, upload.get_json()
    qa = _starter(client, alice, "Document Q&A")
    llm.reply("Pixel")
    tweaks = {"File-DQ001": {"path": [upload.get_json()["path"]]}}
    assert _run(client, alice, qa, "who is the cat?", tweaks) == "Pixel"
    assert "Pixel is the office cat." in llm.chat_requests[-1]["messages"][-1]["content"]


def test_agent_starters_call_their_tools(env, llm):
    _app, client, alice = env
    llm.reply(tool_calls=[("evaluate_expression", {"expression": "6*7"})])
    llm.reply("42")
    assert _run(client, alice, _starter(client, alice, "Simple Agent"), "6 times 7?") == "42"
    assert "42" in llm.chat_requests[-1]["messages"][-1]["content"]  # the calculator's result went back

    # MCP Tools in tool mode hands the agent the server's own tools (not one tool per output)
    agent = _starter(client, alice, "MCP Tool Agent")
    llm.reply(tool_calls=[("shout", {"text": "hey"})])
    llm.reply("done")
    tweaks = {"MCPTools-MT002": {"mcp_server": {"name": "calc"}}}
    assert _run(client, alice, agent, "shout hey", tweaks) == "done"
    offered = {t["function"]["name"] for t in llm.chat_requests[-2]["tools"]}
    assert {"add", "shout"} <= offered and "build_output" not in offered
    assert llm.chat_requests[-1]["messages"][-1]["content"] == "HEY"


def test_offline_starters_run(env):
    app, client, alice = env
    data = json.dumps(
        {"orders": [{"customer": "bob", "qty": 1, "price": 12}, {"customer": "ada", "qty": 2, "price": 3}]}
    )
    text = _run(client, alice, _starter(client, alice, "Data Transformation"), data)
    assert '"total": 18' in text and '"ada"' in text

    hook = _starter(client, alice, "Webhook to Chat")
    started = client.post(f"/api/v1/webhook/{hook['id']}", data='{"user": "ada"}', headers=alice.key)
    assert started.status_code == 202
    wait_jobs(app)
    status = client.get(started.get_json()["status_url"], headers=alice.key).get_json()
    assert status["status"] == "finished" and '"user": "ada"' in answer(status["result"])


def test_api_request_starter_is_refused_a_private_address(env):
    """Its default URL is public (no network in tests); a private one is refused by the SSRF rules, visibly."""
    _app, client, alice = env
    flow = _starter(client, alice, "API Request")
    response = client.post(
        f"/api/v1/run/{flow['id']}",
        json={"tweaks": {"APIRequest-AR001": {"url_input": "http://10.255.0.1/repos/x/y"}}},
        headers=alice.key,
    )
    assert response.status_code == 500 and "10.255.0.1" in response.get_json()["detail"]
