"""Data Operations (``Operations``) and the legacy Text/JSON/Table operations mapped onto it.

One operation per instance; the chosen operation decides the output
(reference-api.md section 5). Tables are :class:`core.engine.DataFrame` row lists,
so no pandas is needed. The operations themselves live in ``ops_text``, ``ops_json``
and ``ops_table``; the shared fields in ``ops_fields``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from core.engine import Component, Data, DataFrame, Message, Output
from core.engine.inputs import DataFrameInput, JSONInput, MultilineInput, SortableListInput, TabInput
from core.engine.types import to_text
from service_bundle_standard.ops_fields import (
    JSON_NAMES,
    JSON_OPS,
    TABLE_NAMES,
    TABLE_OPS,
    TEXT_NAMES,
    TEXT_OPS,
    all_outputs,
    json_inputs,
    operation_options,
    table_inputs,
    text_inputs,
)
from service_bundle_standard.ops_json import JSONOperationsMixin
from service_bundle_standard.ops_table import TableOperationsMixin
from service_bundle_standard.ops_text import TextOperationsMixin


class OperationsMixin(TextOperationsMixin, JSONOperationsMixin, TableOperationsMixin):
    """The operation implementations shared by Data Operations and the legacy components."""

    operation_field: ClassVar[str] = "operation"
    _result: Any

    # -- plumbing ------------------------------------------------------------------
    def operation_name(self) -> str:
        value = getattr(self, self.operation_field, None)
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, dict):
            value = value.get("name")
        return str(value or "")

    def active_outputs(self) -> list[str] | None:
        op = self.operation_name()
        if op == "Text Join":
            return ["text_output", "message_output"]
        if op == "Word Count" or op in JSON_NAMES:
            return ["data_output"]
        if op == "Text to DataFrame" or op in TABLE_NAMES:
            return ["dataframe_output"]
        return ["message_output"]

    def run_operation(self) -> Any:
        if hasattr(self, "_result"):
            return self._result
        op = self.operation_name()
        if not op:
            raise ValueError("Select an operation.")
        if op in TEXT_NAMES:
            result = self.text_operation(op)
        elif op in JSON_NAMES:
            result = self.json_operation(op)
        elif op in TABLE_NAMES:
            result = self.table_operation(op)
        else:
            raise ValueError(f"Unknown operation '{op}'")
        self._result = result
        self.status = result  # type: ignore[attr-defined]
        return result

    def as_message(self) -> Message:
        result = self.run_operation()
        if isinstance(result, Message):
            return result
        if isinstance(result, (Data, DataFrame)):
            return result.to_message()
        if isinstance(result, (dict, list)):
            return Message(text=json.dumps(result, ensure_ascii=False))
        return Message(text=to_text(result))

    def as_text(self) -> Message:
        return Message(text=to_text(self.run_operation()))

    def as_data(self) -> Data:
        result = self.run_operation()
        if isinstance(result, Data) and not isinstance(result, Message):
            return result
        if isinstance(result, DataFrame):
            return result.to_data()
        if isinstance(result, dict):
            return Data(result)
        return Data({"result": to_text(result)})

    def as_dataframe(self) -> DataFrame:
        result = self.run_operation()
        if isinstance(result, DataFrame):
            return result
        if isinstance(result, Data) and not isinstance(result, Message):
            return result.to_dataframe()
        if isinstance(result, dict):
            return DataFrame([result])
        return DataFrame([{"text": to_text(result)}]) if to_text(result) else DataFrame([])


_OPERATIONS_INFO = "Select the operation to perform. The matching fields and output appear once you choose one."


class OperationsComponent(OperationsMixin, Component):
    key = "Operations"
    display_name = "Data Operations"
    display_names = {
        "en": "Data Operations",
        "fr": "Opérations sur les données",
        "de": "Datenoperationen",
        "es": "Operaciones de datos",
    }
    description = "Perform operations on Text, JSON, and Tables from a single component."
    icon = "wand-sparkles"
    category = "processing"
    documentation = "https://docs.service.org/components-processing#operations"
    frontend_outputs = ("message_output",)
    inputs = [
        TabInput(
            "input_type",
            "Input Type",
            "Text",
            options=["Text", "JSON", "Table"],
            info="Select the type of input to operate on.",
        ),
        MultilineInput("text_input", "Text", "", info="The input text to process."),
        JSONInput("data", "JSON", "", is_list=True, show=False, info="The JSON / Data object to operate on."),
        DataFrameInput("df", "Table", "", is_list=True, show=False, info="The input table to operate on."),
        SortableListInput(
            "operation",
            "Operation",
            [],
            options=operation_options(TEXT_OPS),
            placeholder="Select Operation",
            real_time_refresh=True,
            info=_OPERATIONS_INFO,
        ),
        *json_inputs(),
        *table_inputs(),
        *text_inputs(),
    ]
    outputs = all_outputs()


class TextOperations(OperationsMixin, Component):
    key = "TextOperations"
    display_name = "Text Operations"
    display_names = {
        "en": "Text Operations",
        "fr": "Opérations sur le texte",
        "de": "Textoperationen",
        "es": "Operaciones de texto",
    }
    description = "Perform various text processing operations including text-to-DataFrame conversion."
    icon = "type"
    category = "processing"
    legacy = True
    frontend_outputs = ()
    inputs = [
        MultilineInput("text_input", "Text Input", "", required=True, info="The input text to process."),
        SortableListInput(
            "operation",
            "Operation",
            [],
            options=operation_options(TEXT_OPS),
            placeholder="Select Operation",
            real_time_refresh=True,
        ),
        *text_inputs(),
    ]
    outputs = all_outputs()

    def run_operation(self) -> Any:
        if self.operation_name() and self.operation_name() not in TEXT_NAMES:
            raise ValueError(f"'{self.operation_name()}' is not a text operation")
        return super().run_operation()


class DataOperations(OperationsMixin, Component):
    key = "DataOperations"
    display_name = "JSON Operations"
    display_names = {
        "en": "JSON Operations",
        "fr": "Opérations JSON",
        "de": "JSON-Operationen",
        "es": "Operaciones JSON",
    }
    description = "Perform various operations on a JSON object."
    icon = "file-json"
    category = "processing"
    legacy = True
    operation_field = "operations"
    inputs = [
        JSONInput("data", "JSON", "", is_list=True, required=True, info="The JSON object to operate on."),
        SortableListInput(
            "operations",
            "Operations",
            [],
            options=operation_options(JSON_OPS),
            placeholder="Select Operation",
            real_time_refresh=True,
        ),
        *json_inputs(),
    ]
    outputs = [Output("data_output", "JSON", "as_data", ["JSON"])]

    def run_operation(self) -> Any:
        if self.operation_name() and self.operation_name() not in JSON_NAMES:
            raise ValueError(f"'{self.operation_name()}' is not a JSON operation")
        return super().run_operation()

    def active_outputs(self) -> list[str] | None:
        return ["data_output"]


class DataFrameOperations(OperationsMixin, Component):
    key = "DataFrameOperations"
    display_name = "Table Operations"
    display_names = {
        "en": "Table Operations",
        "fr": "Opérations sur les tableaux",
        "de": "Tabellenoperationen",
        "es": "Operaciones de tabla",
    }
    description = "Perform various operations on a Table."
    icon = "table"
    category = "processing"
    legacy = True
    inputs = [
        DataFrameInput("df", "Table", "", is_list=True, required=True, info="The input table to operate on."),
        SortableListInput(
            "operation",
            "Operation",
            [],
            options=operation_options(TABLE_OPS),
            placeholder="Select Operation",
            real_time_refresh=True,
        ),
        *table_inputs(),
    ]
    outputs = [Output("output", "Table", "perform_operation", ["Table"])]

    def perform_operation(self) -> DataFrame:
        if self.operation_name() and self.operation_name() not in TABLE_NAMES:
            raise ValueError(f"'{self.operation_name()}' is not a table operation")
        return self.as_dataframe()

    def active_outputs(self) -> list[str] | None:
        return ["output"]


COMPONENTS = [OperationsComponent, TextOperations, DataOperations, DataFrameOperations]
