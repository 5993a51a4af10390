"""The A2A Agent component calling an agent on a second service instance (a real ``service run`` subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from service_bundle_a2a.agent import A2AAgent
from service_bundle_standard.bundle import all_components

from core.engine import Registry
from tests import flowkit
from tests.build.buildkit import child_env
from tests.conftest import superuser
from tests.jobkit import stop_processes
from tests.run.runkit import chat_echo, edge, flow_data
from tests.serverkit import auto_login, service_run

REGISTRY = Registry.from_classes([*all_components(), A2AAgent])


def node(key: str, node_id: str, **values):
    return flowkit.node(key, node_id, registry=REGISTRY, **values)


pytestmark = pytest.mark.slow

REMOTE_PLUGINS = "accounts,flows,variables,run,monitor,a2a,standard"


class Remote:
    """A second service instance with the A2A surface on (SQLite, in-process jobs, its own config dir)."""

    def __init__(self, tmp: Path) -> None:
        env = child_env(tmp, SERVICE_PLUGINS=REMOTE_PLUGINS, SERVICE_A2A_ENABLED="true")
        self.log = tmp / "remote.log"
        self.proc, self.base = service_run(env, self.log, workers=1)
        token = auto_login(self.base)
        self.headers = {"Authorization": f"Bearer {token}"}
        self.api_key = self.post("/api/v1/api_key/", {"name": "a2a"})["api_key"]

    def post(self, path: str, body: dict) -> dict:
        response = requests.post(self.base + path, json=body, headers=self.headers, timeout=30)
        assert response.status_code in (200, 201), response.text
        return response.json()

    def agent(self, data: dict, auth_type: str, name: str) -> str:
        folder = self.post("/api/v1/projects/", {"name": f"p-{name}", "auth_settings": {"auth_type": auth_type}})
        body = {"name": name, "data": data, "folder_id": folder["id"], "flow_type": "agent", "a2a_enabled": True}
        return self.post("/api/v1/flows/", body)["id"]

    def stop(self) -> None:
        stop_processes([self.proc], timeout=10)


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    server = Remote(tmp_path_factory.mktemp("remote"))
    yield server
    server.stop()


def _caller_flow(agent_url: str, **values) -> dict:
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    a2a = node("A2AAgent", "A2AAgent-CCCCC", agent_url=agent_url, **values)
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    return flow_data(
        [chat_in, a2a, chat_out],
        [edge(chat_in, "message", a2a, "input_value"), edge(a2a, "response", chat_out, "input_value")],
    )


def _run(client, caller, flow_id, text, session="s1"):
    response = client.post(
        f"/api/v1/run/{flow_id}", json={"input_value": text, "session_id": session}, headers=caller.key
    )
    return response


def _answer(response) -> str:
    return response.get_json()["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def _create(client, caller, data, name):
    response = client.post("/api/v1/flows/", json={"name": name, "data": data}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


PLUGINS = ["accounts", "flows", "variables", "run", "monitor", "standard", "a2a_agent"]


def test_a_flow_calls_a_remote_agent(make_app, remote):
    app = make_app(plugins=PLUGINS, ssrf_allowed_hosts=("127.0.0.1",))
    client = app.test_client()
    me = superuser(client)
    agent_id = remote.agent(chat_echo(), "none", "echo")
    base = f"{remote.base}/api/v1/a2a/{agent_id}"
    flow_id = _create(client, me, _caller_flow(base), "caller")
    response = _run(client, me, flow_id, "hello remote")
    assert response.status_code == 200, response.get_json()
    assert _answer(response) == "hello remote"
    # the card URL works as well as the base URL
    flow2 = _create(client, me, _caller_flow(f"{base}/.well-known/agent-card.json"), "caller-card")
    assert _answer(_run(client, me, flow2, "by card")) == "by card"


def test_the_api_key_comes_from_a_variable_and_the_context_is_kept(make_app, remote):
    app = make_app(plugins=PLUGINS, ssrf_allowed_hosts=("127.0.0.1",))
    client = app.test_client()
    me = superuser(client)
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    memory = node("Memory", "Memory-MMMMM")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    history = flow_data([chat_in, memory, chat_out], [edge(memory, "messages_text", chat_out, "input_value")])
    agent_id = remote.agent(history, "apikey", "memory")
    base = f"{remote.base}/api/v1/a2a/{agent_id}"

    keyless = _create(client, me, _caller_flow(base), "keyless")
    failed = _run(client, me, keyless, "no key")
    assert failed.status_code == 500
    assert "requires a valid API key (HTTP 401)" in failed.get_json()["detail"]

    created = client.post(
        "/api/v1/variables/",
        json={"name": "REMOTE_KEY", "value": remote.api_key, "type": "Credential", "default_fields": []},
        headers=me.bearer,
    )
    assert created.status_code == 201, created.get_json()
    data = _caller_flow(base)
    field = next(n for n in data["nodes"] if n["id"] == "A2AAgent-CCCCC")["data"]["node"]["template"]["api_key"]
    field.update(value="REMOTE_KEY", load_from_db=True)
    flow_id = _create(client, me, data, "keyed")
    first = _answer(_run(client, me, flow_id, "my name is Ada", session="conv"))
    assert "my name is Ada" in first
    second = _answer(_run(client, me, flow_id, "what is my name?", session="conv"))
    assert "my name is Ada" in second and "what is my name?" in second  # same remote context
    other = _answer(_run(client, me, flow_id, "fresh start", session="other"))
    assert "Ada" not in other  # another session: another remote context
    assert remote.api_key not in str(first) + str(second)


def test_ssrf_rules_apply_to_the_component(make_app, remote):
    app = make_app(plugins=PLUGINS)  # no allowed hosts: loopback and private addresses are refused
    client = app.test_client()
    me = superuser(client)
    agent_id = remote.agent(chat_echo(), "none", "echo-ssrf")
    for url in (
        f"{remote.base}/api/v1/a2a/{agent_id}",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/agent",
        "file:///etc/passwd",
    ):
        flow_id = _create(client, me, _caller_flow(url), f"ssrf-{abs(hash(url))}")
        response = _run(client, me, flow_id, "hi")
        assert response.status_code == 500, url
        detail = response.get_json()["detail"]
        assert "Could not read the agent card" in detail, detail
