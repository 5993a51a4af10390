"""Token usage from the providers' ``usage`` (streamed and not), a price table, and budgets enforced while running."""

from __future__ import annotations

import pytest

from tests.conftest import make_user, superuser
from tests.models.conftest import llm, registry  # noqa: F401 - the fixture
from tests.models.test_observe_model_calls import model_flow
from tests.run.runkit import create_flow, edge, flow_data, node

PLUGINS = ["accounts", "flows", "run", "catalog", "variables", "standard", "models", "observability"]
PRICES = '{"test-model": [2.0, 8.0]}'  # per million tokens


@pytest.fixture
def env(make_app, llm, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    app = make_app(plugins=PLUGINS, token_prices=PRICES)
    client = app.test_client()
    admin = superuser(client)
    return client, admin, make_user(client, admin, username="alice"), make_user(client, admin, username="bob")


def _run(client, caller, flow_id, llm, prompt_tokens=100, completion_tokens=50):  # noqa: F811
    llm.reply("an answer", usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens})
    return client.post(f"/api/v1/run/{flow_id}", json={"input_value": "q"}, headers=caller.key)


def test_usage_counts_tokens_calls_and_cost_per_model_and_flow(env, llm):  # noqa: F811
    client, admin, alice, bob = env
    plain = create_flow(client, alice, model_flow(False))
    streamed = create_flow(client, alice, model_flow(True))
    assert _run(client, alice, plain["id"], llm).status_code == 200
    assert _run(client, alice, streamed["id"], llm, 10, 5).status_code == 200
    by_model = client.get("/api/v1/monitor/usage", headers=alice.bearer).get_json()
    [row] = by_model["rows"]
    assert row["key"] == "test-model" and row["calls"] == 2
    assert (row["inputTokens"], row["outputTokens"], row["totalTokens"]) == (110, 55, 165)
    assert row["cost"] == pytest.approx((110 * 2.0 + 55 * 8.0) / 1e6)
    by_flow = client.get("/api/v1/monitor/usage?group_by=flow", headers=alice.bearer).get_json()
    assert {r["key"]: r["totalTokens"] for r in by_flow["rows"]} == {plain["id"]: 150, streamed["id"]: 15}
    # owner-scoped: bob used nothing; a superuser sees everyone's with all=true
    assert client.get("/api/v1/monitor/usage", headers=bob.bearer).get_json()["total"]["calls"] == 0
    everyone = client.get("/api/v1/monitor/usage?group_by=user&all=true", headers=admin.bearer).get_json()
    assert everyone["rows"] == [{"key": str(alice.id), **by_model["total"]}]
    assert client.get("/api/v1/monitor/usage?group_by=nope", headers=alice.bearer).status_code == 422


def test_a_token_budget_stops_the_run_at_its_next_model_call_then_refuses_runs_with_429(env, llm):  # noqa: F811
    client, admin, alice, bob = env
    model = node(
        "LanguageModelComponent",
        "LanguageModelComponent-MMMMM",
        registry=registry(),
        model=[{"name": "test-model", "provider": "OpenAI Compatible"}],
    )
    second = node(
        "LanguageModelComponent",
        "LanguageModelComponent-NNNNN",
        registry=registry(),
        model=[{"name": "test-model", "provider": "OpenAI Compatible"}],
    )
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    out = node("ChatOutput", "ChatOutput-BBBBB")
    two_calls = create_flow(
        client,
        alice,
        flow_data(
            [chat_in, model, second, out],
            [
                edge(chat_in, "message", model, "input_value"),
                edge(model, "text_output", second, "input_value"),
                edge(second, "text_output", out, "input_value"),
            ],
        ),
    )
    body = {"scope": "flow", "scope_id": two_calls["id"], "metric": "tokens", "period": "month", "limit": 100}
    assert client.post("/api/v1/monitor/budgets", json=body, headers=alice.bearer).status_code == 403
    created = client.post("/api/v1/monitor/budgets", json=body, headers=admin.bearer)
    assert created.status_code == 201 and created.get_json()["remaining"] == 100

    # the first call spends 150 tokens: the second call of the same run is refused before it is made
    llm.reply("first", usage={"prompt_tokens": 100, "completion_tokens": 50})
    sent = len(llm.requests)
    stopped = client.post(f"/api/v1/run/{two_calls['id']}", json={"input_value": "q"}, headers=alice.key)
    assert stopped.status_code == 500
    assert "The tokens budget of this flow (100 per month) is spent" in str(stopped.get_json())
    assert len(llm.requests) == sent + 1

    # the next run is refused before it starts: 429 with Retry-After
    refused = client.post(f"/api/v1/run/{two_calls['id']}", json={"input_value": "q"}, headers=alice.key)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert refused.get_json() == {"detail": "The tokens budget of this flow (100 per month) is spent."}
    assert len(llm.requests) == sent + 1

    # the owner sees what is left; bob sees no budget; the admin removes it and runs go again
    [mine] = client.get("/api/v1/monitor/budgets", headers=alice.bearer).get_json()
    assert mine["used"] == 150 and mine["remaining"] == 0 and mine["resetsAt"].endswith("Z")
    assert client.get("/api/v1/monitor/budgets", headers=bob.bearer).get_json() == []
    assert client.delete(f"/api/v1/monitor/budgets/{mine['id']}", headers=admin.bearer).status_code == 204
    llm.reply("a", usage={"prompt_tokens": 1, "completion_tokens": 1})
    llm.reply("b", usage={"prompt_tokens": 1, "completion_tokens": 1})
    assert (
        client.post(f"/api/v1/run/{two_calls['id']}", json={"input_value": "q"}, headers=alice.key).status_code == 200
    )


def test_a_user_call_budget_and_bad_budgets(env, llm):  # noqa: F811
    client, admin, alice, _bob = env
    flow = create_flow(client, alice, model_flow(False))
    body = {"scope": "user", "scope_id": str(alice.id), "metric": "calls", "period": "day", "limit": 1}
    assert client.post("/api/v1/monitor/budgets", json=body, headers=admin.bearer).status_code == 201
    assert _run(client, alice, flow["id"], llm).status_code == 200
    assert _run(client, alice, flow["id"], llm).status_code == 429
    bad = client.post("/api/v1/monitor/budgets", json={"scope": "team", "limit": -1}, headers=admin.bearer)
    assert bad.status_code == 422
    assert sorted(d["loc"][1] for d in bad.get_json()["detail"]) == ["limit", "metric", "period", "scope", "scope_id"]


def test_a_bad_price_table_stops_start_up(make_app):
    from core.errors import StartupError

    with pytest.raises(StartupError, match="SERVICE_TOKEN_PRICES"):
        make_app(plugins=["accounts", "observability"], token_prices='{"m": [1]}')
