"""The optional ``RunObserver`` methods: ``component`` around each component, ``model_call`` per model call.

Model calls go to the local OpenAI-protocol server; token counts are the ones its ``usage`` answered
(streamed answers carry them in the last frame).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from core import hookimpl
from core.contracts import RunEnded, RunStarted
from core.engine.observe import ModelCall
from tests.conftest import make_user, superuser
from tests.models.conftest import registry
from tests.run.runkit import chat_echo, create_flow, edge, flow_data, node

PLUGINS = ["accounts", "flows", "run", "catalog", "variables", "standard", "models"]


class Watching:
    def __init__(self) -> None:
        self.components: list[tuple[str, str, str]] = []
        self.ends: list[tuple[str, str, str | None]] = []
        self.calls: list[ModelCall] = []
        self.threads: set[int] = set()
        self.ended: list[RunEnded] = []

    @hookimpl
    def observe_run(self, run: RunStarted) -> Any:
        watching = self

        class Observer:
            def end(self, ended: RunEnded) -> None:
                watching.ended.append(ended)

            def component(self, vertex_id: str, display_name: str, component_type: str) -> Any:
                watching.components.append((vertex_id, display_name, component_type))
                watching.threads.add(threading.get_ident())

                def end(status: str, error: str | None) -> None:
                    watching.ends.append((vertex_id, status, error))

                return end

            def model_call(self, call: ModelCall) -> None:
                watching.calls.append(call)

        return Observer()


class EndOnly:
    """An observer without the optional methods: the engine watches nothing for it."""

    @hookimpl
    def observe_run(self, run: RunStarted) -> Any:
        class Observer:
            def end(self, ended: RunEnded) -> None:
                pass

        return Observer()


@pytest.fixture
def watching() -> Watching:
    return Watching()


@pytest.fixture
def env(make_app, llm, watching, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    app = make_app(plugins=[*PLUGINS, ("watching", watching), ("endonly", EndOnly())])
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    return client, alice


def model_flow(stream: bool) -> dict[str, Any]:
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    model = node(
        "LanguageModelComponent",
        "LanguageModelComponent-MMMMM",
        registry=registry(),
        model=[{"name": "test-model", "provider": "OpenAI Compatible"}],
        stream=stream,
    )
    out = node("ChatOutput", "ChatOutput-BBBBB")
    return flow_data(
        [chat_in, model, out],
        [edge(chat_in, "message", model, "input_value"), edge(model, "text_output", out, "input_value")],
    )


def test_each_component_is_watched_from_start_to_end(env, watching):
    client, alice = env
    flow = create_flow(client, alice, chat_echo())
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=alice.key).status_code == 200
    assert [c[0] for c in watching.components] == ["ChatInput-AAAAA", "ChatOutput-BBBBB"]
    assert watching.components[0][2] == "ChatInput" and watching.components[0][1] == "Chat Input"
    assert watching.ends == [("ChatInput-AAAAA", "ok", None), ("ChatOutput-BBBBB", "ok", None)]
    assert watching.calls == [] and len(watching.threads) == 1


def test_a_failing_component_ends_with_its_error(env, watching):
    client, alice = env
    memory = node("Memory", "Memory-MMMMM", n_messages=-1)
    out = node("ChatOutput", "ChatOutput-BBBBB")
    flow = create_flow(client, alice, flow_data([memory, out], [edge(memory, "messages_text", out, "input_value")]))
    assert client.post(f"/api/v1/run/{flow['id']}", json={}, headers=alice.key).status_code == 500
    [(vertex, status, error)] = watching.ends
    assert vertex == "Memory-MMMMM" and status == "error" and "must be non-negative" in (error or "")


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_call_reports_the_providers_token_counts(env, watching, llm, stream):
    client, alice = env
    flow = create_flow(client, alice, model_flow(stream))
    llm.reply("one two three", usage={"prompt_tokens": 17, "completion_tokens": 3})
    response = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "count"}, headers=alice.key)
    assert response.status_code == 200, response.get_json()
    [call] = watching.calls
    assert call.provider == "openai-compatible" and call.model == "test-model"
    assert (call.input_tokens, call.output_tokens) == (17, 3) and call.streamed is stream
    assert call.error is None and call.duration_s > 0 and call.completion == "one two three"
    assert call.prompt == "count" and call.finish_reason == "stop"


def test_a_failed_model_call_is_reported_with_its_error(env, watching, llm):
    client, alice = env
    flow = create_flow(client, alice, model_flow(False))
    llm.reply(status=400)
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=alice.key).status_code == 500
    [call] = watching.calls
    assert call.error and "400" in call.error and call.input_tokens is None


class Refusing:
    """Refuses the second model call of a run (as a budget spent after the first would)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    @hookimpl
    def observe_run(self, run: RunStarted) -> Any:
        refusing = self

        class Observer:
            def end(self, ended: RunEnded) -> None:
                pass

            def before_model_call(self, provider: str, model: str) -> None:
                from core.engine import ComponentError

                refusing.asked.append((provider, model))
                if len(refusing.asked) > 1:
                    raise ComponentError("Token budget of this flow is spent")

        return Observer()


def test_an_observer_refuses_a_model_call_before_it_is_made(make_app, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    monkeypatch.setenv("SERVICE_SSRF_ALLOWED_HOSTS", "127.0.0.1")
    refusing = Refusing()
    app = make_app(plugins=[*PLUGINS, ("refusing", refusing)])
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    flow = create_flow(client, alice, model_flow(False))
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "a"}, headers=alice.key).status_code == 200
    sent = len(llm.requests)
    refused = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "b"}, headers=alice.key)
    assert refused.status_code == 500 and "Token budget of this flow is spent" in str(refused.get_json())
    assert len(llm.requests) == sent  # the refused call never reached the provider
    assert refusing.asked == [("openai-compatible", "test-model")] * 2
