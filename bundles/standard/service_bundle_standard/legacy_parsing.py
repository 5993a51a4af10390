"""Legacy text/JSON parsing helpers: JSON Cleaner, Output Parser, Data to Message (``ParseData``),
Parse DataFrame, Parse JSON (``ParseJSONData``) and Message Store (``StoreMessage``).

Templates use :func:`core.engine.text.format_template` (``{key}`` lookups only, never
``str.format`` attribute access); JSON repair uses the ``json_repair`` library (what the
reference uses) and jq queries the bundle's sandboxed jq module.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.inputs import (
    BoolInput,
    DataFrameInput,
    DataInput,
    DropdownInput,
    HandleInput,
    MessageInput,
    MessageTextInput,
    MultilineInput,
    StrInput,
)
from core.engine.text import format_template
from core.engine.types import jsonable, to_text
from service_bundle_standard.jq_lite import jq_all
from service_bundle_standard.legacy_data import as_data_list

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def repair_json(text: str) -> str:
    from json_repair import repair_json as _repair  # lazy: only the JSON helpers need it

    return str(_repair(text))


class JSONCleaner(Component):
    key = "JSONCleaner"
    display_name = "JSON Cleaner"
    display_names = {"en": "JSON Cleaner", "fr": "Nettoyeur JSON", "de": "JSON-Bereiniger", "es": "Limpiador JSON"}
    description = (
        "Cleans the messy and sometimes incorrect JSON strings produced by LLMs "
        "so that they are fully compliant with the JSON spec."
    )
    icon = "braces"
    category = "processing"
    legacy = True
    inputs = [
        MessageTextInput("json_str", "JSON String", "", required=True, info="The JSON string to be cleaned."),
        BoolInput(
            "remove_control_chars",
            "Remove Control Characters",
            False,
            info="Remove control characters from the JSON string.",
        ),
        BoolInput(
            "normalize_unicode", "Normalize Unicode", False, info="Normalize Unicode characters in the JSON string."
        ),
        BoolInput(
            "validate_json", "Validate JSON", False, info="Validate the JSON string to ensure it is well-formed."
        ),
    ]
    outputs = [Output("output", "Cleaned JSON String", "clean_json", ["Message"])]

    def clean_json(self) -> Message:
        text = to_text(self.json_str)
        start, end = text.find("{"), text.rfind("}")
        if start == -1 or end == -1 or end < start:
            raise ValueError("Invalid JSON string: Missing '{' or '}'")
        text = text[start : end + 1]
        if self.remove_control_chars:
            text = _CONTROL.sub("", text)
        if self.normalize_unicode:
            text = unicodedata.normalize("NFC", text)
        if self.validate_json:
            try:
                json.loads(text)
            except ValueError as exc:
                raise ValueError(f"Invalid JSON string: {exc}") from None
        result = repair_json(text)
        self.status = result
        return Message(text=result)


CSV_FORMAT_INSTRUCTIONS = (
    "Your response should be a list of comma separated values, eg: `foo, bar, baz` or `foo,bar,baz`"
)


class CSVOutputParser:
    """The value of Output Parser's ``output_parser`` output: what an LLM component asks for and parses."""

    type_name = "OutputParser"

    def get_format_instructions(self) -> str:
        return CSV_FORMAT_INSTRUCTIONS

    def parse(self, text: str) -> list[str]:
        return [part.strip() for part in text.strip().split(",") if part.strip()]

    def __str__(self) -> str:
        return CSV_FORMAT_INSTRUCTIONS


class OutputParser(Component):
    key = "OutputParser"
    display_name = "Output Parser"
    display_names = {"en": "Output Parser", "fr": "Analyseur de sortie", "de": "Ausgabeparser"}
    description = "Transforms the output of an LLM into a specified format."
    icon = "type"
    category = "processing"
    legacy = True
    inputs = [
        DropdownInput("parser_type", "Parser", "CSV", options=["CSV"], info="Choose the parser type."),
    ]
    outputs = [
        Output("format_instructions", "Format Instructions", "format_instructions", ["Message"]),
        Output("output_parser", "Output Parser", "build_parser", ["OutputParser"]),
    ]

    def _check(self) -> None:
        if self.parser_type != "CSV":
            raise ValueError(f"Unsupported or missing parser '{self.parser_type}'")

    def format_instructions(self) -> Message:
        self._check()
        return Message(text=CSV_FORMAT_INSTRUCTIONS)

    def build_parser(self) -> CSVOutputParser:
        self._check()
        return CSVOutputParser()


def _format_values(data: Data) -> dict[str, Any]:
    values: dict[str, Any] = dict(data.data)
    inner = values.get("data")
    if isinstance(inner, dict):
        values = {**inner, **values}
    values["data"] = data.data
    values.setdefault("text", data.get_text())
    return values


def render_template(template: str, values: dict[str, Any]) -> str:
    try:
        return format_template(template, values)
    except KeyError as exc:
        raise ValueError(f"Template key {exc} not found. Available keys: {', '.join(map(str, values))}") from None


class ParseData(Component):
    key = "ParseData"
    display_name = "Data to Message"
    display_names = {"en": "Data to Message", "fr": "Données vers message", "de": "Daten zu Nachricht"}
    description = "Convert JSON objects into Messages using any {field_name} from input JSON."
    icon = "message-square"
    category = "processing"
    legacy = True
    inputs = [
        DataInput("data", "JSON", "", is_list=True, required=True, info="The JSON to convert to text."),
        MultilineInput(
            "template",
            "Template",
            "{text}",
            required=True,
            info="The template to use for formatting the data. It can contain the keys {text}, {data} or any other "
            "key in the JSON.",
        ),
        StrInput("sep", "Separator", "\n", advanced=True),
    ]
    outputs = [
        Output("text", "Message", "parse_data", ["Message"]),
        Output("data_list", "Data List", "parse_data_as_list", ["JSON"]),
    ]

    def _texts(self) -> tuple[list[Data], list[str]]:
        items = as_data_list(self.data)
        template = to_text(self.template) or "{text}"
        return items, [render_template(template, _format_values(d)) for d in items]

    def parse_data(self) -> Message:
        _, texts = self._texts()
        text = (self.sep if self.sep is not None else "\n").join(texts)
        self.status = text
        return Message(text=text)

    def parse_data_as_list(self) -> list[Data]:
        items, texts = self._texts()
        out = []
        for item, text in zip(items, texts, strict=True):
            copy = Data(dict(item.data), text_key=item.text_key)
            copy.data[copy.text_key] = text
            out.append(copy)
        self.status = out
        return out


class ParseDataFrame(Component):
    key = "ParseDataFrame"
    display_name = "Parse DataFrame"
    display_names = {"en": "Parse DataFrame", "fr": "Analyser un tableau", "de": "Tabelle auswerten"}
    description = (
        "Convert a Table into plain text following a specified template. Each column in the Table is treated as "
        "a possible template key, e.g. {col_name}."
    )
    icon = "braces"
    category = "processing"
    legacy = True
    inputs = [
        DataFrameInput("df", "Table", "", info="The Table to convert to text rows."),
        MultilineInput(
            "template",
            "Template",
            "{text}",
            info="The template for formatting each row. Use placeholders matching column names in the Table, "
            "for example '{col1}', '{col2}'.",
        ),
        StrInput("sep", "Separator", "\n", advanced=True, info="String that joins all row texts."),
    ]
    outputs = [Output("text", "Text", "parse_data", ["Message"])]

    def parse_data(self) -> Message:
        frame = self.df
        if isinstance(frame, list):
            frame = DataFrame([r for f in frame for r in (f.rows if isinstance(f, DataFrame) else [f])])
        if isinstance(frame, Data):
            frame = frame.to_dataframe()
        if frame in (None, ""):
            frame = DataFrame([])
        if not isinstance(frame, DataFrame):
            raise ValueError(f"Expected a Table, got {type(frame).__name__}")
        template = to_text(self.template) or "{text}"
        lines = [render_template(template, {c: row.get(c) for c in frame.columns}) for row in frame.rows]
        text = (self.sep if self.sep is not None else "\n").join(lines)
        self.status = text
        return Message(text=text)


class ParseJSONData(Component):
    key = "ParseJSONData"
    display_name = "Parse JSON"
    display_names = {"en": "Parse JSON", "fr": "Analyser du JSON", "de": "JSON auswerten", "es": "Analizar JSON"}
    description = "Convert and extract JSON fields."
    icon = "braces"
    category = "processing"
    legacy = True
    inputs = [
        HandleInput(
            "input_value",
            "Input",
            "",
            input_types=["Message", "Data", "JSON"],
            required=True,
            info="JSON object to filter. Can be a Message or a JSON object.",
        ),
        MessageTextInput(
            "query", "JQ Query", "", required=True, info="JQ Query to filter the data. The input is always a JSON list."
        ),
    ]
    outputs = [Output("filtered_data", "Filtered JSON", "filter_data", ["JSON"])]

    @staticmethod
    def _parse(value: Any) -> Any:
        if isinstance(value, Message):
            text = to_text(value.text)
        elif isinstance(value, Data):
            return jsonable(value.data)
        elif isinstance(value, (dict, list)):
            return jsonable(value)
        else:
            text = to_text(value)
        try:
            return json.loads(text)
        except ValueError:
            return json.loads(repair_json(text))

    def filter_data(self) -> list[Data]:
        value = self.input_value
        if value in (None, "", []):
            return []
        query = to_text(self.query).strip()
        if not query:
            raise ValueError("JQ Query is required.")
        parsed = [self._parse(v) for v in value] if isinstance(value, list) else self._parse(value)
        results = jq_all(query, parsed)
        docs = [
            Data(r) if isinstance(r, dict) else Data({"text": to_text(r) if r is not None else ""}) for r in results
        ]
        self.status = docs
        return docs


class StoreMessage(Component):
    key = "StoreMessage"
    display_name = "Message Store"
    display_names = {"en": "Message Store", "fr": "Stockage de messages", "de": "Nachrichtenspeicher"}
    description = "Stores a chat message or text into the service tables or an external memory."
    icon = "message-square-text"
    category = "processing"
    legacy = True
    inputs = [
        MessageInput("message", "Message", "", required=True, info="The chat message to be stored."),
        HandleInput(
            "memory",
            "External Memory",
            "",
            input_types=["Memory"],
            info="The external memory to store the message. If empty, it will use the service tables.",
        ),
        MessageTextInput(
            "sender", "Sender", "", advanced=True, info="The sender of the message. Might be Machine or User."
        ),
        MessageTextInput("sender_name", "Sender Name", "", advanced=True, info="The name of the sender."),
        MessageTextInput("session_id", "Session ID", "", advanced=True, info="The session ID of the chat."),
    ]
    outputs = [Output("stored_messages", "Stored Messages", "store_message", ["Message"])]

    def store_message(self) -> Message:
        if self.memory not in (None, ""):
            raise ComponentError("External memories are not supported here; disconnect the memory to use the service.")
        value = self.message
        if value in (None, ""):
            raise ValueError("No message to store.")
        source = value if isinstance(value, Message) else Message(text=to_text(value))
        message = source.copy()
        message.id = None
        message.session_id = to_text(self.session_id) or source.session_id or (self.context.session_id or "")
        message.sender = to_text(self.sender) or source.sender or "Machine"
        message.sender_name = to_text(self.sender_name) or source.sender_name or "AI"
        stored = self.send_message(message)
        self.status = "Message stored successfully"
        return stored


COMPONENTS = [JSONCleaner, OutputParser, ParseData, ParseDataFrame, ParseJSONData, StoreMessage]
