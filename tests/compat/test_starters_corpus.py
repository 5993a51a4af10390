"""The compatibility corpus (issue 27): every starter project of the reference releases the service
implements (``langflow-base`` 1.12.8, 0.11.6, 0.10.3; fetched at test time, see :mod:`tests.compat.corpus`)
is uploaded, its node types resolved in the catalog, and run through ``POST /api/v1/run`` with every model
field pointed by tweak at the local OpenAI-protocol test server (and a stored file where a flow reads one).
Each ends 200 with the model's answer in the outputs, or, where the flow needs a vendor service no bundle
provides, a 4xx naming the component. One test per (version, starter): the table is the test report."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from core.app import create_app, state
from tests.compat import corpus
from tests.conftest import make_user, superuser
from tests.knowledge.conftest import wait_kb
from tests.openai_server import OpenAIServer

MODEL = [{"name": "gpt-4o-mini", "provider": "OpenAI Compatible", "icon": "", "category": "", "metadata": {}}]
KEY = "sk-compat"
KB = "compat_docs"
FACT = "Pixel is the office cat."

#: starters that need a vendor service no bundle provides: the run answers 4xx naming this component
VENDOR: dict[str, str] = {}
#: starters that need a feature beyond this corpus' fixes (strict: they fail today, and must be revisited)
XFAIL: dict[str, str] = {
    "Content Aggregator": "Web Search reads news.google.com: the suite has no network beyond loopback",
}


def _params() -> list[Any]:
    out = []
    for version in corpus.VERSIONS:
        found = corpus.starters(version)
        if isinstance(found, str):
            out.append(pytest.param(version, None, id=f"{version}-unavailable", marks=pytest.mark.skip(reason=found)))
            continue
        for name in sorted(found):
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[name])] if name in XFAIL else []
            out.append(pytest.param(version, name, id=f"{version}-{name}", marks=marks))
    return out


@pytest.fixture(scope="module")
def llm():
    with OpenAIServer(models=["gpt-4o-mini"], api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def env(tmp_path_factory, llm):
    with pytest.MonkeyPatch.context() as patch:  # the knowledge base's embedding provider reads them
        patch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
        patch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)
        yield from _env(tmp_path_factory, llm)


def _env(tmp_path_factory, llm):
    config = {
        "config_dir": tmp_path_factory.mktemp("compat"),
        "rate_limit_storage_uri": "memory://",
        "ssrf_allowed_hosts": ("127.0.0.1",),
    }
    app = create_app(config=config)
    app.testing = True
    client = app.test_client()
    alice = make_user(client, superuser(client), username="compat")
    for name, value, kind in (
        ("OPENAI_COMPATIBLE_BASE_URL", llm.url, "Generic"),
        ("OPENAI_COMPATIBLE_API_KEY", KEY, "Credential"),
        ("OPENAI_API_KEY", KEY, "Credential"),
    ):
        made = client.post(
            "/api/v1/variables/",
            json={"name": name, "value": value, "type": kind, "default_fields": []},
            headers=alice.bearer,
        )
        assert made.status_code == 201, made.get_json()
    sample = client.post("/api/v2/files", data={"file": (io.BytesIO(FACT.encode()), "cat.txt")}, headers=alice.bearer)
    assert sample.status_code == 201, sample.get_json()
    kb = {"name": KB, "embedding_provider": "OpenAI Compatible", "embedding_model": "test-embedding"}
    assert client.post("/api/v1/knowledge_bases/", json=kb, headers=alice.bearer).status_code == 201
    fed = client.post(
        f"/api/v1/knowledge_bases/{KB}/ingest", json={"text": "Pixel is the office cat."}, headers=alice.bearer
    )
    assert fed.status_code == 202, fed.get_json()
    wait_kb(client, alice, KB, timeout=60)
    yield app, client, alice, sample.get_json()["path"]
    state(app).jobs.close()


def _tweaks(data: dict[str, Any], registry: Any, file_path: str) -> dict[str, Any]:
    """Every model field the local model; every file reader the stored sample file."""
    tweaks: dict[str, Any] = {}
    for n in data["nodes"]:
        if n.get("type") == "noteNode":
            continue
        klass = registry.get(n["data"]["type"])
        if klass is None:
            continue
        inputs = klass.input_map()
        mine: dict[str, Any] = {}
        if "model" in inputs and type(inputs["model"]).__name__ == "ModelInput":
            mine["model"] = MODEL
        if klass.key == "File":
            mine["path"] = [file_path]
        if "knowledge_base" in inputs:
            mine["knowledge_base"] = KB
        if mine:
            tweaks[n["data"]["id"]] = mine
    return tweaks


def _texts(body: Any) -> list[str]:
    """Every message text of a run response."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            message = value.get("message")
            if isinstance(message, dict) and isinstance(message.get("text"), str):
                found.append(message["text"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body)
    return found


@pytest.mark.parametrize(("version", "name"), _params())
def test_starter_runs(env, llm, version, name):
    app, client, alice, file_path = env
    document = corpus.starters(version)[name]  # type: ignore[index]
    raw = json.dumps(document).encode()
    uploaded = client.post(
        "/api/v1/flows/upload/",
        data={"file": (io.BytesIO(raw), f"{name}.json")},
        headers=alice.bearer,
        content_type="multipart/form-data",
    )
    assert uploaded.status_code == 201, uploaded.get_json()
    [flow] = uploaded.get_json()
    registry = state(app).components.current
    data = document["data"]
    unknown = sorted(
        {n["data"]["type"] for n in data["nodes"] if n.get("type") != "noteNode"}
        - set(t for t in (n["data"]["type"] for n in data["nodes"] if n.get("type") != "noteNode") if t in registry)
    )
    body = {"input_value": "hello", "tweaks": _tweaks(data, registry, file_path)}
    asked = len(llm.chat_requests)
    response = client.post(f"/api/v1/run/{flow['id']}", json=body, headers=alice.key)
    if name in VENDOR or unknown:
        assert 400 <= response.status_code < 500, (response.status_code, response.get_json())
        component = VENDOR.get(name) or unknown[0]
        assert component in json.dumps(response.get_json()), response.get_json()
        assert unknown, f"{name}: every node resolves now; take it off VENDOR"
        return
    assert response.status_code == 200, response.get_json()
    texts = _texts(response.get_json())
    if any("model" in t for t in body["tweaks"].values()):
        assert len(llm.chat_requests) > asked, "the model was not asked"
    else:  # no model (Knowledge Retrieval): the answer is the knowledge base's row, read as the reference's
        assert any(FACT in t for t in texts), texts
    assert texts and any(t.strip() for t in texts), texts  # an answer (some flows format the model's, or a table)
