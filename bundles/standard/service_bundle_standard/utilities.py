"""Utilities: Current Date, ID Generator, Calculator (``ast`` only, never eval) and Message History."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from core.engine import Component, Data, DataFrame, Message, Output
from core.engine.arithmetic import safe_arithmetic
from core.engine.inputs import DropdownInput, HandleInput, IntInput, MessageTextInput, TabInput
from core.engine.text import format_template
from core.engine.tools import Tool, string_tool
from core.engine.types import to_text
from service_bundle_standard.inputs_outputs import session_inputs


@lru_cache(maxsize=1)
def _timezones() -> list[str]:
    try:
        from zoneinfo import available_timezones

        return sorted(available_timezones())
    except Exception:
        return ["UTC"]


class CurrentDate(Component):
    key = "CurrentDate"
    display_name = "Current Date"
    display_names = {"en": "Current Date", "fr": "Date actuelle", "de": "Aktuelles Datum", "es": "Fecha actual"}
    description = "Returns the current date and time in the selected timezone."
    icon = "clock"
    category = "utilities"
    inputs = [
        DropdownInput(
            "timezone",
            "Timezone",
            "UTC",
            options=["UTC"],
            combobox=True,
            info="Select the timezone for the current date and time.",
        )
    ]
    outputs = [Output("current_date", "Current Date", "get_current_date", ["Message"])]

    @classmethod
    def to_frontend_node(cls, locale: str | None = "en") -> dict[str, Any]:
        node = super().to_frontend_node(locale)
        node["template"]["timezone"]["options"] = _timezones()
        return node

    def get_current_date(self) -> Message:
        name = self.timezone or "UTC"
        try:
            from zoneinfo import ZoneInfo

            tz: Any = ZoneInfo(name)
        except Exception:
            raise ValueError(f"Unknown timezone '{name}'") from None
        now = datetime.now(UTC).astimezone(tz)
        text = f"Current date and time in {name}: {now.strftime('%Y-%m-%d %H:%M:%S %Z')}"
        self.status = text
        return Message(text=text)


class IDGenerator(Component):
    key = "IDGenerator"
    display_name = "ID Generator"
    display_names = {"en": "ID Generator", "fr": "Générateur d'ID", "de": "ID-Generator", "es": "Generador de ID"}
    description = "Generates a unique ID."
    icon = "fingerprint"
    category = "utilities"
    legacy = True
    inputs = [MessageTextInput("unique_id", "Value", "", real_time_refresh=True, info="The generated unique ID.")]
    outputs = [Output("id", "ID", "generate_id", ["Message"])]

    def generate_id(self) -> Message:
        value = to_text(self.unique_id) or str(uuid.uuid4())
        self.status = value
        return Message(text=value)


class CalculatorComponent(Component):
    key = "CalculatorComponent"
    display_name = "Calculator"
    display_names = {"en": "Calculator", "fr": "Calculatrice", "de": "Rechner", "es": "Calculadora"}
    description = "Perform basic arithmetic operations on a given expression."
    icon = "calculator"
    category = "utilities"
    inputs = [
        MessageTextInput(
            "expression",
            "Expression",
            "",
            info="The arithmetic expression to evaluate (e.g., '4*4*(33/22)+12-20').",
            tool_mode=True,
        )
    ]
    outputs = [Output("result", "Data", "evaluate_expression", ["JSON"])]

    def evaluate_expression(self) -> Data:
        data = calculate(to_text(self.expression))
        self.status = data
        return data


def calculate(expression: str) -> Data:
    """The Calculator's result: ``{"result": "<formatted>"}`` or ``{"error": ..., "input": ...}``."""
    try:
        value = safe_arithmetic(expression)
    except ZeroDivisionError:
        return Data({"error": "Error: Division by zero", "input": expression})
    except (ValueError, OverflowError) as exc:
        return Data({"error": f"Invalid expression: {exc}", "input": expression})
    return Data({"result": f"{float(value):.6f}".rstrip("0").rstrip(".")})


class CalculatorTool(Component):
    key = "CalculatorTool"
    display_name = "Calculator"
    display_names = {"en": "Calculator", "fr": "Calculatrice", "de": "Rechner", "es": "Calculadora"}
    description = "Perform basic arithmetic operations on a given expression."
    icon = "calculator"
    category = "tools"
    legacy = True
    inputs = [
        MessageTextInput(
            "expression",
            "Expression",
            "",
            info="The arithmetic expression to evaluate (e.g., '4*4*(33/22)+12-20').",
        )
    ]
    outputs = [
        Output("api_run_model", "Data", "run_model", ["JSON"]),
        Output("api_build_tool", "Tool", "build_tool", ["Tool"]),
    ]

    def run_model(self) -> list[Data]:
        data = calculate(to_text(self.expression))
        self.status = data
        return [data]

    def build_tool(self) -> Tool:
        def run(expression: str) -> str:
            data = calculate(expression)
            return str(data.data.get("result", data.data.get("error")))

        return string_tool(
            "calculator",
            "Evaluate basic arithmetic expressions. Input should be a string containing the expression.",
            run,
            arg="expression",
        )


class MemoryComponent(Component):
    key = "Memory"
    display_name = "Message History"
    display_names = {
        "en": "Message History",
        "fr": "Historique des messages",
        "de": "Nachrichtenverlauf",
        "es": "Historial de mensajes",
    }
    description = "Stores or retrieves stored chat messages from the service tables."
    icon = "message-square-more"
    category = "models_and_agents"
    inputs = [
        TabInput(
            "mode",
            "Mode",
            "Retrieve",
            options=["Retrieve", "Store"],
            info="Operation mode: Store messages or Retrieve messages.",
        ),
        MessageTextInput("message", "Message", "", show=False, info="The chat message to be stored."),
        HandleInput(
            "memory",
            "External Memory",
            "",
            input_types=["Memory"],
            advanced=True,
            info="Retrieve messages from an external memory. If empty, it will use the service tables.",
        ),
        DropdownInput(
            "sender_type",
            "Sender Type",
            "Machine and User",
            options=["Machine", "User", "Machine and User"],
            advanced=True,
            info="Filter by sender type.",
        ),
        MessageTextInput(
            "sender", "Sender", "", advanced=True, info="The sender of the message. Might be Machine or User."
        ),
        MessageTextInput("sender_name", "Sender Name", "", advanced=True, show=False, info="Filter by sender name."),
        IntInput("n_messages", "Number of Messages", 100, advanced=True, info="Number of messages to retrieve."),
        *session_inputs(),
        DropdownInput(
            "order",
            "Order",
            "Ascending",
            options=["Ascending", "Descending"],
            advanced=True,
            required=True,
            info="Order of the messages.",
        ),
        MessageTextInput(
            "template",
            "Template",
            "{sender_name}: {text}",
            advanced=True,
            show=False,
            info="The template to use for formatting the data.",
        ),
    ]
    outputs = [
        Output("messages_text", "Message", "retrieve_messages_as_text", ["Message"]),
        Output("dataframe", "Table", "retrieve_messages_dataframe", ["Table"]),
    ]

    def _messages(self) -> list[Message]:
        if hasattr(self, "_cache"):
            return self._cache
        ctx = self.context
        session = to_text(self.session_id) or ctx.session_id
        if self.mode == "Store":
            text = to_text(self.message)
            if not text:
                raise ValueError("No message to store.")
            msg = Message(
                text=text,
                sender=to_text(self.sender) or "Machine",
                sender_name=to_text(self.sender_name) or "AI",
                session_id=session,
            )
            self.send_message(msg)
            self._cache = [msg]
            return self._cache
        if self.n_messages < 0:
            raise ValueError("Number of messages must be non-negative.")
        if ctx.get_messages is None:
            self._cache = []
            return self._cache
        order = "DESC" if self.order == "Descending" else "ASC"
        raw = ctx.get_messages(session, ctx.flow_id, self.n_messages, order) or []
        messages = [Message.from_dict(m) for m in raw]
        sender = self.sender_type if self.sender_type in ("Machine", "User") else None
        if to_text(self.sender) in ("Machine", "User"):
            sender = to_text(self.sender)
        if sender:
            messages = [m for m in messages if m.sender == sender]
        if self.sender_name:
            messages = [m for m in messages if m.sender_name == self.sender_name]
        if self.n_messages:
            messages = messages[: self.n_messages]
        self._cache = messages
        return messages

    def retrieve_messages_as_text(self) -> Message:
        template = self.template or "{sender_name}: {text}"
        lines = [
            format_template(template, {**{k: v for k, v in m.to_dict().items() if k != "data"}}, missing=lambda _k: "")
            for m in self._messages()
        ]
        text = "\n".join(lines)
        self.status = text
        return Message(text=text)

    def retrieve_messages_dataframe(self) -> DataFrame:
        """One row per message, with the reference's columns: the stored message's fields."""
        rows = []
        for m in self._messages():
            fields = m.to_dict()
            rows.append({col: fields.get(col) for col in HISTORY_COLUMNS})
        return DataFrame(rows, columns=list(HISTORY_COLUMNS))


#: the columns of Message History's table: the reference's, a stored message's fields (the text first)
HISTORY_COLUMNS = (
    *("text", "sender", "sender_name", "session_id", "context_id", "timestamp", "files", "error", "edit"),
    *("properties", "category", "content_blocks", "session_metadata", "id", "flow_id", "run_id"),
)


COMPONENTS = [CurrentDate, IDGenerator, CalculatorComponent, CalculatorTool, MemoryComponent]
