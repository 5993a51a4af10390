"""More flow controls: Condition (``DataConditionalRouter``), Sub Flow, Flow as Tool, Listen and Notify.

Sub Flow and Flow as Tool run the user's other flows through :func:`flow_control.run_subflow`
(the same path as Run Flow: ``RunContext.load_flow``, a child context, depth limit, no
self-calls). Listen and Notify share named signals within one run (see :func:`run_signals`).
"""

from __future__ import annotations

from typing import Any

from core.engine import Component, Data, DataFrame, Message, Output, RunContext
from core.engine.inputs import BoolInput, DataInput, DropdownInput, HandleInput, MessageTextInput, StrInput
from core.engine.tools import Tool, string_tool
from core.engine.types import to_text
from service_bundle_standard.flow_control import run_subflow
from service_bundle_standard.legacy_data import as_data_list

CONDITION_OPERATORS = ["equals", "not equals", "contains", "starts with", "ends with", "boolean validator"]
_TRUTHY = {"true", "1", "yes", "y", "on"}


def parse_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in _TRUTHY
    return bool(value)


class DataConditionalRouter(Component):
    key = "DataConditionalRouter"
    display_name = "Condition"
    display_names = {"en": "Condition", "fr": "Condition", "de": "Bedingung", "es": "Condición"}
    description = "Route JSON objects based on a condition applied to a specified key, including boolean validation."
    icon = "split"
    category = "flow_controls"
    legacy = True
    inputs = [
        DataInput(
            "data_input", "JSON Input", "", is_list=True, info="The JSON object or list of JSON objects to process"
        ),
        MessageTextInput("key_name", "Key Name", "", info="The name of the key in the JSON object(s) to check"),
        DropdownInput(
            "operator",
            "Operator",
            "equals",
            options=list(CONDITION_OPERATORS),
            info="The operator to apply for comparing the values. 'boolean validator' treats the value as a boolean.",
        ),
        MessageTextInput(
            "compare_value",
            "Match Text",
            "",
            info="The value to compare against (not used for boolean validator)",
        ),
    ]
    outputs = [
        Output("true_output", "True Output", "process_data", ["JSON"]),
        Output("false_output", "False Output", "process_data", ["JSON"]),
    ]

    def _met(self, item: Data) -> bool:
        value = item.data[self.key_name]
        if self.operator == "boolean validator":
            met = parse_boolean(value)
            self.status = f"Value of key '{self.key_name}' is {value}"
            return met
        a, b = to_text(value), to_text(self.compare_value)
        met = {
            "equals": a == b,
            "not equals": a != b,
            "contains": b in a,
            "starts with": a.startswith(b),
            "ends with": a.endswith(b),
        }[self.operator]
        self.status = f"Evaluation of key '{self.key_name}' is {met}"
        return met

    def process_data(self) -> Data | list[Data]:
        if hasattr(self, "_out"):
            return self._out
        if self.operator not in CONDITION_OPERATORS:
            raise ValueError(f"Invalid operator '{self.operator}'. Use one of: {', '.join(CONDITION_OPERATORS)}")
        items = as_data_list(self.data_input)
        valid = [d for d in items if self.key_name in d.data]
        if len(items) == 1:
            if not valid:
                self.stop("true_output")
                self.stop("false_output")
                self._out: Data | list[Data] = Data({"error": f"Key '{self.key_name}' not found in JSON object"})
                return self._out
            met = self._met(valid[0])
            self.stop("false_output" if met else "true_output")
            self._out = valid[0]
            return self._out
        true_items = [d for d in valid if self._met(d)]
        false_items = [d for d in valid if d not in true_items]
        self.stop("false_output" if true_items else "true_output")
        self._out = true_items or false_items
        return self._out


def _flow_outputs(result: Any) -> list[Data]:
    out: list[Data] = []
    for vid in result.output_vertices():
        _, value = result.results[vid].primary()
        if isinstance(value, Message):
            out.append(Data({"text": value.text, "vertex_id": vid}))
        elif isinstance(value, Data):
            out.append(Data({**value.data, "vertex_id": vid}))
        elif isinstance(value, DataFrame):
            out.append(Data({"results": value.to_records(), "vertex_id": vid}))
        else:
            out.append(Data({"text": to_text(value), "vertex_id": vid}))
    return out


class SubFlow(Component):
    """Node fields named ``<vertex id>|<field>`` (the reference's form) or ``<vertex id>~<field>`` become tweaks."""

    key = "SubFlow"
    display_name = "Sub Flow"
    display_names = {"en": "Sub Flow", "fr": "Sous-flux", "de": "Unterflow", "es": "Subflujo"}
    description = "Generates a Component from a Flow, with all of its inputs, and "
    icon = "Workflow"
    category = "flow_controls"
    legacy = True
    io_bound = True
    accepts_dynamic_fields = True
    inputs = [
        DropdownInput(
            "flow_name", "Flow Name", "", options=[], real_time_refresh=True, info="List of flows to select from"
        )
    ]
    outputs = [Output("flow_outputs", "Flow Outputs", "generate_results", ["JSON"])]

    @classmethod
    def subflows(cls, params: dict[str, Any]) -> list[str]:
        """The flow this node runs, when its field names one (the run service checks it before the run)."""
        ident = params.get("flow_name")
        return [ident] if isinstance(ident, str) and ident else []

    def generate_results(self) -> list[Data]:
        tweaks: dict[str, dict[str, Any]] = {}
        for name, value in self.extra_params.items():
            sep = "|" if "|" in name else ("~" if "~" in name else None)
            if sep:
                vid, field = name.split(sep, 1)
                tweaks.setdefault(vid, {})[field] = to_text(value) if isinstance(value, (Message, Data)) else value
        result = run_subflow(self, to_text(self.flow_name), tweaks=tweaks)
        data = _flow_outputs(result)
        self.status = data
        return data


class FlowTool(Component):
    key = "FlowTool"
    display_name = "Flow as Tool"
    display_names = {"en": "Flow as Tool", "fr": "Flux comme outil", "de": "Flow als Werkzeug"}
    description = "Construct a Tool from a function that runs the loaded Flow."
    icon = "hammer"
    category = "flow_controls"
    legacy = True
    inputs = [
        DropdownInput(
            "flow_name", "Flow Name", "", options=[], real_time_refresh=True, info="The name of the flow to run."
        ),
        StrInput("tool_name", "Name", "", info="The name of the tool."),
        StrInput("tool_description", "Description", "", info="The description of the tool; defaults to the Flow's."),
        BoolInput("return_direct", "Return Direct", False, advanced=True, info="Return the result directly."),
    ]
    outputs = [Output("api_build_tool", "Tool", "build_tool", ["Tool"])]

    subflows = SubFlow.subflows

    def build_tool(self) -> Tool:
        flow_name = to_text(self.flow_name)
        if not flow_name:
            raise ValueError("Flow name is required")
        ctx = self.context
        found = ctx.load_flow(flow_name) if ctx.load_flow is not None else None
        if not found:
            raise ValueError(f"Flow '{flow_name}' not found.")
        if ctx.check_flow is not None:  # refused when the tool is built (the run fails), not when it is called
            ctx.check_flow({"id": found.get("id"), "name": found.get("name") or flow_name, "data": found.get("data")})

        def run(input_value: str) -> str:
            result = run_subflow(self, flow_name, input_value=input_value)
            return result.answer() or "\n".join(to_text(d.get_text()) for d in _flow_outputs(result))

        name = to_text(self.tool_name) or flow_name.replace(" ", "_").lower()
        description = to_text(self.tool_description) or f"Runs the flow '{flow_name}' and returns its answer."
        tool = string_tool(name, description, run, arg="input_value", return_direct=bool(self.return_direct))
        self.status = f"Tool '{name}' runs flow '{flow_name}'"
        return tool


def run_signals(context: RunContext) -> dict[str, list[Any]]:
    """The named signals of one run (Notify writes, Listen reads); sub-flows get their own.

    Kept on the run context object itself so it lives exactly as long as the run.
    """
    state: dict[str, list[Any]] = vars(context).setdefault("_signals", {})
    return state


class Notify(Component):
    key = "Notify"
    display_name = "Notify"
    display_names = {"en": "Notify", "fr": "Notifier", "de": "Benachrichtigen", "es": "Notificar"}
    description = "A component to generate a notification to the Get Notified component."
    icon = "Notify"
    category = "flow_controls"
    beta = True
    signal = ("notify", "context_key")
    inputs = [
        StrInput(
            "context_key", "Context Key", "", required=True, info="The key of the context to store the notification."
        ),
        HandleInput(
            "input_value",
            "Input Data",
            "",
            input_types=["Data", "JSON", "Message", "DataFrame", "Table"],
            info="The data to store.",
        ),
        BoolInput(
            "append",
            "Append",
            False,
            info="If True, the record will be appended to the notification.",
        ),
    ]
    outputs = [Output("result", "JSON", "notify_components", ["JSON"])]

    def notify_components(self) -> Data:
        key = to_text(self.context_key).strip()
        if not key:
            raise ValueError("Context Key is required.")
        value = self.input_value
        if isinstance(value, Message):
            data = Data({"text": value.text})
        elif isinstance(value, DataFrame):
            data = value.to_data()
        elif isinstance(value, Data):
            data = value
        elif value in (None, ""):
            data = Data({})
        else:
            data = Data({"text": to_text(value)})
        signals = run_signals(self.context)
        if self.append:
            signals.setdefault(key, []).append(data)
        else:
            signals[key] = [data]
        self.status = data
        return data


class Listen(Component):
    key = "Listen"
    display_name = "Listen"
    display_names = {"en": "Listen", "fr": "Écouter", "de": "Zuhören", "es": "Escuchar"}
    description = "A component to listen for a notification."
    icon = "Radio"
    category = "flow_controls"
    beta = True
    signal = ("listen", "context_key")
    inputs = [
        MessageTextInput("context_key", "Context Key", "", required=True, info="The key of the context to listen for.")
    ]
    outputs = [Output("data", "JSON", "listen_for_data", ["JSON"])]

    def listen_for_data(self) -> Data | list[Data]:
        key = to_text(self.context_key).strip()
        if not key:
            raise ValueError("Context Key is required.")
        values = run_signals(self.context).get(key, [])
        if not values:
            self.status = f"Nothing notified on '{key}' yet in this run."
            return Data({})
        result = values[0] if len(values) == 1 else list(values)
        self.status = result
        return result


COMPONENTS = [DataConditionalRouter, FlowTool, Listen, Notify, SubFlow]
