"""Policy endpoints: shapes, limits (422), superusers only, managed externally, provider ids, change log."""

from __future__ import annotations

import json

import pytest

from tests.conftest import make_user
from tests.policies.conftest import PLUGINS, Providers

COMPONENTS = "/api/v1/catalog-policy/components"
TEMPLATES = "/api/v1/catalog-policy/templates"
PROVIDERS = "/api/v1/model-provider-policy"
CHANGES = "/api/v1/policy-changes"


@pytest.mark.parametrize("path", [COMPONENTS, TEMPLATES])
def test_read_and_replace_the_complete_set(client, admin, path):
    assert client.get(path, headers=admin.bearer).get_json() == {"blocked": [], "managed_externally": False}
    put = client.put(path, json={"blocked": ["ChatOutput", "APIRequest", "ChatOutput"]}, headers=admin.bearer)
    assert put.status_code == 200
    assert put.get_json() == {"blocked": ["APIRequest", "ChatOutput"], "managed_externally": False}
    # a PUT is the complete set: what is not listed any more is unblocked
    client.put(path, json={"blocked": ["APIRequest"]}, headers=admin.bearer)
    assert client.get(path, headers=admin.key).get_json()["blocked"] == ["APIRequest"]


@pytest.mark.parametrize("path", [COMPONENTS, TEMPLATES])
def test_limits_are_422_with_the_item_named(client, admin, path):
    ok = client.put(path, json={"blocked": [f"k{i}" for i in range(1000)]}, headers=admin.bearer)
    assert ok.status_code == 200 and len(ok.get_json()["blocked"]) == 1000
    ok255 = client.put(path, json={"blocked": ["x" * 255]}, headers=admin.bearer)
    assert ok255.status_code == 200
    too_many = client.put(path, json={"blocked": [f"k{i}" for i in range(1001)]}, headers=admin.bearer)
    assert too_many.status_code == 422
    assert too_many.get_json()["detail"][0]["loc"] == ["body", "blocked"]
    empty = client.put(path, json={"blocked": ["fine", ""]}, headers=admin.bearer)
    assert empty.status_code == 422 and empty.get_json()["detail"][0]["loc"] == ["body", "blocked", "1"]
    long = client.put(path, json={"blocked": ["x" * 256]}, headers=admin.bearer)
    assert long.status_code == 422
    missing = client.put(path, json={}, headers=admin.bearer)
    assert missing.status_code == 422 and missing.get_json()["detail"][0]["loc"] == ["body", "blocked"]
    wrong = client.put(path, json={"blocked": "ChatOutput"}, headers=admin.bearer)
    assert wrong.status_code == 422
    # nothing of a refused replacement was kept
    assert client.get(path, headers=admin.bearer).get_json()["blocked"] == ["x" * 255]


def test_superusers_only(client, admin):
    alice = make_user(client, admin, username="alice")
    for method, path, body in [
        ("get", COMPONENTS, None),
        ("put", COMPONENTS, {"blocked": []}),
        ("get", TEMPLATES, None),
        ("put", TEMPLATES, {"blocked": []}),
        ("get", "/api/v1/catalog-policy/usage", None),
        ("get", "/api/v1/catalog-policy/usage/flows?component=ChatInput", None),
        ("get", PROVIDERS, None),
        ("put", PROVIDERS, {"approved_provider_ids": []}),
        ("post", PROVIDERS, {"approved_provider_ids": []}),
        ("get", CHANGES, None),
    ]:
        response = getattr(client, method)(path, json=body, headers=alice.bearer)
        assert response.status_code == 403, (method, path)
        assert response.get_json() == {"detail": "The user doesn't have enough privileges"}
        assert getattr(client, method)(path, json=body).status_code == 403  # no credentials at all


def test_managed_externally_by_environment_refuses_replacement(make_app, tmp_path):
    app = make_app(plugins=PLUGINS, SERVICE_POLICIES_BLOCKED_COMPONENTS="ChatOutput, APIRequest")
    client = app.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    assert client.get(COMPONENTS, headers=admin.bearer).get_json() == {
        "blocked": ["APIRequest", "ChatOutput"],
        "managed_externally": True,
    }
    refused = client.put(COMPONENTS, json={"blocked": []}, headers=admin.bearer)
    assert refused.status_code == 409
    assert "SERVICE_POLICIES_BLOCKED_COMPONENTS" in refused.get_json()["detail"]
    # the template policy is not managed externally: it can still be replaced
    assert client.put(TEMPLATES, json={"blocked": ["x"]}, headers=admin.bearer).status_code == 200
    config = client.get("/api/v1/config", headers=admin.bearer).get_json()
    assert config["catalog_governance_enabled"] is True
    assert {"ChatOutput", "Chat Output", "APIRequest", "API Request"} <= set(config["blocked_component_types"])


def test_managed_externally_by_file(make_app, tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"blocked_templates": ["basic-chat-echo"], "approved_provider_ids": ["OpenAI"]}))
    app = make_app(plugins=[*PLUGINS, ("providers", Providers())], SERVICE_POLICIES_FILE=str(policy))
    client = app.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    assert client.get(TEMPLATES, headers=admin.bearer).get_json() == {
        "blocked": ["basic-chat-echo"],
        "managed_externally": True,
    }
    assert client.get(COMPONENTS, headers=admin.bearer).get_json()["managed_externally"] is False
    provider = client.get(PROVIDERS, headers=admin.bearer).get_json()
    assert provider["approved_provider_ids"] == ["openai"] and provider["managed_externally"] is True
    refused = client.post(PROVIDERS, json={"approved_provider_ids": []}, headers=admin.bearer)
    assert refused.status_code == 409 and "SERVICE_POLICIES_FILE" in refused.get_json()["detail"]


def test_provider_policy_normalises_ids_and_lists_registered_providers(client, admin):
    first = client.get(PROVIDERS, headers=admin.bearer).get_json()
    assert first == {
        "approved_provider_ids": [],
        "registered_providers": [
            {"provider_id": "my-local.llm", "display_name": "Local LLM", "provider": "openai"},
            {"provider_id": "openai", "display_name": "OpenAI", "provider": "openai"},
        ],
        "managed_externally": False,
    }
    put = client.put(PROVIDERS, json={"approved_provider_ids": ["OpenAI", "Bad Id!", "openai"]}, headers=admin.bearer)
    assert put.status_code == 200
    assert put.get_json()["approved_provider_ids"] == ["bad-id", "openai"]
    post = client.post(PROVIDERS, json={"approved_provider_ids": ["  My Local.LLM "]}, headers=admin.bearer)
    assert post.status_code == 200 and post.get_json()["approved_provider_ids"] == ["my-local.llm"]
    for bad in (["!!!"], ["x" * 256], [f"p{i}" for i in range(1001)]):
        assert client.put(PROVIDERS, json={"approved_provider_ids": bad}, headers=admin.bearer).status_code == 422
    assert client.put(PROVIDERS, json={}, headers=admin.bearer).status_code == 422
    assert client.get(PROVIDERS, headers=admin.bearer).get_json()["approved_provider_ids"] == ["my-local.llm"]


def test_provider_approval_hook_reads_the_policy_at_once(app, client, admin):
    from core.app import state

    def allowed(provider: str) -> bool:
        with app.app_context():
            return all(v is not False for v in state(app).host.hook.model_provider_allowed(provider_id=provider))

    assert allowed("openai") and allowed("anything")  # empty list: unrestricted
    client.put(PROVIDERS, json={"approved_provider_ids": ["openai"]}, headers=admin.bearer)
    assert allowed("OpenAI") and not allowed("my-local.llm")


def test_change_log_records_who_when_before_after(client, admin):
    client.put(COMPONENTS, json={"blocked": ["ChatOutput"]}, headers=admin.bearer)
    client.put(COMPONENTS, json={"blocked": ["APIRequest"]}, headers=admin.bearer)
    client.put(PROVIDERS, json={"approved_provider_ids": ["OpenAI"]}, headers=admin.bearer)
    client.put(COMPONENTS, json={"blocked": ["x" * 256]}, headers=admin.bearer)  # refused: not logged
    log = client.get(CHANGES, headers=admin.bearer).get_json()
    assert [(c["policy"], c["before"], c["after"]) for c in log] == [
        ("providers", [], ["openai"]),
        ("components", ["ChatOutput"], ["APIRequest"]),
        ("components", [], ["ChatOutput"]),
    ]
    assert {c["actor"] for c in log} == {admin.username} and {c["actor_id"] for c in log} == {admin.id}
    assert log[1]["added"] == ["APIRequest"] and log[1]["removed"] == ["ChatOutput"]
    assert all(c["at"] for c in log)
    only = client.get(CHANGES + "?policy=components&limit=1", headers=admin.bearer).get_json()
    assert len(only) == 1 and only[0]["after"] == ["APIRequest"]
    assert client.get(CHANGES + "?policy=nope", headers=admin.bearer).status_code == 422
