"""The ``Agent`` component: a tool-calling loop with parallel calls and human approval.

Each turn sends the conversation and the tools' JSON schemas to the model. When
the model asks for tool calls, the calls that need no approval run at once (in
threads: they are I/O-bound, and gevent makes them cooperative in production);
a failing tool's error text goes back to the model as the result. A call whose
``tools_metadata`` row has ``approval_actions`` suspends the run
(``Component.suspend``) with ``{type: "tool_approval", request_id, tool,
arguments, actions}``; the loop state (the conversation, the calls still to
decide, the content blocks) is the checkpoint's state. The answer
``{"action_id": "approve" | "reject" | "edit", "values": {...}}`` resumes it:
``edit`` runs the call with ``values.arguments``, ``reject`` reports the call to
the model as refused (with ``values.message``). The loop stops at a final answer
or after ``max_iterations`` model calls.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from core.engine import Component, ComponentError, Data, Message, Output, ToolCall
from core.engine.arithmetic import safe_arithmetic
from core.engine.errors import PolicyRefused, SuspendRun
from core.engine.inputs import (
    BoolInput,
    HandleInput,
    Input,
    IntInput,
    MessageTextInput,
    MultilineInput,
    SecretStrInput,
    StrInput,
    TableInput,
)
from core.engine.tools import Tool, tool_result_text
from core.engine.types import new_id, to_text
from service_bundle_models import attachments
from service_bundle_models.models import LanguageModel, ModelInput, _usage
from service_bundle_models.provider import ChatModel

FORMAT_PROMPT = (
    "You are an AI that extracts structured JSON objects from unstructured text. Answer with one JSON object only."
)
DEFAULT_PROMPT = "You are a Service Agent \u2014 an AI assistant that completes tasks with the tools it is given."
_MAX_WORKERS = 8


# --- built-in tools ------------------------------------------------------------------------------------
def calculate(expression: str) -> str:
    """Evaluate arithmetic (numbers and + - * / // % ** only; never ``eval``): ``ValueError`` otherwise."""
    try:
        value = safe_arithmetic(expression)
    except ZeroDivisionError:
        raise ValueError("Division by zero") from None
    except OverflowError:
        raise ValueError("Result is too large") from None
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


CALCULATOR = Tool(
    name="evaluate_expression",
    description="Evaluates an arithmetic expression (+ - * / // % **) and returns the result.",
    func=lambda expression="": calculate(str(expression)),
    parameters={
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "The arithmetic expression, e.g. 2*(3+4)"}},
        "required": ["expression"],
    },
    source="builtin:calculator",
)

CURRENT_DATE = Tool(
    name="get_current_date",
    description="Returns the current date and time in UTC (ISO 8601).",
    func=lambda: dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    parameters={"type": "object", "properties": {}, "required": []},
    source="builtin:date",
)


def _flatten(value: Any) -> list[Tool]:
    items = value if isinstance(value, list) else [value]
    out: list[Tool] = []
    for item in items:
        if isinstance(item, Tool):
            out.append(item)
        elif isinstance(item, list):
            out.extend(_flatten(item))
        elif item not in (None, ""):
            raise ComponentError(f"Agent: '{type(item).__name__}' is not a tool.")
    return out


class Agent(Component):
    key = "Agent"
    display_name = "Agent"
    description = "Define the agent's instructions, then enter a task to complete using tools."
    icon = "bot"
    category = "models_and_agents"
    io_bound = True
    inputs: ClassVar[list[Input]] = [
        ModelInput("model", "Language Model", [], required=True, input_types=["LanguageModel"], real_time_refresh=True),
        SecretStrInput("api_key", "API Key", "", advanced=True),
        StrInput("base_url_ibm_watsonx", "watsonx API Endpoint", "https://us-south.ml.cloud.ibm.com", show=False),
        StrInput("project_id", "watsonx Project ID", "", show=False),
        MultilineInput("system_prompt", "Agent Instructions", DEFAULT_PROMPT),
        MessageTextInput("context_id", "Context ID", "", advanced=True),
        IntInput("n_messages", "Number of Chat History Messages", 100, advanced=True),
        IntInput("max_tokens", "Max Tokens", 0, advanced=True),
        HandleInput("tools", "Tools", input_types=["Tool"], is_list=True),
        MessageTextInput("input_value", "Input"),
        MultilineInput("format_instructions", "Output Format Instructions", FORMAT_PROMPT, advanced=True),
        TableInput(
            "output_schema",
            "Output Schema",
            [],
            advanced=True,
            info="Fields of the structured response: name, type (str, int, float, bool, dict), description, multiple.",
        ),
        BoolInput("handle_parsing_errors", "Handle Parse Errors", True, advanced=True),
        IntInput("max_iterations", "Max Iterations", 15, advanced=True),
        BoolInput("stream", "Stream", True, advanced=True),
        BoolInput("add_current_date_tool", "Current Date", True, advanced=True),
        BoolInput("add_calculator_tool", "Calculator", True, advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("response", "Response", "message_response", ["Message"]),
        Output("structured_response", "Structured Response", "json_response", ["JSON"]),
    ]

    _answer: Message | None = None
    _message_id: str | None = None

    @classmethod
    def model_providers(cls, params: dict[str, Any]) -> list[str]:
        return LanguageModel.model_providers(params) if params.get("model") else []

    # -- setup ----------------------------------------------------------------------------------------
    def _model(self) -> ChatModel:
        if isinstance(self.model, ChatModel):
            model = self.model
        else:
            model = LanguageModel(
                {"model": self.model, "api_key": self.api_key, "max_tokens": self.max_tokens},
                context=self.context,
                vertex=self.vertex,
            ).build_model()
        return model

    def _tools(self) -> dict[str, Tool]:
        named: dict[str, Tool] = {}
        for tool in _flatten(self.tools):
            if tool.name in named:
                raise ComponentError(f"Agent: two tools are named '{tool.name}'.")
            named[tool.name] = tool
        for builtin, wanted in ((CALCULATOR, self.add_calculator_tool), (CURRENT_DATE, self.add_current_date_tool)):
            if wanted and builtin.name not in named:  # a connected tool of the same name wins
                named[builtin.name] = builtin
        return named

    def _history(self) -> list[dict[str, Any]]:
        ctx = self.context
        if ctx.get_messages is None or not self.n_messages:
            return []
        rows = ctx.get_messages(ctx.session_id, ctx.flow_id, int(self.n_messages), "ASC")
        out = []
        for row in rows:
            data = row.get("data") if isinstance(row.get("data"), dict) else row
            text = (data or {}).get("text")
            if not text:
                continue
            role = "user" if (data or {}).get("sender") == "User" else "assistant"
            out.append({"role": role, "content": str(text)})
        user_text = to_text(self.input_value) if self.input_value else ""
        if out and out[-1] == {"role": "user", "content": user_text}:
            out.pop()  # the chat input of this run, already stored
        return out

    # -- the loop -------------------------------------------------------------------------------------
    def json_response(self) -> Data:
        """The answer as a JSON object: one more model call with the output schema as a JSON schema."""
        answer = self._answer if self._answer is not None else self.message_response()
        schema = _json_schema(self.output_schema or [])
        response_format: dict[str, Any] = (
            {"type": "json_schema", "json_schema": {"name": "structured_response", "schema": schema, "strict": False}}
            if schema
            else {"type": "json_object"}
        )
        messages = [
            {"role": "system", "content": to_text(self.format_instructions) or FORMAT_PROMPT},
            {"role": "user", "content": to_text(answer)},
        ]
        result = self._model().complete(self.context, messages, response_format=response_format)
        try:
            value = json.loads(result.text)
        except ValueError:
            if not self.handle_parsing_errors:
                raise ComponentError(f"Agent: the structured response is not JSON: {result.text[:200]}") from None
            value = {"text": result.text, "error": "The model did not answer with JSON."}
        data = Data(value if isinstance(value, dict) else {"results": value})
        self.status = data
        return data

    def message_response(self) -> Message:
        if self._answer is not None:
            return self._answer
        model = self._model()
        tools = self._tools()
        answer = self.resumed()
        if answer is not None:
            state = dict(answer["state"])
            self._message_id = state.get("message_id")
            self._decide(state, tools, answer.get("answer") or {})
        else:
            messages: list[dict[str, Any]] = [{"role": "system", "content": to_text(self.system_prompt)}]
            messages += self._history()
            messages.append({"role": "user", "content": attachments.user_content(self.context, self.input_value)})
            state = {"messages": messages, "iteration": 0, "pending": [], "blocks": [], "usage": {}}
        specs = [t.spec() for t in tools.values()]
        message_id = state.setdefault("message_id", new_id())
        self._message_id = message_id  # the tool-call events' parent message
        limit = max(1, int(self.max_iterations or 1))
        while True:
            self._run_pending(state, tools)
            if state["iteration"] >= limit:
                text = f"Agent stopped: reached the maximum of {limit} iterations."
                break
            state["iteration"] += 1
            on_token = (lambda chunk: self.emit_token(chunk, message_id)) if self.stream else None
            result = model.complete(self.context, state["messages"], tools=specs or None, on_token=on_token)
            for k, v in result.usage.items():
                if isinstance(v, int):
                    state["usage"][k] = state["usage"].get(k, 0) + v
            if not result.tool_calls:
                text = result.text
                break
            calls = [{**c, "id": c["id"] or f"call_{uuid.uuid4().hex[:12]}"} for c in result.tool_calls]
            state["messages"].append(
                {
                    "role": "assistant",
                    "content": result.text or None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]},
                        }
                        for c in calls
                    ],
                }
            )
            state["pending"] = calls
        message = Message(
            text,
            id=message_id,
            sender="Machine",
            sender_name="AI",
            properties={"usage": _usage(state["usage"]), "icon": "bot"},
            content_blocks=[{"title": "Agent Steps", "contents": state["blocks"], "allow_markdown": True}]
            if state["blocks"]
            else [],
        )
        self.status = message
        self._answer = message
        return message

    def _run_pending(self, state: dict[str, Any], tools: dict[str, Tool]) -> None:
        """Run the pending calls: those needing approval one by one (suspending), the rest in parallel."""
        pending: list[dict[str, Any]] = state["pending"]
        free = [c for c in pending if not c.get("decided") and not self._needs_approval(c, tools)]
        if free:
            self._execute(free, tools, state)
            for call in free:
                call["decided"] = "done"
        for call in pending:
            if call.get("decided"):
                continue
            request_id = str(uuid.uuid4())
            tool = tools[call["name"]]
            request = {
                "type": "tool_approval",
                "request_id": request_id,
                "tool": call["name"],
                "tool_call_id": call["id"],
                "arguments": _arguments(call["arguments"]),
                "actions": [*tool.approval_actions, "edit"]
                if "edit" not in tool.approval_actions
                else list(tool.approval_actions),
            }
            call["request_id"] = request_id
            raise SuspendRun(request, state, request_id=request_id)
        state["pending"] = []

    def _needs_approval(self, call: dict[str, Any], tools: dict[str, Tool]) -> bool:
        tool = tools.get(call["name"])
        return tool is not None and bool(tool.approval_actions)

    def _decide(self, state: dict[str, Any], tools: dict[str, Tool], answer: dict[str, Any]) -> None:
        """Apply a human decision to the call the run suspended on."""
        call = next((c for c in state["pending"] if not c.get("decided")), None)
        if call is None:
            return
        action = str(answer.get("action_id") or "")
        values = answer.get("values") or {}
        if action == "edit":
            new_args = values.get("arguments")
            call["arguments"] = json.dumps(new_args) if not isinstance(new_args, str) else new_args
            action = "approve"
        if action == "approve":
            self._execute([call], tools, state)
        else:
            reason = str(values.get("message") or "")
            text = "The user refused this tool call." + (f" Reason: {reason}" if reason else "")
            self._finish(call, state, text, error=False, refused=True)
        call["decided"] = action or "reject"

    def _execute(self, calls: list[dict[str, Any]], tools: dict[str, Tool], state: dict[str, Any]) -> None:
        for call in calls:
            self._event(call, "start")
            self._event(call, "args")
            self._event(call, "end")

        def run(call: dict[str, Any]) -> tuple[str, bool]:
            tool = tools.get(call["name"])
            if tool is None:
                return f"Error: there is no tool named '{call['name']}'.", True
            try:
                args = _arguments(call["arguments"])
                return tool_result_text(tool.call(args)), False
            except (SuspendRun, PolicyRefused):  # a pause, or a refused sub-flow: the run's, not the model's
                raise
            except Exception as exc:  # the model reads the failure and decides what to do
                return f"Error: {exc}", True

        if len(calls) == 1:
            results = [run(calls[0])]
        else:
            with ThreadPoolExecutor(max_workers=min(_MAX_WORKERS, len(calls))) as pool:
                # each call in a copy of the run's contextvars context, as the runner's own pool does
                futures = [pool.submit(contextvars.copy_context().run, run, call) for call in calls]
                results = [future.result() for future in futures]
        for call, (text, failed) in zip(calls, results, strict=True):
            self._finish(call, state, text, error=failed)

    def _finish(
        self, call: dict[str, Any], state: dict[str, Any], text: str, *, error: bool, refused: bool = False
    ) -> None:
        self._event(call, "result", text)
        state["messages"].append({"role": "tool", "tool_call_id": call["id"], "content": text})
        state["blocks"].append(
            {
                "type": "tool_use",
                "name": call["name"],
                "tool_input": _safe_arguments(call["arguments"]),
                "output": text,
                "error": text if error else None,
                "refused": refused,
                "header": {"title": f"Executed **{call['name']}**", "icon": "Hammer"},
            }
        )

    def _event(self, call: dict[str, Any], phase: str, result: Any = None) -> None:
        self.context.send_event(
            ToolCall(
                call["id"],
                phase,
                call["name"],
                call["arguments"],
                result,
                vertex_id=self.vertex.id,
                message_id=self._message_id,
            )
        )


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        raise ComponentError(f"Tool arguments are not JSON: {str(raw)[:100]}") from None
    if not isinstance(value, dict):
        raise ComponentError("Tool arguments must be a JSON object")
    return value


COMPONENTS = [Agent]


def _safe_arguments(raw: Any) -> Any:
    try:
        return _arguments(raw)
    except ComponentError:
        return raw


_SCHEMA_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "dict": "object"}


def _json_schema(rows: list[Any]) -> dict[str, Any]:
    """The reference's output-schema table as a JSON schema (empty table: no schema)."""
    properties: dict[str, Any] = {}
    for row in rows:
        if not isinstance(row, dict) or not row.get("name"):
            continue
        item = {"type": _SCHEMA_TYPES.get(str(row.get("type") or "str"), "string")}
        if row.get("description"):
            item["description"] = str(row["description"])
        multiple = str(row.get("multiple", "")).lower() in ("true", "1", "yes")
        properties[str(row["name"])] = {"type": "array", "items": item} if multiple else item
    if not properties:
        return {}
    return {"type": "object", "properties": properties, "required": list(properties)}
