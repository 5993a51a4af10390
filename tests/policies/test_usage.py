"""Component usage: counting rules, usage flows, the cache and its invalidation, the backfill."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from tests.conftest import make_user, superuser
from tests.policies.conftest import PLUGINS
from tests.run.runkit import chat_echo, create_flow, flow_data, node

USAGE = "/api/v1/catalog-policy/usage"
FLOWS = "/api/v1/catalog-policy/usage/flows"
EXAMPLE_FILES = sorted((Path(__file__).resolve().parents[2] / "plugins/flows/service_flows/examples").glob("*.json"))


def _example_usage() -> tuple[dict[str, int], int, list[str]]:
    """What the shipped example flows count (each component key once per flow), how many there are, and the
    names of those with a Chat Input: the examples are scanned like every stored flow."""
    counts: Counter[str] = Counter()
    with_chat_input = []
    for path in EXAMPLE_FILES:
        flow = json.loads(path.read_text())
        types = {n["data"]["type"] for n in flow["data"]["nodes"]}
        counts.update(types)
        if "ChatInput" in types:
            with_chat_input.append(flow["name"])
    return dict(counts), len(EXAMPLE_FILES), with_chat_input


EXAMPLES, N_EXAMPLES, CHAT_INPUT_EXAMPLES = _example_usage()


def prompt_flow(alias: bool = False):
    """Two prompt nodes (one under the legacy key when ``alias``) and a note: each counts once."""
    one = node("Prompt Template", "Prompt-AAAAA", template="a")
    two = node("Prompt Template", "Prompt-BBBBB", template="b")
    if alias:
        two["data"]["type"] = "Prompt"
    note = {"id": "note-1", "type": "noteNode", "data": {"id": "note-1", "type": "note", "node": {"description": "x"}}}
    return flow_data([one, two, note], [])


def test_counting_rules(client, admin):
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    assert client.get(USAGE, headers=admin.bearer).get_json() == {"components": EXAMPLES, "flows_scanned": N_EXAMPLES}
    create_flow(client, alice, prompt_flow(alias=True), name="p1")
    create_flow(client, bob, prompt_flow(), name="p2")
    create_flow(client, bob, chat_echo(), name="echo")
    body = client.get(USAGE, headers=admin.bearer).get_json()
    assert body["flows_scanned"] == N_EXAMPLES + 3  # every user's flows and the examples
    # canonical key; once per flow despite two nodes
    assert body["components"]["Prompt Template"] == EXAMPLES.get("Prompt Template", 0) + 2
    assert "Prompt" not in body["components"]
    assert body["components"]["note"] == EXAMPLES["note"] + 2
    assert body["components"]["ChatOutput"] == EXAMPLES["ChatOutput"] + 1


def test_usage_flows_sorted_limited_and_counted(client, admin):
    alice = make_user(client, admin, username="alice")
    made = [create_flow(client, alice, chat_echo(), name=n) for n in ("b", "a", "c")]
    body = client.get(FLOWS + "?component=ChatInput&limit=2", headers=admin.bearer).get_json()
    assert body["component"] == "ChatInput" and body["total"] == 3 + len(CHAT_INPUT_EXAMPLES)  # flows and examples
    ordered = sorted([*CHAT_INPUT_EXAMPLES, "a", "b", "c"])  # code-point order: capitals first
    assert [f["name"] for f in body["flows"]] == ordered[:2]
    every = client.get(FLOWS + "?component=ChatInput", headers=admin.bearer).get_json()
    assert [f["name"] for f in every["flows"]] == ordered
    assert {f["id"] for f in every["flows"]} >= {m["id"] for m in made}
    alias = client.get(FLOWS + "?component=Prompt", headers=admin.bearer).get_json()
    # an alias asks for its canonical key: only the examples use Prompt Template here
    assert alias["component"] == "Prompt" and alias["total"] == EXAMPLES.get("Prompt Template", 0)
    for bad in ("component=", "", "component=x&limit=0", "component=x&limit=501", "component=" + "x" * 256):
        assert client.get(f"{FLOWS}?{bad}", headers=admin.bearer).status_code == 422, bad


def test_same_name_flows_sort_by_id(client, admin):
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    ids = sorted(
        [
            create_flow(client, alice, chat_echo(), name="same")["id"],
            create_flow(client, bob, chat_echo(), name="same")["id"],
        ]
    )
    body = client.get(FLOWS + "?component=ChatInput", headers=admin.bearer).get_json()
    assert [f["id"] for f in body["flows"] if f["name"] == "same"] == ids


def test_flow_writes_invalidate_the_cache(client, admin):
    alice = make_user(client, admin, username="alice")
    base = client.get(USAGE, headers=admin.bearer).get_json()["components"]["ChatInput"]
    flow = create_flow(client, alice, chat_echo(), name="f")
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"]["ChatInput"] == base + 1
    client.patch(f"/api/v1/flows/{flow['id']}", json={"data": prompt_flow()}, headers=alice.bearer)
    after = client.get(USAGE, headers=admin.bearer).get_json()["components"]
    prompts = EXAMPLES.get("Prompt Template", 0)
    assert after["ChatInput"] == base and after["Prompt Template"] == prompts + 1
    client.delete(f"/api/v1/flows/{flow['id']}", headers=alice.bearer)
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"].get("Prompt Template", 0) == prompts
    many = [create_flow(client, alice, chat_echo(), name=f"m{i}")["id"] for i in range(2)]
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"]["ChatInput"] == base + 2
    assert client.delete("/api/v1/flows/", json=many, headers=alice.bearer).get_json() == {"deleted": 2}
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"]["ChatInput"] == base
    client.delete(f"/api/v1/users/{alice.id}", headers=admin.bearer)
    assert client.get(USAGE, headers=admin.bearer).get_json()["flows_scanned"] == N_EXAMPLES


def test_other_processes_lag_by_at_most_the_ttl(make_app):
    writer = make_app(plugins=PLUGINS)
    reader = make_app(plugins=PLUGINS, SERVICE_USAGE_SCAN_CACHE_TTL_SECONDS="0.5")
    wc, rc = writer.test_client(), reader.test_client()
    admin = superuser(wc)
    alice = make_user(wc, admin, username="alice")
    assert rc.get(USAGE, headers=admin.bearer).get_json()["flows_scanned"] == N_EXAMPLES
    create_flow(wc, alice, chat_echo(), name="f")
    assert rc.get(USAGE, headers=admin.bearer).get_json()["flows_scanned"] == N_EXAMPLES  # cached in the reader
    time.sleep(0.6)
    assert rc.get(USAGE, headers=admin.bearer).get_json()["flows_scanned"] == N_EXAMPLES + 1


def test_flows_stored_before_the_plugin_are_backfilled(make_app):
    before = make_app(plugins=["accounts", "flows", "standard"])
    client = before.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    create_flow(client, alice, chat_echo(), name="old")
    governed = make_app(plugins=PLUGINS).test_client()
    body = governed.get(USAGE, headers=admin.bearer).get_json()
    assert body["flows_scanned"] == N_EXAMPLES + 1 and body["components"]["ChatInput"] == EXAMPLES["ChatInput"] + 1
    flows = governed.get(FLOWS + "?component=ChatInput", headers=admin.bearer).get_json()
    assert "old" in [f["name"] for f in flows["flows"]]


def test_deleting_a_project_removes_its_flows_from_usage(client, admin):
    alice = make_user(client, admin, username="alice")
    project = client.post(
        "/api/v1/projects/", json={"name": "p", "flows_list": [], "components_list": []}, headers=alice.bearer
    ).get_json()
    create_flow(client, alice, prompt_flow(), name="in project", folder_id=project["id"])
    prompts = EXAMPLES.get("Prompt Template", 0)
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"]["Prompt Template"] == prompts + 1
    assert client.delete(f"/api/v1/projects/{project['id']}", headers=alice.bearer).status_code == 204
    body = client.get(USAGE, headers=admin.bearer).get_json()
    assert body["components"].get("Prompt Template", 0) == prompts and body["flows_scanned"] == N_EXAMPLES
