"""Typed input descriptors for component authors.

Each descriptor knows its reference template-field dict (:meth:`Input.to_dict`)
and how to coerce a stored or connected value into what the component method
expects (:meth:`Input.coerce`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from core.engine.types import Data, DataFrame, Message, message_text, to_text

__all__ = [
    "BoolInput",
    "CodeInput",
    "DataFrameInput",
    "DataInput",
    "DictInput",
    "DropdownInput",
    "FileInput",
    "FloatInput",
    "HandleInput",
    "Input",
    "IntInput",
    "JSONInput",
    "MessageInput",
    "MessageTextInput",
    "MultilineInput",
    "NestedDictInput",
    "PromptInput",
    "SecretStrInput",
    "SliderInput",
    "SortableListInput",
    "StrInput",
    "TabInput",
    "TableInput",
]

_UNSET = object()


class Input:
    """Base descriptor. Subclasses set ``input_type`` (``_input_type``), ``field_type`` (``type``) and extras."""

    input_type = "Input"
    field_type = "str"
    default: Any = ""
    #: extra keys of the reference dict for this kind, with their defaults
    extra_keys: dict[str, Any] = {}
    text_like = False  # connected Message/Data values become their text

    def __init__(
        self,
        name: str,
        display_name: str | None = None,
        value: Any = _UNSET,
        *,
        info: str = "",
        required: bool = False,
        advanced: bool = False,
        show: bool = True,
        input_types: list[str] | None = None,
        is_list: bool = False,
        options: list[Any] | None = None,
        load_from_db: bool = False,
        placeholder: str = "",
        dynamic: bool = False,
        real_time_refresh: bool = False,
        tool_mode: bool = False,
        password: bool | None = None,
        multiline: bool | None = None,
        override_skip: bool = False,
        display_names: dict[str, str] | None = None,
        **extra: Any,
    ):
        self.name = name
        self.display_name = display_name if display_name is not None else name.replace("_", " ").title()
        self.value = copy.deepcopy(self.default) if value is _UNSET else value
        self.info = info
        self.required = required
        self.advanced = advanced
        self.show = show
        self.input_types = list(input_types) if input_types is not None else None
        self.is_list = is_list
        self.options = options
        self.load_from_db = load_from_db
        self.placeholder = placeholder
        self.dynamic = dynamic
        self.real_time_refresh = real_time_refresh
        self.tool_mode = tool_mode
        self.password = password
        self.multiline = multiline
        self.override_skip = override_skip
        self.display_names = display_names or {}
        self.extra = extra

    # -- serialisation -------------------------------------------------
    def to_dict(self, locale: str = "en") -> dict[str, Any]:
        out: dict[str, Any] = {
            "_input_type": self.input_type,
            "advanced": self.advanced,
            "api_editable": False,
            "display_name": self.display_names.get(locale, self.display_name),
            "dynamic": self.dynamic,
            "info": self.info,
            "name": self.name,
            "override_skip": self.override_skip,
            "placeholder": self.placeholder,
            "required": self.required,
            "show": self.show,
            "title_case": False,
            "tool_mode": self.tool_mode,
            "trace_as_metadata": True,
            "track_in_telemetry": False,
            "type": self.field_type,
            "value": copy.deepcopy(self.value),
            "list": self.is_list,
            "list_add_label": "Add More",
        }
        if self.input_types is not None:
            out["input_types"] = list(self.input_types)
        if self.real_time_refresh:
            out["real_time_refresh"] = True
        if self.options is not None:
            out["options"] = copy.deepcopy(self.options)
        if self.password is not None:
            out["password"] = self.password
        if self.multiline is not None:
            out["multiline"] = self.multiline
        for key, default in self.extra_keys.items():
            out[key] = copy.deepcopy(default)
        out.update(copy.deepcopy(self.extra))
        return out

    # -- runtime -------------------------------------------------------
    def coerce(self, value: Any) -> Any:
        """Convert a stored template value or a connected value for the component."""
        if self.is_list:
            if value is None or value == "":
                return []
            items = value if isinstance(value, list) else [value]
            return [self.coerce_one(v) for v in items]
        return self.coerce_one(value)

    def coerce_one(self, value: Any) -> Any:
        if self.text_like and isinstance(value, (Message, Data)):
            return message_text(value)
        return value


class StrInput(Input):
    input_type = "StrInput"
    extra_keys = {"load_from_db": False}

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        super().__init__(name, display_name, value, **kw)
        self.extra.setdefault("load_from_db", self.load_from_db)

    def coerce_one(self, value: Any) -> Any:
        if isinstance(value, (Message, Data)):
            return message_text(value)
        if value is None:
            return ""
        if isinstance(value, (int, float, bool)):
            return str(value)
        return value


class MessageTextInput(StrInput):
    input_type = "MessageTextInput"
    text_like = True
    extra_keys = {"trace_as_input": True}

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("input_types", ["Message"])
        super().__init__(name, display_name, value, **kw)


class MultilineInput(MessageTextInput):
    input_type = "MultilineInput"
    extra_keys = {"trace_as_input": True, "ai_enabled": False, "copy_field": False}

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("multiline", True)
        kw.setdefault("password", False)
        super().__init__(name, display_name, value, **kw)


class PromptInput(Input):
    input_type = "PromptInput"
    field_type = "prompt"
    text_like = True
    extra_keys = {"trace_as_input": True}


class CodeInput(Input):
    input_type = "CodeInput"
    field_type = "code"
    extra_keys = {"trace_as_input": True}


class SecretStrInput(StrInput):
    input_type = "SecretStrInput"

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("password", True)
        kw.setdefault("load_from_db", True)
        super().__init__(name, display_name, value, **kw)


class IntInput(Input):
    input_type = "IntInput"
    field_type = "int"
    default = 0

    def coerce_one(self, value: Any) -> Any:
        if value is None or value == "":
            return copy.deepcopy(self.value) if not isinstance(self.value, str) else 0
        if isinstance(value, (Message, Data)):
            value = to_text(value)
        if isinstance(value, bool):
            return int(value)
        try:
            return int(float(value)) if isinstance(value, str) else int(value)
        except (TypeError, ValueError):
            msg = f"Invalid integer for '{self.name}': {value!r}"
            raise ValueError(msg) from None


class FloatInput(Input):
    input_type = "FloatInput"
    field_type = "float"
    default = 0.0

    def coerce_one(self, value: Any) -> Any:
        if value is None or value == "":
            return self.value if isinstance(self.value, (int, float)) else 0.0
        if isinstance(value, (Message, Data)):
            value = to_text(value)
        try:
            return float(value)
        except (TypeError, ValueError):
            msg = f"Invalid number for '{self.name}': {value!r}"
            raise ValueError(msg) from None


class SliderInput(FloatInput):
    input_type = "SliderInput"
    field_type = "slider"


class BoolInput(Input):
    input_type = "BoolInput"
    field_type = "bool"
    default = False

    def coerce_one(self, value: Any) -> Any:
        if isinstance(value, (Message, Data)):
            value = to_text(value)
        if isinstance(value, str):
            return value.strip().lower() in ("true", "1", "yes", "on")
        if value is None:
            return False
        return bool(value)


class DropdownInput(StrInput):
    input_type = "DropdownInput"
    extra_keys = {
        "combobox": False,
        "dialog_inputs": {},
        "external_options": {},
        "options_metadata": [],
        "toggle": False,
    }

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("options", [])
        super().__init__(name, display_name, value, **kw)
        self.extra.pop("load_from_db", None)


class TabInput(StrInput):
    input_type = "TabInput"
    field_type = "tab"

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("options", [])
        kw.setdefault("real_time_refresh", True)
        super().__init__(name, display_name, value, **kw)
        self.extra.pop("load_from_db", None)


class SortableListInput(Input):
    input_type = "SortableListInput"
    field_type = "sortableList"
    default: Any = []
    extra_keys = {"search_category": [], "limit": 1}

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("options", [])
        super().__init__(name, display_name, value, **kw)

    def coerce(self, value: Any) -> Any:
        if value in (None, ""):
            return []
        if isinstance(value, str):
            return [{"name": value}]
        if isinstance(value, dict):
            return [value]
        return [v if isinstance(v, dict) else {"name": str(v)} for v in value]


class DictInput(Input):
    input_type = "DictInput"
    field_type = "dict"
    default: Any = {}

    def coerce(self, value: Any) -> Any:
        if value in (None, ""):
            return {}
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                msg = f"Invalid JSON object for '{self.name}'"
                raise ValueError(msg) from None
        if isinstance(value, Data):
            return dict(value.data)
        if isinstance(value, list):
            merged: dict[str, Any] = {}
            for item in value:
                if isinstance(item, dict):
                    if set(item) == {"key", "value"}:
                        merged[str(item["key"])] = item["value"]
                    else:
                        merged.update(item)
            return merged
        return value


class NestedDictInput(DictInput):
    input_type = "NestedDictInput"
    field_type = "NestedDict"


class TableInput(Input):
    input_type = "TableInput"
    field_type = "table"
    default: Any = []
    extra_keys = {"table_schema": [], "trigger_text": "Open table", "trigger_icon": "Table"}

    def coerce(self, value: Any) -> Any:
        if value in (None, ""):
            return []
        if isinstance(value, DataFrame):
            return value.to_records()
        if isinstance(value, Data):
            return [dict(value.data)]
        if isinstance(value, dict):
            return [value]
        return list(value)


class FileInput(Input):
    input_type = "FileInput"
    field_type = "file"
    extra_keys = {"fileTypes": [], "file_path": "", "temp_file": False}


class HandleInput(Input):
    """An input that only takes connections (``type: "other"``)."""

    input_type = "HandleInput"
    field_type = "other"


class DataInput(HandleInput):
    input_type = "DataInput"

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("input_types", ["Data", "JSON"])
        super().__init__(name, display_name, value, **kw)


class JSONInput(DataInput):
    input_type = "JSONInput"


class DataFrameInput(HandleInput):
    input_type = "DataFrameInput"

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("input_types", ["DataFrame", "Table"])
        super().__init__(name, display_name, value, **kw)


class MessageInput(HandleInput):
    input_type = "MessageInput"
    field_type = "str"

    def __init__(self, name: str, display_name: str | None = None, value: Any = _UNSET, **kw: Any):
        kw.setdefault("input_types", ["Message"])
        super().__init__(name, display_name, value, **kw)

    def coerce_one(self, value: Any) -> Any:
        if isinstance(value, str):
            return Message(text=value)
        return value
