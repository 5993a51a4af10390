"""The test server speaks the real OpenAI wire protocol: the official ``openai`` client talks to it."""

from __future__ import annotations

import openai
import pytest


def test_official_client_lists_models_and_embeds(llm):
    client = openai.OpenAI(base_url=llm.url, api_key="sk-test")
    assert sorted(m.id for m in client.models.list()) == ["test-model", "test-model-large"]
    emb = client.embeddings.create(model="test-model", input=["a", "b"])
    assert len(emb.data) == 2 and len(emb.data[0].embedding) == 8
    assert emb.data[0].embedding != emb.data[1].embedding


def test_official_client_chat_plain_stream_and_tool_calls(llm):
    client = openai.OpenAI(base_url=llm.url, api_key="sk-test", max_retries=0)
    plain = client.chat.completions.create(model="test-model", messages=[{"role": "user", "content": "hi"}])
    assert plain.choices[0].message.content == "echo: hi"
    assert plain.usage.prompt_tokens == 11

    llm.reply("one two three")
    chunks = client.chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "x"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "one two three"

    llm.reply(tool_calls=[("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})])
    with client.chat.completions.stream(model="test-model", messages=[{"role": "user", "content": "x"}]) as stream:
        final = stream.get_final_completion()
    calls = final.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["add", "add"]
    assert calls[1].function.arguments == '{"a": 3, "b": 4}'
    assert final.choices[0].finish_reason == "tool_calls"


def test_scripted_errors_and_unknown_models(llm):
    client = openai.OpenAI(base_url=llm.url, api_key="sk-test", max_retries=0)
    llm.reply(status=429)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="test-model", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
