"""Legacy JSON helpers still used by exported flows: Alter Metadata, Create List, Extract Key, Filter Data,
Filter Values, Combine Data, Message to Data, Select Data, Update Data and Dynamic Create Data.

Behaviour follows the reference components of the same keys; where the reference returned an
``{"error": ...}`` object for a bad input we do the same (flows test for it), and where it
crashed with a Python exception we raise a ``ValueError`` with a readable message instead.
"""

from __future__ import annotations

from typing import Any

from core.engine import Component, Data, DataFrame, Message, Output
from core.engine.inputs import (
    BoolInput,
    DataInput,
    DictInput,
    DropdownInput,
    HandleInput,
    IntInput,
    MessageInput,
    MessageTextInput,
    NestedDictInput,
    StrInput,
    TableInput,
)
from core.engine.types import to_text

MAX_FIELDS = 15


def as_data_list(value: Any) -> list[Data]:
    """Every JSON-ish value of a (list) input as :class:`Data` objects; Messages keep their text."""
    items = value if isinstance(value, list) else ([] if value in (None, "") else [value])
    out: list[Data] = []
    for item in items:
        if isinstance(item, Message):
            out.append(Data({"text": item.text}))
        elif isinstance(item, Data):
            out.append(item)
        elif isinstance(item, DataFrame):
            out.extend(item.to_data_list())
        elif isinstance(item, dict):
            out.append(Data(item))
        elif isinstance(item, list):
            out.extend(as_data_list(item))
        elif isinstance(item, str):
            out.append(Data({"text": item}))
        else:
            raise ValueError(f"Expected JSON objects, got {type(item).__name__}")
    return out


def _dynamic_value(value: Any) -> dict[str, Any]:
    """A dynamic ``field_<n>_key`` value (a ``{key: value}`` dict, a Data or a key/value row list)."""
    if isinstance(value, Message):
        return {"text": value.text}
    if isinstance(value, Data):
        return dict(value.data)
    coerced = DictInput("field").coerce(value)
    return coerced if isinstance(coerced, dict) else {}


class AlterMetadata(Component):
    key = "AlterMetadata"
    display_name = "Alter Metadata"
    display_names = {"en": "Alter Metadata", "fr": "Modifier les métadonnées", "de": "Metadaten ändern"}
    description = "Adds/Removes Metadata Dictionary on inputs"
    icon = "merge"
    category = "processing"
    legacy = True
    inputs = [
        HandleInput(
            "input_value",
            "Input",
            "",
            input_types=["Message", "Data", "JSON"],
            is_list=True,
            info="Object(s) to which Metadata should be added",
        ),
        StrInput(
            "text_in",
            "User Text",
            "",
            info="Text input; value will be in 'text' attribute of the JSON object. Empty text entries are ignored.",
        ),
        NestedDictInput(
            "metadata",
            "Metadata",
            {},
            input_types=["Data", "JSON"],
            required=True,
            info="Metadata to add to each object",
        ),
        MessageTextInput("remove_fields", "Fields to Remove", "", is_list=True, info="Metadata Fields to Remove"),
    ]
    outputs = [
        Output("data", "JSON", "process_output", ["JSON"]),
        Output("dataframe", "Table", "as_dataframe", ["Table"]),
    ]

    def process_output(self) -> list[Data]:
        if hasattr(self, "_out"):
            return self._out
        metadata = self.metadata
        if isinstance(metadata, Data):
            metadata = dict(metadata.data)
        if not isinstance(metadata, dict):
            metadata = DictInput("metadata").coerce(metadata)
        metadata = {k: v for k, v in metadata.items() if isinstance(k, str) and k.strip()}
        # the typed text's row comes first, then the inputs, as the reference lists them
        items = [Data({"text": to_text(self.text_in)})] if to_text(self.text_in) else []
        items += [Data(dict(d.data), text_key=d.text_key) for d in as_data_list(self.input_value)]
        removals = [f for f in (self.remove_fields or []) if f]
        for item in items:
            item.data.update(metadata)
            for name in removals:
                item.data.pop(name, None)
        self._out = items
        self.status = items
        return items

    def as_dataframe(self) -> DataFrame:
        return DataFrame(self.process_output())


class CreateList(Component):
    key = "CreateList"
    display_name = "Create List"
    display_names = {"en": "Create List", "fr": "Créer une liste", "de": "Liste erstellen", "es": "Crear lista"}
    description = "Creates a list of texts."
    icon = "list"
    category = "processing"
    legacy = True
    inputs = [StrInput("texts", "Texts", "", is_list=True, info="Enter one or more texts.")]
    outputs = [
        Output("list", "Data List", "create_list", ["JSON"]),
        Output("dataframe", "Table", "as_dataframe", ["Table"]),
    ]

    def create_list(self) -> list[Data]:
        items = [Data({"text": t}) for t in (self.texts or [])]
        self.status = items
        return items

    def as_dataframe(self) -> DataFrame:
        return DataFrame(self.create_list())


class ExtractaKey(Component):
    key = "ExtractaKey"
    display_name = "Extract Key"
    display_names = {"en": "Extract Key", "fr": "Extraire une clé", "de": "Schlüssel extrahieren"}
    description = (
        "Extract a specific key from a JSON object or a list of JSON objects and return the extracted value(s) "
        "as JSON object(s)."
    )
    icon = "key"
    category = "processing"
    legacy = True
    inputs = [
        DataInput(
            "data_input", "JSON Input", "", info="The JSON object or list of JSON objects to extract the key from."
        ),
        StrInput("key", "Key to Extract", "", info="The key in the JSON object(s) to extract."),
    ]
    outputs = [Output("extracted_data", "Extracted JSON", "extract_key", ["JSON"])]

    def extract_key(self) -> Data | list[Data]:
        name = self.key_name()
        value = self.data_input
        if isinstance(value, list):
            result = [Data({name: d.data[name]}) for d in as_data_list(value) if name in d.data]
            self.status = result
            return result
        if isinstance(value, Data) and not isinstance(value, Message):
            if name in value.data:
                found = Data({name: value.data[name]})
                self.status = found
                return found
            self.status = f"Key '{name}' not found in JSON object."
            return Data({"error": f"Key '{name}' not found in JSON object."})
        self.status = "Invalid input. Expected a JSON object or a list of JSON objects."
        return Data({"error": "Invalid input. Expected a JSON object or a list of JSON objects."})

    def key_name(self) -> str:
        # ``key`` is both the registry key (class attribute) and the reference's field name.
        return to_text(self.__dict__.get("key", ""))


class FilterData(Component):
    key = "FilterData"
    display_name = "Filter Data"
    display_names = {"en": "Filter Data", "fr": "Filtrer les données", "de": "Daten filtern", "es": "Filtrar datos"}
    description = "Filters a JSON object based on a list of keys."
    icon = "filter"
    category = "processing"
    legacy = True
    beta = True
    inputs = [
        DataInput("data", "JSON", "", info="JSON object to filter."),
        MessageTextInput("filter_criteria", "Filter Criteria", "", is_list=True, info="List of keys to filter by."),
    ]
    outputs = [Output("filtered_data", "Filtered JSON", "filter_data", ["JSON"])]

    def filter_data(self) -> Data:
        items = as_data_list(self.data)
        if len(items) > 1:
            raise ValueError("Filter Data takes one JSON object.")
        source = items[0].data if items else {}
        keys = [k for k in (self.filter_criteria or []) if k]
        result = Data({k: source[k] for k in keys if k in source})
        self.status = result
        return result


FILTER_VALUE_OPERATORS = ["equals", "not equals", "contains", "starts with", "ends with"]


def compare_values(item_value: Any, filter_value: Any, operator: str) -> bool:
    a, b = to_text(item_value), to_text(filter_value)
    if operator == "equals":
        return a == b
    if operator == "not equals":
        return a != b
    if operator == "contains":
        return b in a
    if operator == "starts with":
        return a.startswith(b)
    if operator == "ends with":
        return a.endswith(b)
    raise ValueError(f"Invalid operator '{operator}'. Use one of: {', '.join(FILTER_VALUE_OPERATORS)}")


class FilterDataValues(Component):
    key = "FilterDataValues"
    display_name = "Filter Values"
    display_names = {"en": "Filter Values", "fr": "Filtrer les valeurs", "de": "Werte filtern", "es": "Filtrar valores"}
    description = (
        "Filter a list of JSON items based on a specified key, filter value, and comparison operator. "
        "Check advanced options to select match comparision."
    )
    icon = "filter"
    category = "processing"
    legacy = True
    beta = True
    inputs = [
        DataInput("input_data", "Input JSON", "", is_list=True, info="The list of JSON items to filter."),
        MessageTextInput(
            "filter_key",
            "Filter Key",
            "route",
            input_types=["Data", "JSON"],
            info="The key to filter on (e.g., 'route').",
        ),
        MessageTextInput(
            "filter_value",
            "Filter Value",
            "CMIP",
            input_types=["Data", "JSON"],
            info="The value to filter by (e.g., 'CMIP').",
        ),
        DropdownInput(
            "operator",
            "Comparison Operator",
            "equals",
            options=list(FILTER_VALUE_OPERATORS),
            advanced=True,
            info="The operator to apply for comparing the values.",
        ),
    ]
    outputs = [Output("filtered_data", "Filtered JSON", "filter_data", ["JSON"])]

    def filter_data(self) -> list[Data]:
        key = to_text(self.filter_key)
        if not key:
            raise ValueError("Filter Key is required.")
        if self.operator not in FILTER_VALUE_OPERATORS:
            raise ValueError(f"Invalid operator '{self.operator}'. Use one of: {', '.join(FILTER_VALUE_OPERATORS)}")
        result = [
            d
            for d in as_data_list(self.input_data)
            if key in d.data and compare_values(d.data[key], self.filter_value, self.operator)
        ]
        self.status = result
        return result


COMBINE_OPERATIONS = ["Concatenate", "Append", "Merge", "Join"]


class MergeDataComponent(Component):
    key = "MergeDataComponent"
    display_name = "Combine Data"
    display_names = {"en": "Combine Data", "fr": "Combiner des données", "de": "Daten kombinieren"}
    description = "Combines data using different operations"
    icon = "merge"
    category = "processing"
    legacy = True
    inputs = [
        DataInput("data_inputs", "JSON Inputs", "", is_list=True, required=True, info="JSON objects to combine"),
        DropdownInput("operation", "Operation Type", "Concatenate", options=list(COMBINE_OPERATIONS)),
    ]
    outputs = [Output("combined_data", "Table", "combine_data", ["Table"])]

    def combine_data(self) -> DataFrame:
        if self.operation not in COMBINE_OPERATIONS:
            raise ValueError(f"Invalid operation '{self.operation}'. Use one of: {', '.join(COMBINE_OPERATIONS)}")
        items = as_data_list(self.data_inputs)
        if len(items) < 2:  # the reference needs two inputs and returns an empty table otherwise
            self.status = DataFrame([])
            return DataFrame([])
        if self.operation == "Append":
            frame = DataFrame([d.data for d in items])
        else:
            combined: dict[str, Any] = {}
            for index, item in enumerate(items, 1):
                for key, value in item.data.items():
                    if self.operation == "Join":
                        combined[f"{key}_doc{index}" if index > 1 else key] = value
                    elif key not in combined:
                        combined[key] = value
                    elif self.operation == "Concatenate":
                        both_text = isinstance(combined[key], str) and isinstance(value, str)
                        combined[key] = f"{combined[key]}\n{value}" if both_text else value
                    elif isinstance(value, str):  # Merge: repeated text values become a list
                        prev = combined[key]
                        combined[key] = [*prev, value] if isinstance(prev, list) else [prev, value]
                    else:
                        combined[key] = value
            frame = DataFrame([combined])
        self.status = frame
        return frame


class MessagetoData(Component):
    key = "MessagetoData"
    display_name = "Message to Data"
    display_names = {"en": "Message to Data", "fr": "Message vers données", "de": "Nachricht zu Daten"}
    description = "Convert a Message object to a JSON object"
    icon = "message-square-share"
    category = "processing"
    legacy = True
    beta = True
    inputs = [MessageInput("message", "Message", "", info="The Message object to convert to a JSON object")]
    outputs = [Output("data", "JSON", "convert_message_to_data", ["JSON"])]

    def convert_message_to_data(self) -> Data:
        if isinstance(self.message, Message):
            fields = self.message.to_dict()["data"]
            data = Data({k: v for k, v in fields.items() if v not in (None, "", [])})
            # what a component put beside the text (Read File: file_path, filename, file_size, mimetype...)
            data.data.update(self.message.data)
            self.status = data
            return data
        msg = "Error converting Message to JSON: Input must be a Message object"
        self.status = msg
        return Data({"error": msg})


class SelectData(Component):
    key = "SelectData"
    display_name = "Select Data"
    display_names = {"en": "Select Data", "fr": "Sélectionner des données", "de": "Daten auswählen"}
    description = "Select a single JSON object from a list."
    icon = "prototypes"
    category = "processing"
    legacy = True
    inputs = [
        DataInput("data_list", "JSON List", "", is_list=True, info="List of JSON objects to select from."),
        IntInput("data_index", "JSON Index", 0, info="Index of the JSON object to select."),
    ]
    outputs = [Output("selected_data", "Selected JSON", "select_data", ["JSON"])]

    def select_data(self) -> Data:
        items = as_data_list(self.data_list)
        index = self.data_index
        if index < 0 or index >= len(items):
            raise ValueError(f"Selected index {index} is out of range (the list has {len(items)} items).")
        self.status = items[index]
        return items[index]


class UpdateData(Component):
    key = "UpdateData"
    display_name = "Update Data"
    display_names = {"en": "Update Data", "fr": "Mettre à jour les données", "de": "Daten aktualisieren"}
    description = "Dynamically update or append data with the specified fields."
    icon = "FolderSync"
    category = "processing"
    legacy = True
    accepts_dynamic_fields = True
    inputs = [
        DataInput("old_data", "JSON", "", is_list=True, required=True, info="The record to update."),
        IntInput(
            "number_of_fields",
            "Number of Fields",
            0,
            real_time_refresh=True,
            info="Number of fields to be added to the record.",
        ),
        MessageTextInput(
            "text_key", "Text Key", "", advanced=True, info="Key that identifies the field to be used as the text."
        ),
        BoolInput(
            "text_key_validator",
            "Text Key Validator",
            False,
            advanced=True,
            info="If enabled, checks if the given 'Text Key' is present in the given 'Data'.",
        ),
    ]
    outputs = [Output("data", "JSON", "build_data", ["JSON"])]

    def build_data(self) -> Data | list[Data]:
        if self.number_of_fields < 0 or self.number_of_fields > MAX_FIELDS:
            raise ValueError(f"Number of fields must be between 0 and {MAX_FIELDS}.")
        updates: dict[str, Any] = {}
        for name in sorted(self.extra_params):
            if name.startswith("field_"):
                updates.update(_dynamic_value(self.extra_params[name]))
        items = [Data(dict(d.data), text_key=d.text_key) for d in as_data_list(self.old_data)]
        if not items:
            raise ValueError("No JSON object to update.")
        for item in items:
            item.data.update(updates)
            if self.text_key:
                if self.text_key_validator and self.text_key not in item.data:
                    raise ValueError(f"Text Key: '{self.text_key}' not found in the JSON keys.")
                item.text_key = self.text_key
        self.status = items
        return items[0] if len(items) == 1 else items


FORM_FIELD_TYPES = ["Text", "Data", "Number", "Handle", "Boolean"]


class DynamicCreateData(Component):
    """Fields come from the ``form_fields`` table; their values are the node's ``dynamic_<name>`` fields."""

    key = "DynamicCreateData"
    display_name = "Dynamic Create Data"
    display_names = {"en": "Dynamic Create Data", "fr": "Création dynamique de données", "de": "Dynamische Daten"}
    description = "Dynamically create a JSON object with a specified number of fields."
    icon = "ListFilter"
    category = "processing"
    accepts_dynamic_fields = True
    inputs = [
        TableInput(
            "form_fields",
            "Input Configuration",
            [],
            input_types=["DataFrame", "Table"],
            real_time_refresh=True,
            info="Define the dynamic form fields. Each row creates a new input field.",
            table_schema=[
                {"name": "field_name", "display_name": "Field Name", "type": "str"},
                {
                    "name": "field_type",
                    "display_name": "Field Type",
                    "type": "str",
                    "options": list(FORM_FIELD_TYPES),
                    "default": "Text",
                },
            ],
        ),
        BoolInput(
            "include_metadata",
            "Include Metadata",
            False,
            advanced=True,
            info="Include form configuration metadata in the output.",
        ),
    ]
    outputs = [
        Output("form_data", "JSON", "process_form", ["JSON"]),
        Output("message", "Message", "get_message", ["Message"]),
    ]

    def _fields(self) -> list[tuple[str, str]]:
        rows = self.form_fields if isinstance(self.form_fields, list) else []
        fields: list[tuple[str, str]] = []
        for row in rows[:MAX_FIELDS]:
            if not isinstance(row, dict) or not to_text(row.get("field_name")).strip():
                continue
            ftype = to_text(row.get("field_type")) or "Text"
            if ftype not in FORM_FIELD_TYPES:
                raise ValueError(f"Invalid field type '{ftype}'. Use one of: {', '.join(FORM_FIELD_TYPES)}")
            fields.append((to_text(row["field_name"]).strip(), ftype))
        return fields

    def _value(self, name: str, ftype: str) -> Any:
        raw = self.extra_params.get(f"dynamic_{name}")
        if ftype in ("Data", "Handle"):
            if isinstance(raw, Message):
                return raw.text
            if isinstance(raw, Data):
                return dict(raw.data)
            if isinstance(raw, DataFrame):
                return raw.to_records()
            return raw if raw not in (None, "") else None
        if ftype == "Number":
            text = to_text(raw).strip()
            if not text:
                return 0
            try:
                number = float(text)
            except ValueError:
                raise ValueError(f"Field '{name}' expects a number, got {text!r}") from None
            return int(number) if number.is_integer() else number
        if ftype == "Boolean":
            return BoolInput(name).coerce(raw)
        return to_text(raw)

    def process_form(self) -> Data:
        values = {name: self._value(name, ftype) for name, ftype in self._fields()}
        if self.include_metadata:
            values["_metadata"] = {"fields": [{"name": n, "type": t} for n, t in self._fields()]}
        data = Data(values)
        self.status = data
        return data

    def get_message(self) -> Message:
        values = {k: v for k, v in self.process_form().data.items() if k != "_metadata"}
        if not values:
            return Message(text="No form data available")
        # the reference's block: a title, a rule, one bullet per field, a rule, the count
        rule = "=" * 40
        bullets = [f"• {name}: {'' if value is None else value}" for name, value in values.items()]
        return Message(text="\n".join(["📋 Form Data:", rule, *bullets, rule, f"Total fields: {len(values)}"]))


COMPONENTS = [
    AlterMetadata,
    CreateList,
    DynamicCreateData,
    ExtractaKey,
    FilterData,
    FilterDataValues,
    MergeDataComponent,
    MessagetoData,
    SelectData,
    UpdateData,
]
