"""Type Convert: a Message, Data or DataFrame turned into another of the three (with Auto Parse of JSON and CSV)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from core.engine import Component, Data, DataFrame, Message, Output
from core.engine.inputs import BoolInput, HandleInput, TabInput
from core.engine.types import to_text

ANY_TYPES = ["Message", "Data", "JSON", "DataFrame", "Table"]


# -- Type Convert ------------------------------------------------------------------------------


def _parse_structured(text: str) -> Any:
    """Auto-parse: JSON first, then CSV with a header; None when neither fits."""
    stripped = text.strip()
    if not stripped:
        return None
    try:
        parsed = json.loads(stripped)
    except ValueError:
        pass
    else:  # an object, or a list of objects (the reference's "records"); anything else stays text
        if isinstance(parsed, dict) or (isinstance(parsed, list) and all(isinstance(r, dict) for r in parsed)):
            return parsed
    if "\n" in stripped and "," in stripped.split("\n", 1)[0]:
        reader = csv.DictReader(io.StringIO(stripped))
        rows = [dict(r) for r in reader]
        if rows:
            return rows
    return None


def convert_to_message(value: Any) -> Message:
    if isinstance(value, Message):
        return value
    if isinstance(value, str):
        return Message(text=value)
    if isinstance(value, (Data, DataFrame)):
        return value.to_message()
    if isinstance(value, dict):
        return Data(value).to_message()
    return Message(text=to_text(value))


def convert_to_data(value: Any, *, auto_parse: bool) -> Data:
    if isinstance(value, str):
        value = Message(text=value)
    if isinstance(value, dict):
        return Data(value)
    if isinstance(value, Message):
        if auto_parse:
            parsed = _parse_structured(to_text(value.text))
            if isinstance(parsed, dict):
                return Data(parsed)
            if isinstance(parsed, list):
                return Data({"records": parsed})
        return Data({"text": value.text})
    if isinstance(value, DataFrame):
        return value.to_data()
    if isinstance(value, Data):
        return value
    return Data({"text": to_text(value)})


def convert_to_dataframe(value: Any, *, auto_parse: bool) -> DataFrame:
    if isinstance(value, str):
        value = Message(text=value)
    if isinstance(value, dict):
        return DataFrame([value])
    if isinstance(value, DataFrame):
        return value
    if isinstance(value, Message):
        if auto_parse:
            parsed = _parse_structured(to_text(value.text))
            if isinstance(parsed, dict):
                return Data(parsed).to_dataframe()
            if isinstance(parsed, list):
                return DataFrame(parsed)
        return DataFrame([{"text": value.text}])
    if isinstance(value, Data):
        return value.to_dataframe()
    return DataFrame([{"text": to_text(value)}])


class TypeConverterComponent(Component):
    key = "TypeConverterComponent"
    display_name = "Type Convert"
    display_names = {"en": "Type Convert", "fr": "Conversion de type", "de": "Typkonvertierung", "es": "Convertir tipo"}
    description = "Convert between different types (Message, JSON, Table)"
    icon = "repeat"
    category = "processing"
    documentation = "https://docs.service.org/type-convert"
    frontend_outputs = ("message_output",)
    inputs = [
        HandleInput(
            "input_data",
            "Input",
            "",
            input_types=list(ANY_TYPES),
            required=True,
            info="Accept Message, JSON or Table as input",
        ),
        BoolInput(
            "auto_parse", "Auto Parse", False, advanced=True, info="Detect and convert JSON/CSV strings automatically."
        ),
        TabInput(
            "output_type",
            "Output Type",
            "Message",
            options=["Message", "JSON", "Table"],
            info="Select the desired output data type",
        ),
    ]
    outputs = [
        Output("message_output", "Message Output", "convert_to_message", ["Message"]),
        Output("data_output", "JSON Output", "convert_to_data", ["JSON"]),
        Output("dataframe_output", "Table Output", "convert_to_dataframe", ["Table"]),
    ]

    def _input(self) -> Any:
        value = self.input_data
        if isinstance(value, list):
            value = value[0] if value else ""
        return value

    def active_outputs(self) -> list[str] | None:
        mapping = {
            "Message": "message_output",
            "JSON": "data_output",
            "Data": "data_output",
            "Table": "dataframe_output",
            "DataFrame": "dataframe_output",
        }
        if self.output_type not in mapping:
            raise ValueError(f"Invalid output type '{self.output_type}'. Use Message, JSON or Table.")
        return [mapping[self.output_type]]

    def convert_to_message(self) -> Message:
        result = convert_to_message(self._input())
        self.status = result
        return result

    def convert_to_data(self) -> Data:
        result = convert_to_data(self._input(), auto_parse=self.auto_parse)
        self.status = result
        return result

    def convert_to_dataframe(self) -> DataFrame:
        result = convert_to_dataframe(self._input(), auto_parse=self.auto_parse)
        self.status = result
        return result
