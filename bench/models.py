"""Models scenarios: the agent loop's own cost, and ``/api/v1/responses`` against the simplified run.

* ``agent``: one agent turn with one tool call (the calculator) against the local OpenAI-compatible
  test server (``tests/openai_server.py``, instant answers), in process. The two model calls are
  timed where the agent makes them; the overhead is the turn's time minus theirs (building the
  conversation and tool schemas, the tool call in a thread, the tool-call events, the message).
* ``responses``: the Chat Input -> Chat Output flow through ``POST /api/v1/responses`` and through
  the simplified run ``POST /api/v1/run/<id>``, on the same ``service run``, one after the other.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def agent(b: Any, turns: int = 300) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from service_bundle_models import provider
    from service_bundle_models.agent import Agent

    from core.engine import EgressPolicy, RunContext
    from tests.openai_server import OpenAIServer

    model_ms: list[float] = []
    original = provider.ChatModel.complete

    def timed(self: Any, *args: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return original(self, *args, **kw)
        finally:
            model_ms.append((time.perf_counter() - t) * 1000)

    provider.ChatModel.complete = timed  # type: ignore[method-assign]
    totals: list[float] = []
    overheads: list[float] = []
    model = [{"name": "test-model", "provider": "OpenAI Compatible"}]
    try:
        with OpenAIServer() as llm:
            ctx = RunContext(
                request_variables={"OPENAI_COMPATIBLE_BASE_URL": llm.url},
                egress=EgressPolicy(allowed_hosts=("127.0.0.1",)),
                emit=lambda event: event.payload(),
            )
            for i in range(turns + 20):
                llm.reply(tool_calls=[("evaluate_expression", {"expression": "6*7"})])
                llm.reply("42")
                comp = Agent.build(model=model, input_value="6*7?", add_current_date_tool=False, stream=False)
                comp.context = ctx
                model_ms.clear()
                t = time.perf_counter()
                assert comp.message_response().text == "42"
                total = (time.perf_counter() - t) * 1000
                if i >= 20:  # warm-up
                    totals.append(total)
                    overheads.append(total - sum(model_ms))
    finally:
        provider.ChatModel.complete = original  # type: ignore[method-assign]
    overheads.sort()
    figures = {
        "turns": turns,
        "turn_ms_p50": round(statistics.median(totals), 3),
        "overhead_ms_p50": round(statistics.median(overheads), 3),
        "overhead_ms_p95": round(overheads[int(len(overheads) * 0.95)], 3),
        "target_ms": 5.0,
    }
    print(f"agent    {figures}", flush=True)
    return figures


def responses(b: Any) -> dict[str, Any]:
    from bench.scenarios import run_service, steps

    svc = run_service(b)
    body = json.dumps({"model": svc.echo, "input": "hello"}).encode()
    status, answer = svc.api.call("POST", "/api/v1/responses", json.loads(body), svc.key)
    assert status == 200 and answer["output"][0]["content"][0]["text"] == "hello", answer
    run_steps = steps(b, svc.url(f"/api/v1/run/{svc.echo}"), body=svc.body, headers=svc.key, label="run")
    resp_steps = steps(b, svc.url("/api/v1/responses"), body=body, headers=svc.key, label="responses")
    ratios = {n: round(resp_steps[n]["rps"] / run_steps[n]["rps"], 3) for n in run_steps if run_steps[n]["rps"]}
    print(f"responses/run throughput: {ratios}", flush=True)
    return {"run": run_steps, "responses": resp_steps, "ratio": ratios, "target_ratio": 0.9}
