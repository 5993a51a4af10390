"""Models and the Agent in the engine: streaming, tool loops, retries, discovery, approval (suspend/resume)."""

from __future__ import annotations

import json
import time

import pytest
from service_bundle_models.agent import calculate

from core.engine import EgressPolicy, ToolCall, run_flow
from core.engine.errors import ComponentError
from tests.flowkit import EventLog, edge, flow, node
from tests.models.conftest import context, registry

MODEL = [
    {"name": "test-model", "provider": "OpenAI Compatible", "icon": "", "category": "OpenAI Compatible", "metadata": {}}
]


def _n(key, nid, **values):
    return node(key, nid, registry=registry(), **values)


def agent_flow(*, tools=(), approval=None, **agent_values):
    chat_in = _n("ChatInput", "ChatInput-1")
    model = _n("LanguageModelComponent", "LM-1", model=MODEL)
    agent = _n("Agent", "Agent-1", add_current_date_tool=False, **agent_values)
    out = _n("ChatOutput", "ChatOutput-1")
    nodes = [chat_in, model, agent, out]
    edges = [
        edge(chat_in, "message", agent, "input_value"),
        edge(model, "model_output", agent, "model"),
        edge(agent, "response", out, "input_value"),
    ]
    for i, (key, values) in enumerate(tools):
        tool = _n(key, f"Tool-{i}", **values)
        tool["data"]["node"]["tool_mode"] = True
        if approval is not None:
            tool["data"]["node"]["template"]["tools_metadata"] = {"type": "tools", "show": True, "value": approval}
        tool["data"]["node"]["outputs"] = [
            {"name": "component_as_tool", "types": ["Tool"], "method": "to_toolkit", "display_name": "Toolset"}
        ]
        nodes.append(tool)
        edges.append(edge(tool, "component_as_tool", agent, "tools"))
    return flow(nodes, edges)


def test_language_model_streams_tokens_and_records_usage(llm):
    chat_in = _n("ChatInput", "ChatInput-1")
    model = _n("LanguageModelComponent", "LM-1", model=MODEL, stream=True, temperature=0.5, max_tokens=20)
    out = _n("ChatOutput", "ChatOutput-1")
    data = flow(
        [chat_in, model, out],
        [edge(chat_in, "message", model, "input_value"), edge(model, "text_output", out, "input_value")],
    )
    llm.reply("the quick brown fox")
    log = EventLog()
    result = run_flow(data, registry(), context(llm, emit=log), input_value="hi")
    assert result.ok, result.error
    assert [d["chunk"] for d in log.of("token")] == ["the", " quick", " brown", " fox"]
    assert result.answer() == "the quick brown fox"
    sent = llm.chat_requests[0]
    assert sent["temperature"] == 0.5 and sent["max_tokens"] == 20 and sent["stream"] is True
    assert sent["messages"][-1] == {"role": "user", "content": "hi"}
    message = result.results["LM-1"].outputs["text_output"]
    assert message.properties["usage"]["output_tokens"] == 4
    assert llm.requests[-1]["headers"]["Authorization"] == "Bearer sk-test"


def test_loopback_provider_is_refused_without_an_allowed_host(llm):
    data = agent_flow()
    result = run_flow(data, registry(), context(llm, egress=EgressPolicy()), input_value="hi")
    assert not result.ok
    assert "non-public address" in result.error["message"]
    assert llm.chat_requests == []


def test_retries_on_429_and_5xx_then_answers(llm):
    llm.reply(status=429)
    llm.reply(status=503)
    llm.reply("finally")
    result = run_flow(agent_flow(stream=False), registry(), context(llm), input_value="hi")
    assert result.ok, result.error
    assert result.answer() == "finally"
    assert len(llm.chat_requests) == 3


def test_agent_single_tool_call_with_events_and_content_blocks(llm):
    llm.reply(tool_calls=[("evaluate_expression", {"expression": "6*7"})])
    llm.reply("It is 42.")
    log = EventLog()
    result = run_flow(agent_flow(), registry(), context(llm, emit=log), input_value="what is 6*7?")
    assert result.ok, result.error
    assert result.answer() == "It is 42."
    phases = [(e.phase, e.tool) for e in log.typed if isinstance(e, ToolCall)]
    assert phases == [(p, "evaluate_expression") for p in ("start", "args", "end", "result")]
    assert [e.result for e in log.typed if isinstance(e, ToolCall) and e.phase == "result"] == ["42"]
    second = llm.chat_requests[1]
    assert second["messages"][-1]["role"] == "tool" and second["messages"][-1]["content"] == "42"
    assert {t["function"]["name"] for t in second["tools"]} == {"evaluate_expression"}
    message = result.results["Agent-1"].outputs["response"]
    [block] = message.content_blocks
    assert block["contents"][0]["name"] == "evaluate_expression" and block["contents"][0]["output"] == "42"
    assert "It is 42." in "".join(d["chunk"] for d in log.of("token"))


def test_component_in_tool_mode_runs_calls_in_parallel(llm):
    # two Slow Pass-like calls: the API Request component would need the network; use the calculator
    # and a component tool (Text Input -> its text_response) to show several calls at once
    llm.reply(
        tool_calls=[
            ("evaluate_expression", {"expression": "1+1"}),
            ("text_response", {"input_value": "from the tool"}),
            ("evaluate_expression", {"expression": "1/0"}),
        ]
    )
    llm.reply("done")
    data = agent_flow(tools=[("TextInput", {"input_value": "x"})])
    data["nodes"][-1]["data"]["node"]["template"]["input_value"]["tool_mode"] = True
    result = run_flow(data, registry(), context(llm), input_value="go")
    assert result.ok, result.error
    tool_messages = [m for m in llm.chat_requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["2", "from the tool", "Error: Division by zero"]
    schema = next(t for t in llm.chat_requests[0]["tools"] if t["function"]["name"] == "text_response")
    assert schema["function"]["parameters"]["properties"]["input_value"]["type"] == "string"


def test_parallel_calls_overlap(llm):
    from service_bundle_models.agent import Agent

    from core.engine.tools import Tool

    def slow(n):
        time.sleep(0.3)
        return n

    tool = Tool(
        name="slow",
        description="waits",
        func=slow,
        parameters={"type": "object", "properties": {"n": {"type": "string"}}},
    )
    llm.reply(tool_calls=[("slow", {"n": str(i)}) for i in range(4)])
    llm.reply("ok")
    ctx = context(llm)
    agent = Agent.build(model=MODEL, tools=[tool], input_value="x", add_current_date_tool=False, stream=False)
    agent.context = ctx
    start = time.monotonic()
    assert agent.message_response().text == "ok"
    assert time.monotonic() - start < 1.0  # four 0.3 s calls at once


def test_iteration_limit_stops_the_loop(llm):
    for _ in range(3):
        llm.reply(tool_calls=[("evaluate_expression", {"expression": "1"})])
    result = run_flow(agent_flow(max_iterations=2), registry(), context(llm), input_value="loop")
    assert result.ok, result.error
    assert result.answer() == "Agent stopped: reached the maximum of 2 iterations."
    assert len(llm.chat_requests) == 2


def test_discovery_lists_models_and_caches_them(llm):
    from service_bundle_models.models import LanguageModel

    comp = LanguageModel.build(model=MODEL)
    comp.context = context(llm)
    assert comp.available_models() == ["test-model", "test-model-large"]
    llm.models.append("new-model")
    assert comp.available_models() == ["test-model", "test-model-large"]  # cached
    assert llm.model_lists == 1
    assert "new-model" in comp.available_models(refresh=True)
    assert llm.model_lists == 2


def test_calculator_never_evaluates_code():
    assert calculate("2*(3+4)") == "14"
    assert calculate("7/2") == "3.5"
    for bad in ("__import__('os')", "a+1", "2**10000", "[1][0]"):
        with pytest.raises(ValueError):
            calculate(bad)


APPROVAL = [
    {
        "name": "text_response",
        "display_name": "Text",
        "description": "Send a text",
        "status": True,
        "tags": ["text_response"],
        "args": {},
        "approval_actions": ["approve", "reject"],
    }
]


def _approval_run(llm, answer=None, state=None):
    data = agent_flow(tools=[("TextInput", {"input_value": "x"})], approval=APPROVAL, stream=False)
    data["nodes"][-1]["data"]["node"]["template"]["input_value"]["tool_mode"] = True
    ctx = context(llm)
    if answer is not None:
        ctx.resume = {"Agent-1": {"request_id": "r", "answer": answer, "state": state}}
    return run_flow(data, registry(), ctx, input_value="send it")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"action_id": "approve"}, "hello"),
        ({"action_id": "edit", "values": {"arguments": {"input_value": "edited"}}}, "edited"),
        ({"action_id": "reject", "values": {"message": "no way"}}, "The user refused this tool call. Reason: no way"),
    ],
)
def test_approval_suspends_and_resumes(llm, answer, expected):
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"}), ("evaluate_expression", {"expression": "2+2"})])
    paused = _approval_run(llm)
    assert paused.status == "suspended"
    request = paused.suspended["request"]
    assert request["tool"] == "text_response" and request["arguments"] == {"input_value": "hello"}
    assert request["type"] == "tool_approval" and "approve" in request["actions"]
    state = json.loads(json.dumps(paused.suspended["state"]))  # the state is JSON (a checkpoint)
    assert [m["content"] for m in state["messages"] if m["role"] == "tool"] == ["4"]  # the free call ran
    llm.reply("final")
    done = _approval_run(llm, answer, state)
    assert done.ok, done.error
    assert done.answer() == "final"
    tool_messages = [m for m in llm.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["4", expected]


def test_blocked_provider_in_the_context_is_refused(llm):
    ctx = context(llm, provider_allowed=lambda pid: pid != "openai-compatible")
    result = run_flow(agent_flow(), registry(), ctx, input_value="hi")
    assert not result.ok
    assert "openai-compatible" in result.error["message"]
    assert llm.chat_requests == []


def test_openai_component_json_mode_seed_and_timeout(llm):
    chat_in = _n("ChatInput", "ChatInput-1")
    model = _n(
        "ext:openai:OpenAIModelComponent@official",
        "OpenAI-1",
        model_name="test-model",
        openai_api_base=llm.url,
        json_mode=True,
        seed=7,
        timeout=1,
        max_retries=0,
    )
    model["data"]["node"]["template"]["api_key"].update(value="sk-direct", load_from_db=False)
    out = _n("ChatOutput", "ChatOutput-1")
    data = flow(
        [chat_in, model, out],
        [edge(chat_in, "message", model, "input_value"), edge(model, "text_output", out, "input_value")],
    )
    llm.reply('{"ok": true}')
    result = run_flow(data, registry(), context(llm), input_value="json please")
    assert result.ok, result.error
    assert result.answer() == '{"ok": true}'
    sent = llm.chat_requests[-1]
    assert sent["response_format"] == {"type": "json_object"} and sent["seed"] == 7
    assert llm.requests[-1]["headers"]["Authorization"] == "Bearer sk-direct"
    llm.reply("late", delay=2.5)
    slow = run_flow(data, registry(), context(llm), input_value="slow")
    assert not slow.ok and "timed out" in slow.error["message"]


def test_embedding_model_embeds_through_the_provider(llm):
    from service_bundle_models.models import EmbeddingModel

    comp = EmbeddingModel.build(model=[{"name": "test-model", "provider": "OpenAI Compatible"}], chunk_size=2)
    comp.context = context(llm)
    vectors = comp.build_embeddings().embed_documents(["a", "b", "c"])
    assert len(vectors) == 3 and len(vectors[0]) == 8
    assert comp.build_embeddings().embed_query("a") == vectors[0]
    assert [len(r["body"]["input"]) for r in llm.requests if r["path"].endswith("/embeddings")] == [2, 1, 1]


def test_a_flow_as_a_tool(llm):
    from service_bundle_models.agent import Agent

    from core.engine.flow_tools import flow_tool

    chat_in = _n("ChatInput", "ChatInput-9")
    upper = _n("ChatOutput", "ChatOutput-9")
    sub = {
        "id": "sub-1",
        "name": "Echo flow",
        "data": flow([chat_in, upper], [edge(chat_in, "message", upper, "input_value")]),
    }
    ctx = context(llm, load_flow=lambda ident: sub if ident in ("sub-1", "Echo flow") else None)
    tool = flow_tool(ctx, "Echo flow", description="Echoes")
    assert tool.name == "Echo_flow" and tool.source == "flow:sub-1"
    llm.reply(tool_calls=[("Echo_flow", {"input_value": "ping"})])
    llm.reply("the flow said ping")
    agent = Agent.build(model=MODEL, tools=[tool], input_value="x", add_current_date_tool=False, stream=False)
    agent.context = ctx
    assert agent.message_response().text == "the flow said ping"
    assert [m["content"] for m in llm.chat_requests[-1]["messages"] if m["role"] == "tool"] == ["ping"]
    with pytest.raises(ComponentError):
        flow_tool(ctx, "missing")


def test_tool_components_of_the_standard_bundle_plug_in(llm):
    data = agent_flow(add_calculator_tool=False)
    calc = _n("CalculatorTool", "Calc-1")
    agent = next(n for n in data["nodes"] if n["id"] == "Agent-1")
    data["nodes"].append(calc)
    data["edges"].append(edge(calc, "api_build_tool", agent, "tools"))
    llm.reply(tool_calls=[("calculator", {"expression": "2+3"})])
    llm.reply("five")
    result = run_flow(data, registry(), context(llm), input_value="2+3?")
    assert result.ok, result.error
    assert result.answer() == "five"
    assert [t["function"]["name"] for t in llm.chat_requests[0]["tools"]] == ["calculator"]
    assert [m["content"] for m in llm.chat_requests[1]["messages"] if m["role"] == "tool"] == ["5"]


def test_structured_response_asks_for_the_output_schema(llm):
    from service_bundle_models.agent import Agent

    llm.reply("Ada Lovelace was born in 1815.")
    llm.reply('{"name": "Ada Lovelace", "year": 1815}')
    agent = Agent.build(
        model=MODEL,
        input_value="who?",
        stream=False,
        add_current_date_tool=False,
        output_schema=[{"name": "name", "type": "str"}, {"name": "year", "type": "int", "description": "birth year"}],
    )
    agent.context = context(llm)
    data = agent.json_response()
    assert data.data == {"name": "Ada Lovelace", "year": 1815}
    fmt = llm.chat_requests[-1]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["year"] == {"type": "integer", "description": "birth year"}
    assert llm.chat_requests[-1]["messages"][-1]["content"] == "Ada Lovelace was born in 1815."
    assert agent.message_response().text == "Ada Lovelace was born in 1815."  # the loop ran once
    assert len(llm.chat_requests) == 2


def test_agent_reads_the_session_history(llm):
    from service_bundle_models.agent import Agent

    stored = [
        {"sender": "User", "text": "my name is Ada", "session_id": "s1"},
        {"sender": "Machine", "text": "Hello Ada", "session_id": "s1"},
        {"sender": "User", "text": "what is my name?", "session_id": "s1"},  # this run's input, already stored
    ]
    asked = []

    def get_messages(session, flow_id, n, order):
        asked.append((session, flow_id, n, order))
        return stored

    ctx = context(llm, get_messages=get_messages)
    agent = Agent.build(
        model=MODEL, input_value="what is my name?", n_messages=10, stream=False, system_prompt="Be brief."
    )
    agent.context = ctx
    agent.message_response()
    assert asked == [("s1", "flow-1", 10, "ASC")]
    assert llm.chat_requests[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "my name is Ada"},
        {"role": "assistant", "content": "Hello Ada"},
        {"role": "user", "content": "what is my name?"},
    ]


def test_text_embedder_with_ollama_embeddings(llm):
    base = llm.url.removesuffix("/v1")  # Ollama's base URL; the provider adds /v1
    emb = _n("ext:ollama:OllamaEmbeddingsComponent@official", "OE-1", model_name="test-model", base_url=base)
    embedder = _n("TextEmbedderComponent", "TE-1", message="hello")
    data = flow([emb, embedder], [edge(emb, "embeddings", embedder, "embedding_model")])
    result = run_flow(data, registry(), context(llm))
    assert result.ok, result.error
    out = result.results["TE-1"].outputs["embeddings"]
    assert out.data["text"] == "hello" and len(out.data["embeddings"]) == 8
    assert llm.requests[-1]["path"] == "/v1/embeddings"
