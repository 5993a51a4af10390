"""Flow control: If-Else router, Loop, Pass and Run Flow (sub-flows)."""

from __future__ import annotations

from typing import Any

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.inputs import BoolInput, DropdownInput, HandleInput, IntInput, MessageTextInput, StrInput
from core.engine.types import to_text
from service_bundle_standard.user_regex import IGNORECASE, UserPattern

ROUTER_OPERATORS = [
    "equals",
    "not equals",
    "contains",
    "starts with",
    "ends with",
    "regex",
    "less than",
    "less than or equal",
    "greater than",
    "greater than or equal",
]


def evaluate_condition(input_text: str, match_text: str, operator: str, *, case_sensitive: bool) -> bool:
    if operator not in ROUTER_OPERATORS:
        raise ValueError(f"Invalid operator '{operator}'. Use one of: {', '.join(ROUTER_OPERATORS)}")
    if not case_sensitive and operator != "regex":
        input_text, match_text = input_text.lower(), match_text.lower()
    if operator == "equals":
        return input_text == match_text
    if operator == "not equals":
        return input_text != match_text
    if operator == "contains":
        return match_text in input_text
    if operator == "starts with":
        return input_text.startswith(match_text)
    if operator == "ends with":
        return input_text.endswith(match_text)
    if operator == "regex":
        try:
            return UserPattern(match_text, 0 if case_sensitive else IGNORECASE).search(input_text)
        except ValueError as exc:
            if "took longer" in str(exc):
                raise  # a runaway pattern is an error, not a quiet "no match"
            return False
    try:
        a, b = float(input_text), float(match_text)
    except ValueError:
        return False
    return {
        "less than": a < b,
        "less than or equal": a <= b,
        "greater than": a > b,
        "greater than or equal": a >= b,
    }[operator]


def run_subflow(
    component: Component,
    ident: str,
    *,
    tweaks: dict[str, dict[str, Any]] | None = None,
    input_value: str | None = None,
    session_id: str | None = None,
) -> Any:
    """Run the user's flow ``ident`` (id or name) as a sub-flow of ``component``'s run; return its RunResult.

    Shared by Run Flow, Sub Flow and Flow as Tool: the flow is loaded through
    ``RunContext.load_flow`` (owner-scoped by the caller), runs with a child context (same user,
    callbacks and deadline, one level deeper), depth-limited and self-calls refused.
    """
    from core.engine.runner import run_flow

    ctx = component.context
    if not ident:
        raise ValueError("Select a flow to run.")
    if ctx.load_flow is None:
        raise ComponentError("Running sub-flows is not available here.")
    if ctx.depth >= ctx.max_subflow_depth:
        raise ComponentError(f"Sub-flows are nested deeper than {ctx.max_subflow_depth} levels.")
    flow = ctx.load_flow(str(ident))
    if not flow:
        raise ComponentError(f"Flow '{ident}' not found.")
    flow_id = str(flow.get("id") or ident)
    if flow_id in ctx.flow_stack or flow_id == str(ctx.flow_id):
        raise ComponentError(f"Flow '{flow.get('name') or ident}' calls itself.")
    if ctx.registry is None:
        raise ComponentError("No component registry in the run context.")
    child = ctx.child(flow_id=flow_id, flow_name=flow.get("name"), session_id=session_id)
    result = run_flow(
        flow.get("data") or {},
        ctx.registry,
        child,
        tweaks=tweaks or {},
        input_value=input_value,
        input_type="any",
    )
    if not result.ok:
        err = result.error or {}
        raise ComponentError(f"Sub-flow '{flow.get('name') or ident}' failed: {err.get('message')}")
    return result


class ConditionalRouter(Component):
    key = "ConditionalRouter"
    display_name = "If-Else"
    display_names = {"en": "If-Else", "fr": "Si-Sinon", "de": "Wenn-Sonst", "es": "Si-Sino"}
    description = "Routes an input message to a corresponding output based on text comparison."
    icon = "split"
    category = "flow_controls"
    documentation = "https://docs.service.org/components-logic#conditional-router-if-else-component"
    inputs = [
        MessageTextInput(
            "input_text", "Text Input", "", required=True, info="The primary text input for the operation."
        ),
        DropdownInput(
            "operator",
            "Operator",
            "equals",
            options=list(ROUTER_OPERATORS),
            real_time_refresh=True,
            info="The operator to apply for comparing the texts.",
        ),
        MessageTextInput("match_text", "Match Text", "", required=True, info="The text input to compare against."),
        BoolInput(
            "case_sensitive",
            "Case Sensitive",
            True,
            advanced=True,
            info="If true, the comparison will be case sensitive.",
        ),
        MessageTextInput(
            "true_case_message", "Case True", "", advanced=True, info="The message to pass if the condition is True."
        ),
        MessageTextInput(
            "false_case_message", "Case False", "", advanced=True, info="The message to pass if the condition is False."
        ),
        IntInput(
            "max_iterations",
            "Max Iterations",
            10,
            advanced=True,
            info="The maximum number of iterations for the conditional router.",
        ),
        DropdownInput(
            "default_route",
            "Default Route",
            "false_result",
            options=["true_result", "false_result"],
            advanced=True,
            info="The default route to take when max iterations are reached.",
        ),
    ]
    outputs = [
        Output("true_result", "True", "true_response", ["Message"], group_outputs=True),
        Output("false_result", "False", "false_response", ["Message"], group_outputs=True),
    ]

    def _result(self) -> bool:
        if not hasattr(self, "_cached"):
            self._cached = evaluate_condition(
                to_text(self.input_text), to_text(self.match_text), self.operator, case_sensitive=self.case_sensitive
            )
            self.stop("false_result" if self._cached else "true_result")
        return self._cached

    def true_response(self) -> Message:
        if self._result():
            text = to_text(self.true_case_message) or to_text(self.input_text)
            self.status = text
            return Message(text=text)
        return Message(text="")

    def false_response(self) -> Message:
        if not self._result():
            text = to_text(self.false_case_message) or to_text(self.input_text)
            self.status = text
            return Message(text=text)
        return Message(text="")


class LoopComponent(Component):
    """Iterates over a list: its ``item`` output feeds the loop body once per item; ``done`` gets the collected results.

    The engine drives it (``is_loop``): it calls :meth:`loop_items`, runs the body for each
    item, and gives what comes back into ``item`` to :meth:`loop_done`.
    """

    key = "LoopComponent"
    display_name = "Loop"
    display_names = {"en": "Loop", "fr": "Boucle", "de": "Schleife", "es": "Bucle"}
    description = (
        "Iterates over a list of JSON objects, outputting one item at a time and aggregating results from loop inputs."
    )
    icon = "infinity"
    category = "flow_controls"
    is_loop = True
    inputs = [
        HandleInput(
            "data",
            "Inputs",
            "",
            input_types=["DataFrame", "Table", "Data", "JSON", "Message"],
            info="The initial list of JSON objects or Table to iterate over.",
        )
    ]
    outputs = [
        Output("item", "Item", "item_output", ["JSON"], allows_loop=True, group_outputs=True),
        Output("done", "Done", "done_output", ["Table"], group_outputs=True),
    ]

    def loop_items(self) -> list[Any]:
        value = self.data
        if value in (None, ""):
            return []
        if isinstance(value, DataFrame):
            return value.to_data_list()
        if isinstance(value, list):
            out: list[Any] = []
            for v in value:
                out.extend(v.to_data_list() if isinstance(v, DataFrame) else [v])
            return out
        if isinstance(value, Data) and not isinstance(value, Message):
            inner = list(value.data.values())
            if len(inner) == 1 and isinstance(inner[0], list):
                return [Data(x) if isinstance(x, dict) else Data({"text": x}) for x in inner[0]]
        return [value]

    def loop_done(self, collected: list[Any]) -> DataFrame:
        rows = []
        for value in collected:
            if isinstance(value, Message):
                rows.append({"text": value.text})
            elif isinstance(value, Data):
                rows.append(dict(value.data))
            elif isinstance(value, DataFrame):
                rows.extend(value.rows)
            elif isinstance(value, dict):
                rows.append(value)
            else:
                rows.append({"text": to_text(value)})
        return DataFrame(rows)

    def item_output(self) -> Any:  # values are supplied by the engine
        items = self.loop_items()
        return items[0] if items else None

    def done_output(self) -> DataFrame:
        return self.loop_done(self.loop_items())


class Pass(Component):
    key = "Pass"
    display_name = "Pass"
    display_names = {"en": "Pass", "fr": "Passer", "de": "Durchreichen", "es": "Pasar"}
    description = "Forwards the input message, unchanged."
    icon = "arrow-right"
    category = "flow_controls"
    legacy = True
    inputs = [
        MessageTextInput("input_message", "Input Message", "", required=True, info="The message to be passed forward."),
        MessageTextInput(
            "ignored_message",
            "Ignored Message",
            "",
            advanced=True,
            info="A second message to be ignored. Used as a workaround for continuity.",
        ),
    ]
    outputs = [Output("output_message", "Output Message", "pass_message", ["Message"])]

    def pass_message(self) -> Message:
        self.status = self.input_message
        return Message(text=self.input_message)


class RunFlow(Component):
    """Runs another flow of the same user (through ``context.load_flow``) and exposes its outputs.

    Template fields named ``<vertex id>~<field>`` are passed as tweaks to the sub-flow;
    node outputs named ``<vertex id>~<output>`` are read from its results.
    """

    key = "RunFlow"
    display_name = "Run Flow"
    display_names = {"en": "Run Flow", "fr": "Exécuter un flux", "de": "Flow ausführen", "es": "Ejecutar flujo"}
    description = "Creates a tool component from a Flow that takes all its inputs and runs it."
    icon = "Workflow"
    category = "flow_controls"
    beta = True
    io_bound = True
    accepts_dynamic_fields = True
    dynamic_outputs = True
    frontend_outputs = ()
    inputs = [
        DropdownInput(
            "flow_name_selected",
            "Flow Name",
            "",
            options=[],
            real_time_refresh=True,
            info="The name of the flow to run.",
        ),
        StrInput("flow_id_selected", "Flow ID", "", show=False, info="The ID of the flow to run."),
        MessageTextInput("session_id", "Session ID", "", advanced=True, info="The session ID to run the flow in."),
        BoolInput("cache_flow", "Cache Flow", False, advanced=True, info="Whether to cache the flow."),
        MessageTextInput(
            "input_value", "Input", "", advanced=True, info="Input value for the sub-flow's chat or text input."
        ),
    ]
    outputs = [
        Output("flow_outputs_message", "Flow Message Output", "message_output", ["Message"]),
        Output("flow_outputs_data", "Flow Data Output", "data_output", ["JSON"]),
    ]

    @classmethod
    def subflows(cls, params: dict[str, Any]) -> list[str]:
        """The flow this node runs, when its field names one (the run service checks it before the run)."""
        ident = params.get("flow_id_selected") or params.get("flow_name_selected")
        return [ident] if isinstance(ident, str) and ident else []

    def _run(self) -> Any:
        if hasattr(self, "_sub"):
            return self._sub
        tweaks: dict[str, dict[str, Any]] = {}
        for name, value in self.extra_params.items():
            if "~" in name:
                vid, field = name.split("~", 1)
                tweaks.setdefault(vid, {})[field] = to_text(value) if isinstance(value, (Message, Data)) else value
        self._sub = run_subflow(
            self,
            str(self.flow_id_selected or self.flow_name_selected or ""),
            tweaks=tweaks,
            input_value=to_text(self.input_value) if self.input_value else None,
            session_id=to_text(self.session_id) or None,
        )
        return self._sub

    def message_output(self) -> Message:
        result = self._run()
        answer = result.answer()
        message = Message(text=answer or "")
        self.status = message
        return message

    def data_output(self) -> Data:
        result = self._run()
        out = {}
        for vid in result.output_vertices():
            value = result.results[vid].primary()[1]
            out[vid] = to_text(value)
        return Data({"outputs": out, "text": result.answer() or ""})

    def build_dynamic_output(self, name: str) -> Any:
        result = self._run()
        vid, _, out_name = name.partition("~")
        if vid not in result.results:
            raise ComponentError(f"Sub-flow has no component '{vid}'")
        return result.output(vid, out_name or None)


COMPONENTS = [ConditionalRouter, LoopComponent, Pass, RunFlow]
