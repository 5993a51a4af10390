"""LLM operations (reference category ``llm_operations``): Structured Output, Batch Run, LLM Selector, Smart Router.

Each calls the model through the bundle's provider client (:class:`ChatModel`, the core egress
helper underneath); nothing model-written is executed here (Smart Transform, which the reference
runs as generated Python, lives in :mod:`service_bundle_models.transform`).
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.inputs import (
    BoolInput,
    DropdownInput,
    HandleInput,
    Input,
    IntInput,
    MessageInput,
    MessageTextInput,
    MultilineInput,
    SecretStrInput,
    StrInput,
    TableInput,
)
from core.engine.types import to_text
from service_bundle_models.agent import _json_schema
from service_bundle_models.models import WATSONX_URL, LanguageModel, ModelInput
from service_bundle_models.provider import ChatModel

__all__ = ["COMPONENTS", "chat_model", "parse_json_answer"]

WATSONX_URLS = [
    WATSONX_URL,
    "https://eu-de.ml.cloud.ibm.com",
    "https://eu-gb.ml.cloud.ibm.com",
    "https://au-syd.ml.cloud.ibm.com",
    "https://jp-tok.ml.cloud.ibm.com",
    "https://ca-tor.ml.cloud.ibm.com",
]
#: the model specifications LLM Selector reads (module constant: tests and gateways point it elsewhere)
OPENROUTER_MODELS_URL = "https://openrouter.ai/api/v1/models"
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def model_input() -> ModelInput:
    return ModelInput(
        "model", "Language Model", [], required=True, input_types=["LanguageModel"], real_time_refresh=True
    )


def api_key_input() -> SecretStrInput:
    return SecretStrInput(
        "api_key",
        "API Key",
        "",
        advanced=True,
        load_from_db=True,
        real_time_refresh=True,
        info="Overrides global provider settings. Leave blank to use your pre-configured API Key.",
    )


def chat_model(component: Component, value: Any = None) -> ChatModel:
    """The :class:`ChatModel` of a ``model`` field (a connected model, or the reference's model choice)."""
    value = getattr(component, "model", None) if value is None else value
    if isinstance(value, ChatModel):
        return value
    if not value:
        raise ComponentError(f"{component.display_name}: choose a language model.")
    params = {"model": value, "api_key": to_text(getattr(component, "api_key", "") or "")}
    return LanguageModel(params, context=component.context, vertex=component.vertex).build_model()


def _model_providers(params: dict[str, Any]) -> list[str]:
    return LanguageModel.model_providers(params) if params.get("model") else []


def ask(component: Component, model: ChatModel, prompt: str, system: str = "", **kw: Any) -> str:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    return model.complete(component.context, messages, **kw).text


def parse_json_answer(text: str) -> Any:
    """A model's JSON answer (a fenced block or the first JSON value in the text)."""
    raw = text.strip()
    fenced = _FENCE.match(raw)
    if fenced:
        raw = fenced.group(1)
    try:
        return json.loads(raw)
    except ValueError:
        pass
    for opener in ("{", "["):
        start = raw.find(opener)
        if start >= 0:
            try:
                return json.JSONDecoder().raw_decode(raw[start:])[0]
            except ValueError:
                continue
    raise ComponentError(f"The model did not answer JSON: {text[:200]}")


# --- Structured Output ------------------------------------------------------------------------------
STRUCTURED_SYSTEM = (
    "You are an AI that extracts structured JSON objects from unstructured text. "
    "Use a predefined schema with expected types (str, int, float, bool, dict). "
    "Extract ALL relevant instances that match the schema - if multiple patterns exist, capture them all. "
    "Fill missing or ambiguous values with defaults: null for missing values. "
    "Remove exact duplicates but keep variations that have different field values. "
    "Always return valid JSON in the expected format, never throw errors. "
    "If multiple objects can be extracted, return them all in the structured format."
)
SCHEMA_TABLE = [
    {"name": "name", "display_name": "Name", "type": "str", "description": "Specify the name of the output field."},
    {"name": "description", "display_name": "Description", "type": "str", "description": "The field's purpose."},
    {
        "name": "type",
        "display_name": "Type",
        "type": "str",
        "options": ["str", "int", "float", "bool", "dict"],
        "description": "The data type of the output field (str, int, float, bool, dict).",
    },
    {"name": "multiple", "display_name": "As List", "type": "boolean", "description": "A list of the type."},
]
_CASTS: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "dict": dict}


def _coerce(value: Any, kind: str, multiple: bool) -> Any:
    if value is None:
        return None
    if multiple:
        items = value if isinstance(value, list) else [value]
        return [_coerce(v, kind, False) for v in items]
    cast = _CASTS.get(kind, str)
    if isinstance(value, cast) and not (cast is int and isinstance(value, bool)):
        return value
    try:
        if cast is bool and isinstance(value, str):
            return value.strip().lower() in ("true", "yes", "1")
        if cast is dict:
            return value if isinstance(value, dict) else {"value": value}
        return cast(value)
    except (TypeError, ValueError):
        return None


class StructuredOutput(Component):
    key = "StructuredOutput"
    display_name = "Structured Output"
    description = "Uses an LLM to generate structured data. Ideal for extraction and consistency."
    icon = "braces"
    category = "llm_operations"
    io_bound = True
    inputs: ClassVar[list[Input]] = [
        model_input(),
        api_key_input(),
        MultilineInput(
            "input_value", "Input Message", "", required=True, tool_mode=True, info="The text to extract from."
        ),
        MultilineInput(
            "system_prompt",
            "Format Instructions",
            STRUCTURED_SYSTEM,
            required=True,
            advanced=True,
            info="The instructions to the language model for formatting the output.",
        ),
        MessageTextInput("schema_name", "Schema Name", "", advanced=True, info="A name for the output data schema."),
        TableInput(
            "output_schema",
            "Output Schema",
            [{"name": "field", "description": "description of field", "type": "str", "multiple": "False"}],
            required=True,
            table_schema=SCHEMA_TABLE,
            info="Define the structure and data types for the model's output.",
        ),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("structured_output", "Structured Output", "build_structured_output", ["JSON"]),
        Output("dataframe_output", "Structured Output", "build_structured_dataframe", ["Table"]),
    ]
    model_providers = staticmethod(_model_providers)

    def _objects(self) -> list[dict[str, Any]]:
        if hasattr(self, "_cached"):
            return self._cached
        rows = [r for r in (self.output_schema or []) if isinstance(r, dict) and r.get("name")]
        if not rows:
            raise ComponentError("Output schema cannot be empty")
        text = to_text(self.input_value)
        if not text.strip():
            raise ComponentError("Structured Output: the input message is empty.")
        name = re.sub(r"[^a-zA-Z0-9_-]+", "_", to_text(self.schema_name).strip()) or "OutputModel"
        item = _json_schema(rows)
        schema = {
            "type": "object",
            "properties": {"objects": {"type": "array", "items": item, "description": f"A list of {name}."}},
            "required": ["objects"],
        }
        answer = ask(
            self,
            chat_model(self),
            text,
            to_text(self.system_prompt) or STRUCTURED_SYSTEM,
            response_format={"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}},
        )
        found = parse_json_answer(answer)
        if isinstance(found, dict) and isinstance(found.get("objects"), list):
            found = found["objects"]
        items = found if isinstance(found, list) else [found]
        objects: list[dict[str, Any]] = []
        for obj in items:
            if not isinstance(obj, dict):
                continue
            shaped = {}
            for row in rows:
                multiple = str(row.get("multiple", "")).lower() in ("true", "1", "yes")
                shaped[str(row["name"])] = _coerce(obj.get(str(row["name"])), str(row.get("type") or "str"), multiple)
            objects.append(shaped)
        if not objects:
            raise ComponentError("No structured output returned")
        self._cached = objects
        return objects

    def build_structured_output(self) -> Data:
        objects = self._objects()
        data = Data(objects[0]) if len(objects) == 1 else Data({"results": objects})
        self.status = data
        return data

    def build_structured_dataframe(self) -> DataFrame:
        frame = DataFrame(self._objects())
        self.status = frame
        return frame


# --- Batch Run --------------------------------------------------------------------------------------
def _toml_row(row: dict[str, Any]) -> str:
    """A row as the reference's TOML text: ``[column]\\nvalue = "..."`` per column."""
    parts = []
    for col, val in row.items():
        key = json.dumps(str(col)) if not re.fullmatch(r"[A-Za-z0-9_-]+", str(col)) else str(col)
        parts.append(f"[{key}]\nvalue = {json.dumps(to_text(val), ensure_ascii=False)}\n")
    return "\n".join(parts)


class BatchRun(Component):
    key = "BatchRunComponent"
    display_name = "Batch Run"
    description = "Runs an LLM on each row of a DataFrame column. If no column is specified, all columns are used."
    icon = "List"
    category = "llm_operations"
    io_bound = True
    #: rows sent to the provider at once
    concurrency: ClassVar[int] = 4
    inputs: ClassVar[list[Input]] = [
        model_input(),
        api_key_input(),
        DropdownInput("base_url_ibm_watsonx", "watsonx API Endpoint", WATSONX_URL, options=WATSONX_URLS, show=False),
        StrInput("project_id", "watsonx Project ID", "", show=False),
        MultilineInput("system_message", "Instructions", "", info="System instruction for every row."),
        HandleInput("df", "Table", None, required=True, input_types=["DataFrame", "Table"]),
        MessageTextInput(
            "column_name",
            "Column Name",
            "",
            info="The column to treat as text messages. If empty, all columns are formatted in TOML.",
        ),
        MessageTextInput("output_column_name", "Output Column Name", "model_response", advanced=True),
        BoolInput("enable_metadata", "Enable Metadata", False, advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [Output("batch_results", "LLM Results", "run_batch", ["Table"])]
    model_providers = staticmethod(_model_providers)

    def run_batch(self) -> DataFrame:
        frame = self.df
        if isinstance(frame, list) and all(isinstance(r, (dict, Data)) for r in frame):
            frame = DataFrame(frame)
        if not isinstance(frame, DataFrame):
            raise ComponentError(f"Expected DataFrame input, got {type(frame).__name__}")
        column = to_text(self.column_name).strip()
        if column and column not in frame.columns:
            raise ComponentError(
                f"Column '{column}' not found in the DataFrame. Available columns: {', '.join(frame.columns)}"
            )
        out_col = to_text(self.output_column_name).strip() or "model_response"
        records = [dict(r) for r in frame.rows]
        if not records:
            self.status = "No rows to process"
            return DataFrame([], columns=[*frame.columns, out_col, "batch_index"])
        model = chat_model(self)
        system = to_text(self.system_message)
        texts = [to_text(r.get(column)) if column else _toml_row(r) for r in records]

        from concurrent.futures import ThreadPoolExecutor

        def one(text: str) -> str:
            return ask(self, model, text, system)

        with ThreadPoolExecutor(max_workers=max(1, min(self.concurrency, len(texts)))) as pool:
            answers = list(pool.map(one, texts))
        rows = []
        for index, (record, text, answer) in enumerate(zip(records, texts, answers, strict=True)):
            row = {**record, out_col: answer, "batch_index": index}
            if self.enable_metadata:
                row["metadata"] = {
                    "has_system_message": bool(system),
                    "input_length": len(text),
                    "response_length": len(answer),
                    "processing_status": "success",
                }
            rows.append(row)
        result = DataFrame(rows)
        self.status = f"Processed {len(rows)} rows"
        return result


# --- LLM Selector -----------------------------------------------------------------------------------
SELECTOR_SYSTEM = (
    "You are an expert AI model selection specialist. Analyze the user's query, their optimization "
    "preference (quality, speed, cost, balanced) and the available models with their specifications, "
    "then select the most appropriate model. Return ONLY the index number (0, 1, 2, ...) of the best "
    "model from the list, with no explanation. If no model seems suitable, answer 0."
)


class LLMSelector(Component):
    key = "LLMSelectorComponent"
    display_name = "LLM Selector"
    description = "Routes the input to the most appropriate LLM based on OpenRouter model specifications"
    icon = "git-branch"
    category = "llm_operations"
    io_bound = True
    inputs: ClassVar[list[Input]] = [
        HandleInput("models", "Language Models", None, required=True, is_list=True, input_types=["LanguageModel"]),
        MultilineInput("input_value", "Input", "", required=True, info="The input message to be routed"),
        HandleInput("judge_llm", "Judge LLM", None, required=True, input_types=["LanguageModel"]),
        DropdownInput("optimization", "Optimization", "balanced", options=["quality", "speed", "cost", "balanced"]),
        BoolInput("use_openrouter_specs", "Use OpenRouter Specs", True, advanced=True),
        IntInput("timeout", "API Timeout", 10, advanced=True),
        BoolInput("fallback_to_first", "Fallback to First Model", True, advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("output", "Output", "route_to_model", ["Message"]),
        Output("selected_model_info", "Selected Model Info", "get_selected_model_info", ["JSON"]),
        Output("routing_decision", "Routing Decision", "get_routing_decision", ["Message"]),
    ]

    def _specs(self) -> dict[str, dict[str, Any]]:
        """OpenRouter's model list by id and by name part (empty when switched off or unreachable)."""
        if not self.use_openrouter_specs:
            return {}
        from core.engine.egress import EgressError, request

        try:
            resp = request(
                "GET",
                OPENROUTER_MODELS_URL,
                policy=self.context.egress,
                timeout=float(self.timeout or 10),
                deadline=self.context.deadline,
            )
            listed = json.loads(resp.content).get("data") if resp.status_code == 200 else None
        except (EgressError, ValueError, AttributeError) as exc:
            self.log(f"OpenRouter specifications unavailable: {exc}")
            return {}
        found: dict[str, dict[str, Any]] = {}
        for entry in listed or []:
            if isinstance(entry, dict) and entry.get("id"):
                found[str(entry["id"])] = entry
                found.setdefault(str(entry["id"]).split("/", 1)[-1], entry)
        return found

    def _decide(self) -> dict[str, Any]:
        if hasattr(self, "_decision"):
            return self._decision
        models = [m for m in (self.models if isinstance(self.models, list) else [self.models]) if m is not None]
        text = to_text(self.input_value)
        if not models or not text.strip() or self.judge_llm is None:
            raise ComponentError("Missing required inputs: models, input_value, or judge_llm")
        if not all(isinstance(m, ChatModel) for m in [*models, self.judge_llm]):
            raise ComponentError("LLM Selector: connect Language Model outputs to Language Models and Judge LLM.")
        specs = self._specs()
        listing = []
        for i, m in enumerate(models):
            spec = specs.get(m.model)
            info = {"id": m.model, "name": m.model, "description": "Specifications not available."}
            if spec:
                pricing = spec.get("pricing") or {}
                info = {
                    "id": spec.get("id"),
                    "name": spec.get("name") or m.model,
                    "description": str(spec.get("description") or "")[:500],
                    "context_length": spec.get("context_length"),
                    "pricing_prompt": pricing.get("prompt"),
                    "pricing_completion": pricing.get("completion"),
                }
            listing.append({"index": i, "langflow_name": m.model, "specs": info})
        preview = text[:1000] + ("..." if len(text) > 1000 else "")
        prompt = (
            f'User Query: "{preview}"\nOptimization Preference: {self.optimization}\n'
            f"Estimated Input Tokens: ~{int(len(text.split()) * 1.3)}\n\n"
            f"Available Models (JSON list):\n{json.dumps(listing, indent=2)}\n\nReturn ONLY the index number:"
        )
        answer = ask(self, self.judge_llm, prompt, SELECTOR_SYSTEM)
        match = re.search(r"\d+", answer)
        index = int(match.group()) if match else -1
        reason = f"Judge chose index {index}"
        if not 0 <= index < len(models):
            if not self.fallback_to_first:
                raise ComponentError(f"LLM Selector: the judge answered '{answer[:100]}', not a model index.")
            index, reason = 0, f"Judge answer '{answer[:100]}' is not a model index; fell back to the first model"
        chosen = models[index]
        self._decision = {
            "index": index,
            "model": chosen,
            "reason": reason,
            "specs": listing[index]["specs"],
            "available": [m.model for m in models],
        }
        return self._decision

    def route_to_model(self) -> Message:
        decision = self._decide()
        answer = ask(self, decision["model"], to_text(self.input_value))
        message = Message(answer, properties={"selected_model": decision["model"].model})
        self.status = f"Routed to {decision['model'].model}"
        return message

    def get_selected_model_info(self) -> Data:
        d = self._decide()
        name = d["model"].model
        # the reference's fields: the model's specs (id, name, description... or these three when
        # no specs are known) and the name looked up; ours follow (not the reference's)
        specs = d["specs"] if isinstance(d["specs"], dict) and d["specs"].get("id") else {}
        reference = specs or {"id": name, "name": name, "description": "Specifications not available."}
        return Data(
            {
                **reference,
                "langflow_model_name_used_for_lookup": name,
                "selected_model": d["model"].model,
                "provider": d["model"].provider_id,
                "model_index": d["index"],
                "optimization": self.optimization,
                "specs": d["specs"],
                "available_models": d["available"],
            }
        )

    def get_routing_decision(self) -> Message:
        d = self._decide()
        return Message(
            f"Selected model: {d['model'].model} (index {d['index']}) for optimization '{self.optimization}'. "
            f"{d['reason']}."
        )


# --- Smart Router -----------------------------------------------------------------------------------
ROUTES_TABLE = [
    {"name": "route_category", "display_name": "Route Name", "type": "str", "description": "Output and category."},
    {"name": "route_description", "display_name": "Route Description", "type": "str", "description": "When to use."},
    {"name": "output_value", "display_name": "Route Message (Optional)", "type": "str", "description": "Optional."},
]
ELSE_OUTPUT = "default_result"


class SmartRouter(Component):
    """Outputs are per node (``category_<n>_result`` for the n-th route, ``default_result`` for Else)."""

    key = "SmartRouter"
    display_name = "Smart Router"
    description = "Routes an input message using LLM-based categorization."
    icon = "route"
    category = "llm_operations"
    io_bound = True
    dynamic_outputs = True
    #: a new node shows the outputs of the default routes (the reference's catalog shows none until the routes
    #: table is edited); routes beyond these are node-declared outputs, read from the flow JSON
    frontend_outputs = ("category_1_result", "category_2_result")
    inputs: ClassVar[list[Input]] = [
        model_input(),
        SecretStrInput("api_key", "API Key", "", advanced=True, load_from_db=True, real_time_refresh=True),
        MessageTextInput("input_text", "Input", "", required=True, info="The primary text input for the operation."),
        TableInput(
            "routes",
            "Routes",
            [
                {
                    "route_category": "Positive",
                    "route_description": "Positive feedback, satisfaction, or compliments",
                    "output_value": "",
                },
                {
                    "route_category": "Negative",
                    "route_description": "Complaints, issues, or dissatisfaction",
                    "output_value": "",
                },
            ],
            required=True,
            real_time_refresh=True,
            table_schema=ROUTES_TABLE,
        ),
        MessageInput("message", "Override Output", None, advanced=True),
        BoolInput("enable_else_output", "Include Else Output", False, advanced=True),
        MultilineInput("custom_prompt", "Additional Instructions", "", advanced=True),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("category_1_result", "Positive", "process_case", ["Message"], group_outputs=True),
        Output("category_2_result", "Negative", "process_case", ["Message"], group_outputs=True),
        Output(ELSE_OUTPUT, "Else", "default_response", ["Message"], group_outputs=True),
    ]
    model_providers = staticmethod(_model_providers)

    def stop(self, output_name: str) -> None:
        self._stopped.add(output_name)  # route outputs beyond the first are declared per node

    def active_outputs(self) -> list[str] | None:
        names = [f"category_{i + 1}_result" for i in range(len(self._routes()))]
        return [*names, ELSE_OUTPUT] if self.enable_else_output else names

    def _routes(self) -> list[dict[str, Any]]:
        return [r for r in (self.routes or []) if isinstance(r, dict)]

    def _match(self) -> int | None:
        if hasattr(self, "_matched"):
            return self._matched
        routes = self._routes()
        text = to_text(self.input_text)
        matched: int | None = None
        if routes and text.strip():
            names = [to_text(r.get("route_category") or f"Category {i + 1}") for i, r in enumerate(routes)]
            lines = []
            for name, route in zip(names, routes, strict=True):
                desc = to_text(route.get("route_description")).strip()
                lines.append(f'- "{name}": {desc}' if desc else f'- "{name}"')
            prompt = (
                "You are a text classifier. Given the following text and categories, determine which category "
                f'best matches the text.\n\nText to classify: "{text}"\n\nAvailable categories:\n'
                + "\n".join(lines)
                + "\n\nRespond with ONLY the exact category name that best matches the text. If none match well, "
                'respond with "NONE".\n\nCategory:'
            )
            extra = to_text(self.custom_prompt).strip()
            if extra:
                simple = ", ".join(f'"{n}"' for n in names)
                extra = extra.replace("{input_text}", text).replace("{routes}", simple)
                prompt += f"\n\nAdditional Instructions:\n{extra}"
            answer = ask(self, chat_model(self), prompt).strip().strip('"').strip()
            for i, name in enumerate(names):
                if answer.lower() == name.lower():
                    matched = i
                    break
            self.status = f"Categorized as {names[matched]}" if matched is not None else f"No match for '{answer}'"
        self._matched = matched
        for i in range(len(routes)):
            if i != matched:
                self.stop(f"category_{i + 1}_result")
        if matched is not None or not self.enable_else_output:
            self.stop(ELSE_OUTPUT)
        return matched

    def process_case(self) -> Message:
        matched = self._match()
        if matched is None:
            return Message("")
        override = to_text(self.message).strip() if self.message is not None else ""
        if override:
            return Message(override)
        custom = to_text(self._routes()[matched].get("output_value")).strip()
        if custom and custom.lower() != "none":
            return Message(custom)
        return Message(to_text(self.input_text))

    def default_response(self) -> Message:
        matched = self._match()
        if matched is not None or not self.enable_else_output:
            return Message("")
        override = to_text(self.message).strip() if self.message is not None else ""
        return Message(override or to_text(self.input_text))

    def build_dynamic_output(self, name: str) -> Message:
        if name == ELSE_OUTPUT:
            return self.default_response()
        found = re.fullmatch(r"category_(\d+)_result", name)
        if not found:
            raise ComponentError(f"Smart Router has no output '{name}'")
        self._match()
        index = int(found.group(1)) - 1
        if index >= len(self._routes()):
            raise ComponentError(f"Smart Router has no route {index + 1}")
        return self.process_case() if self._matched == index else Message("")


COMPONENTS = [StructuredOutput, BatchRun, LLMSelector, SmartRouter]
