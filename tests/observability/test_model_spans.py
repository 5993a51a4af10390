"""Component and model call spans (GenAI semantic conventions) and model metrics, from the local OpenAI server."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import make_user, superuser
from tests.models.conftest import llm  # noqa: F401 - the fixture
from tests.models.test_observe_model_calls import model_flow
from tests.run.runkit import create_flow

PLUGINS = ["accounts", "flows", "run", "catalog", "variables", "standard", "models", "observability"]
TOKEN = "scrape-token-abcdefabcdef"


@pytest.fixture
def env(make_app, llm, receiver, monkeypatch, tmp_path):  # noqa: F811
    from service_observability import metrics

    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    app = make_app(
        plugins=PLUGINS, metrics_enabled=True, metrics_token=TOKEN, metrics_multiproc_dir=str(tmp_path / "prom")
    )
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    yield client, alice
    metrics.disable()


def _run(client, alice, llm, stream: bool) -> dict:  # noqa: F811
    flow = create_flow(client, alice, model_flow(stream))
    llm.reply("one two three", usage={"prompt_tokens": 17, "completion_tokens": 3})
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "count"}, headers=alice.key).status_code == 200
    from service_observability import otel

    assert otel.flush()
    return flow


@pytest.mark.parametrize("stream", [False, True])
def test_model_call_span_is_a_child_of_its_component_with_token_counts(env, llm, receiver, stream):  # noqa: F811
    client, alice = env
    flow = _run(client, alice, llm, stream)
    [run] = receiver.wait_for("flow.execute", flow_id=flow["id"])
    components = {s["attributes"]["component.id"]: s for s in receiver.spans if "component.id" in s["attributes"]}
    assert set(components) == {"ChatInput-AAAAA", "LanguageModelComponent-MMMMM", "ChatOutput-BBBBB"}
    assert all(s["parent_id"] == run["span_id"] and s["trace_id"] == run["trace_id"] for s in components.values())
    [call] = receiver.wait_for("chat test-model")
    attrs = call["attributes"]
    assert call["parent_id"] == components["LanguageModelComponent-MMMMM"]["span_id"] and call["kind"] == 3  # CLIENT
    assert attrs["gen_ai.operation.name"] == "chat" and attrs["gen_ai.provider.name"] == "openai-compatible"
    assert attrs["gen_ai.request.model"] == "test-model" and attrs["gen_ai.request.stream"] is stream
    assert attrs["gen_ai.usage.input_tokens"] == 17 and attrs["gen_ai.usage.output_tokens"] == 3
    assert "gen_ai.prompt" not in attrs and "gen_ai.completion" not in attrs  # withheld by default
    # the provider request carried the trace context of the component that made it (egress injection)
    [sent] = [r for r in llm.requests if r["path"].endswith("/chat/completions")]
    traceparent = {k.lower(): v for k, v in sent["headers"].items()}["traceparent"]
    assert traceparent.split("-")[1:3] == [run["trace_id"], components["LanguageModelComponent-MMMMM"]["span_id"]]


def test_prompt_and_completion_only_when_the_genai_variable_allows(env, llm, receiver, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    client, alice = env
    _run(client, alice, llm, False)
    [call] = receiver.wait_for("chat test-model")
    assert call["attributes"]["gen_ai.prompt"] == "count" and call["attributes"]["gen_ai.completion"] == "one two three"


def test_model_calls_and_tokens_are_counted_by_model(env, llm):  # noqa: F811
    client, alice = env
    _run(client, alice, llm, True)
    _run(client, alice, llm, False)
    text = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).get_data(as_text=True)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    model = (("model", "test-model"), ("provider", "openai-compatible"))
    assert samples[("service_model_calls_total", model)] == 2
    assert samples[("service_model_tokens_total", (*model, ("type", "input")))] == 34
    assert (
        samples[("service_model_tokens_total", (*model[:1], ("provider", "openai-compatible"), ("type", "output")))]
        == 6
    )
