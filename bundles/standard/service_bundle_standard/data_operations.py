"""Data Operations (``Operations``) and the legacy Text/JSON/Table operations mapped onto it.

One operation per instance; the chosen operation decides the output
(reference-api.md section 5). Tables are :class:`core.engine.DataFrame` row lists,
so no pandas is needed.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, ClassVar

from core.engine import Component, Data, DataFrame, Message, Output
from core.engine.inputs import (
    BoolInput,
    DataFrameInput,
    DictInput,
    DropdownInput,
    IntInput,
    JSONInput,
    MessageTextInput,
    MultilineInput,
    SortableListInput,
    StrInput,
    TabInput,
)
from core.engine.types import to_text
from service_bundle_standard.jq_lite import jq_all
from service_bundle_standard.user_regex import UserPattern

TEXT_OPS = [
    ("Word Count", "hash"),
    ("Case Conversion", "type"),
    ("Text Replace", "replace"),
    ("Text Extract", "search"),
    ("Text Head", "chevron-left"),
    ("Text Tail", "chevron-right"),
    ("Text Strip", "minus"),
    ("Text Join", "link"),
    ("Text Clean", "sparkles"),
    ("Text to DataFrame", "table"),
]
JSON_OPS = [
    ("Select Keys", "lasso-select"),
    ("Literal Eval", "braces"),
    ("Combine", "merge"),
    ("Append or Update", "circle-plus"),
    ("Remove Keys", "eraser"),
    ("Rename Keys", "pencil-line"),
    ("Path Selection", "mouse-pointer"),
    ("JQ Expression", "terminal"),
]
TABLE_OPS = [
    ("Add Column", "plus"),
    ("Concatenate", "combine"),
    ("Drop Column", "minus"),
    ("Filter", "filter"),
    ("Head", "arrow-up"),
    ("Merge", "merge"),
    ("Rename Column", "pencil"),
    ("Replace Value", "replace"),
    ("Select Columns", "columns"),
    ("Sort", "arrow-up-down"),
    ("Tail", "arrow-down"),
    ("Drop Duplicates", "copy-x"),
]
TEXT_NAMES = {n for n, _ in TEXT_OPS}
JSON_NAMES = {n for n, _ in JSON_OPS}
TABLE_NAMES = {n for n, _ in TABLE_OPS}
FILTER_OPERATORS = [
    "equals",
    "not equals",
    "contains",
    "not contains",
    "starts with",
    "ends with",
    "greater than",
    "less than",
]


def _options(ops: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"icon": icon, "name": name} for name, icon in ops]


def _json_inputs() -> list[Any]:
    return [
        MessageTextInput(
            "select_keys_input",
            "Select Keys",
            [],
            is_list=True,
            show=False,
            info="List of keys to select from the data.",
        ),
        DictInput(
            "append_update_data",
            "Append or Update",
            {"key": "value"},
            is_list=True,
            show=False,
            info="Data to append or update the existing data with.",
        ),
        MessageTextInput(
            "remove_keys_input",
            "Remove Keys",
            [],
            is_list=True,
            show=False,
            info="List of keys to remove from the data.",
        ),
        DictInput(
            "rename_keys_input",
            "Rename Keys",
            {"old_key": "new_key"},
            is_list=True,
            show=False,
            info="Rename keys in the data.",
        ),
        MultilineInput(
            "mapped_json_display",
            "JSON to Map",
            "",
            show=False,
            info="Paste or preview your JSON here to explore its structure and select a path for extraction.",
        ),
        DropdownInput("selected_key", "Select Path", "", options=[], show=False, dynamic=True),
        MessageTextInput(
            "query",
            "JQ Expression",
            "",
            show=False,
            info="JSON Query to filter the data. Used by Parse JSON operation.",
            placeholder="e.g., .properties.id",
        ),
    ]


def _table_inputs() -> list[Any]:
    return [
        StrInput("column_name", "Column Name", "", show=False, info="The column name to use for the operation."),
        MessageTextInput("filter_value", "Filter Value", "", show=False, info="The value to filter rows by."),
        DropdownInput(
            "filter_operator",
            "Filter Operator",
            "equals",
            options=list(FILTER_OPERATORS),
            show=False,
            info="The operator to apply for filtering rows.",
        ),
        BoolInput("ascending", "Sort Ascending", True, show=False, info="Whether to sort in ascending order."),
        StrInput(
            "new_column_name",
            "New Column Name",
            "",
            show=False,
            info="The new column name when renaming or adding a column.",
        ),
        MessageTextInput(
            "new_column_value", "New Column Value", "", show=False, info="The value to populate the new column with."
        ),
        StrInput("columns_to_select", "Columns to Select", "", is_list=True, show=False),
        IntInput("num_rows", "Number of Rows", 5, show=False, info="Number of rows to return (for head/tail)."),
        MessageTextInput(
            "replace_value", "Value to Replace", "", show=False, info="The value to replace in the column."
        ),
        MessageTextInput("replacement_value", "Replacement Value", "", show=False, info="The value to replace with."),
        DataFrameInput("left_dataframe", "Left Table", "", show=False, info="Left table for merge operation."),
        DataFrameInput("right_dataframe", "Right Table", "", show=False, info="Right table for merge operation."),
        StrInput("merge_on_column", "Merge On Column", "", show=False, info="Column name to merge on."),
        DropdownInput(
            "merge_how",
            "Merge How",
            "inner",
            options=["inner", "outer", "left", "right"],
            show=False,
            info="Type of merge to perform.",
        ),
    ]


def _text_inputs() -> list[Any]:
    return [
        StrInput(
            "table_separator", "Table Separator", "|", show=False, info="Separator used in the table (default: '|')."
        ),
        BoolInput(
            "has_header", "Has Header", True, show=False, advanced=True, info="Whether the table has a header row."
        ),
        BoolInput("count_words", "Count Words", True, show=False, advanced=True),
        BoolInput("count_characters", "Count Characters", True, show=False, advanced=True),
        BoolInput("count_lines", "Count Lines", True, show=False, advanced=True),
        DropdownInput(
            "case_type",
            "Case Type",
            "lowercase",
            options=["uppercase", "lowercase", "title", "capitalize", "swapcase"],
            show=False,
            dynamic=True,
            info="Type of case conversion to apply.",
        ),
        BoolInput("use_regex", "Use Regex", False, show=False, info="Whether to treat search pattern as regex."),
        StrInput(
            "search_pattern", "Search Pattern", "", show=False, info="Text pattern to search for (supports regex)."
        ),
        StrInput(
            "replacement_text", "Replacement Text", "", show=False, info="Text to replace the search pattern with."
        ),
        StrInput("extract_pattern", "Extract Pattern", "", show=False, info="Regex pattern to extract from text."),
        IntInput(
            "max_matches", "Max Matches", 10, show=False, info="Maximum number of matches to extract (0 or less: all)."
        ),
        IntInput(
            "head_characters",
            "Characters from Start",
            100,
            show=False,
            info="Number of characters to extract from the beginning of text.",
        ),
        IntInput(
            "tail_characters",
            "Characters from End",
            100,
            show=False,
            info="Number of characters to extract from the end of text.",
        ),
        DropdownInput(
            "strip_mode",
            "Strip Mode",
            "both",
            options=["both", "left", "right"],
            show=False,
            info="Which sides to strip whitespace from.",
        ),
        StrInput(
            "strip_characters",
            "Characters to Strip",
            "",
            show=False,
            info="Specific characters to remove (leave empty for whitespace).",
        ),
        MultilineInput(
            "text_input_2", "Second Text Input", "", show=False, info="Second text to join with the first text."
        ),
        BoolInput(
            "remove_extra_spaces", "Remove Extra Spaces", True, show=False, info="Remove multiple consecutive spaces."
        ),
        BoolInput(
            "remove_special_chars",
            "Remove Special Characters",
            False,
            show=False,
            info="Remove special characters except alphanumeric and spaces.",
        ),
        BoolInput("remove_empty_lines", "Remove Empty Lines", False, show=False, info="Remove empty lines from text."),
    ]


def _all_outputs() -> list[Output]:
    return [
        Output("message_output", "Message", "as_message", ["Message"]),
        Output("data_output", "JSON", "as_data", ["JSON"]),
        Output("dataframe_output", "Table", "as_dataframe", ["Table"]),
        Output("text_output", "Text", "as_text", ["Message"]),
    ]


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        return None


class OperationsMixin:
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

    # -- text ------------------------------------------------------------------------
    def text_operation(self, op: str) -> Any:
        text = to_text(getattr(self, "text_input", ""))
        if not text and op != "Text Join":
            return ""
        if op == "Word Count":
            result: dict[str, int] = {}
            if self.count_words:  # type: ignore[attr-defined]
                words = text.split()
                result["word_count"] = len(words)
                result["unique_words"] = len(set(words))
            if self.count_characters:  # type: ignore[attr-defined]
                result["character_count"] = len(text)
                result["character_count_no_spaces"] = len(text.replace(" ", ""))
            if self.count_lines:  # type: ignore[attr-defined]
                lines = text.split("\n")
                result["line_count"] = len(lines)
                result["non_empty_lines"] = sum(1 for line in lines if line.strip())
            return result
        if op == "Case Conversion":
            case = self.case_type  # type: ignore[attr-defined]
            funcs = {
                "uppercase": str.upper,
                "lowercase": str.lower,
                "title": str.title,
                "capitalize": str.capitalize,
                "swapcase": str.swapcase,
            }
            if case not in funcs:
                raise ValueError(f"Invalid case type '{case}'. Use one of: {', '.join(funcs)}")
            return funcs[case](text)
        if op == "Text Replace":
            pattern = self.search_pattern  # type: ignore[attr-defined]
            if not pattern:
                return text
            if self.use_regex:  # type: ignore[attr-defined]
                return UserPattern(pattern).sub(self.replacement_text or "", text)  # type: ignore[attr-defined]
            return text.replace(pattern, self.replacement_text or "")  # type: ignore[attr-defined]
        if op == "Text Extract":
            pattern = self.extract_pattern  # type: ignore[attr-defined]
            if not pattern:
                return ""
            matches = UserPattern(pattern).finditer_groups(text)
            limit = self.max_matches  # type: ignore[attr-defined]
            if limit and limit > 0:
                matches = matches[:limit]
            return "\n".join(matches)
        if op == "Text Head":
            n = self.head_characters  # type: ignore[attr-defined]
            if n < 0:
                raise ValueError("Characters from Start must be a non-negative number.")
            return text[:n]
        if op == "Text Tail":
            n = self.tail_characters  # type: ignore[attr-defined]
            if n < 0:
                raise ValueError("Characters from End must be a non-negative number.")
            return text[-n:] if n else ""
        if op == "Text Strip":
            chars = self.strip_characters or None  # type: ignore[attr-defined]
            mode = self.strip_mode  # type: ignore[attr-defined]
            if mode == "left":
                return text.lstrip(chars)
            if mode == "right":
                return text.rstrip(chars)
            if mode != "both":
                raise ValueError(f"Invalid strip mode '{mode}'. Use both, left or right.")
            return text.strip(chars)
        if op == "Text Join":
            second = to_text(self.text_input_2)  # type: ignore[attr-defined]
            if text and second:
                return f"{text}\n{second}"
            return text or second
        if op == "Text Clean":
            result_text = text
            if self.remove_special_chars:  # type: ignore[attr-defined]
                result_text = re.sub(r"[^A-Za-z0-9\s]", "", result_text)
            if self.remove_empty_lines:  # type: ignore[attr-defined]
                result_text = "\n".join(line for line in result_text.split("\n") if line.strip())
            if self.remove_extra_spaces:  # type: ignore[attr-defined]
                result_text = "\n".join(re.sub(r"[ \t]+", " ", line).strip() for line in result_text.split("\n"))
            return result_text
        if op == "Text to DataFrame":
            return self._text_to_table(text)
        raise ValueError(f"Unknown text operation '{op}'")

    def _text_to_table(self, text: str) -> DataFrame:
        sep = self.table_separator or "|"  # type: ignore[attr-defined]
        rows: list[list[str]] = []
        for line in text.split("\n"):
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith(sep) and stripped.endswith(sep) and len(stripped) > len(sep):
                stripped = stripped[len(sep) : -len(sep)]
            cells = [c.strip() for c in stripped.split(sep)]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c) and any(cells):
                continue  # markdown separator row
            rows.append(cells)
        if not rows:
            return DataFrame([])
        if self.has_header:  # type: ignore[attr-defined]
            header, body = rows[0], rows[1:]
        else:
            header, body = [f"col_{i}" for i in range(len(rows[0]))], rows
        width = len(header)
        records = []
        for r in body:
            r = (r + [""] * width)[:width]
            records.append(dict(zip(header, r, strict=True)))
        return DataFrame(records, columns=header)

    # -- JSON ------------------------------------------------------------------------
    def _data_list(self) -> list[Data]:
        raw = getattr(self, "data", None)
        items = raw if isinstance(raw, list) else ([raw] if raw not in (None, "") else [])
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
            elif isinstance(item, str) and item.strip():
                try:
                    parsed = json.loads(item)
                except ValueError:
                    out.append(Data({"text": item}))
                else:
                    out.append(Data(parsed if isinstance(parsed, dict) else {"result": parsed}))
        return out

    def _single(self, op: str) -> dict[str, Any]:
        items = self._data_list()
        if not items:
            raise ValueError("No JSON input provided.")
        if len(items) > 1:
            raise ValueError(f"{op} works with a single JSON input, got {len(items)}. Use Combine first.")
        return dict(items[0].data)

    def json_operation(self, op: str) -> Data:
        if op == "Combine":
            items = self._data_list()
            if len(items) < 2:
                raise ValueError("Combine needs at least two JSON inputs.")
            combined: dict[str, Any] = {}
            for item in items:
                for key, value in item.data.items():
                    if key not in combined:
                        combined[key] = value
                    elif isinstance(combined[key], list):
                        combined[key] = [*combined[key], *(value if isinstance(value, list) else [value])]
                    else:
                        combined[key] = [combined[key], *(value if isinstance(value, list) else [value])]
            return Data(combined)
        data = self._single(op)
        if op == "Select Keys":
            keys = [k for k in (self.select_keys_input or []) if k]  # type: ignore[attr-defined]
            if not keys:
                raise ValueError("Select Keys needs at least one key.")
            missing = [k for k in keys if k not in data]
            if missing:
                raise ValueError(
                    f"Select key not found in data: {', '.join(missing)}. Available keys: {', '.join(map(str, data))}"
                )
            return Data({k: data[k] for k in keys})
        if op == "Literal Eval":
            return Data(_literal_eval(data))
        if op == "Append or Update":
            updates = self.append_update_data  # type: ignore[attr-defined]
            if isinstance(updates, list):
                for u in updates:
                    if isinstance(u, dict):
                        data.update(u)
            elif isinstance(updates, dict):
                data.update(updates)
            return Data(data)
        if op == "Remove Keys":
            for key in self.remove_keys_input or []:  # type: ignore[attr-defined]
                data.pop(key, None)
            return Data(data)
        if op == "Rename Keys":
            mapping = self.rename_keys_input or {}  # type: ignore[attr-defined]
            if isinstance(mapping, list):
                merged: dict[str, Any] = {}
                for m in mapping:
                    if isinstance(m, dict):
                        merged.update(m)
                mapping = merged
            return Data({str(mapping.get(k, k)) if k in mapping else k: v for k, v in data.items()})
        if op == "Path Selection":
            path = (self.selected_key or "").strip()  # type: ignore[attr-defined]
            if not path:
                raise ValueError("Path Selection needs a selected path.")
            if not path.startswith("."):
                path = "." + path
            results = jq_all(path, data)
            result = results[0] if results else None
            return Data(result) if isinstance(result, dict) else Data({"result": result})
        if op == "JQ Expression":
            query = (self.query or "").strip()  # type: ignore[attr-defined]
            if not query:
                raise ValueError("JQ Expression needs a query.")
            results = jq_all(query, data)
            result = results[0] if len(results) == 1 else results
            return Data(result) if isinstance(result, dict) else Data({"result": result})
        raise ValueError(f"Unknown JSON operation '{op}'")

    # -- tables ----------------------------------------------------------------------
    def _tables(self) -> list[DataFrame]:
        raw = getattr(self, "df", None)
        items = raw if isinstance(raw, list) else ([raw] if raw not in (None, "") else [])
        out = []
        for item in items:
            if isinstance(item, DataFrame):
                out.append(item)
            elif isinstance(item, Message):
                out.append(DataFrame([{"text": item.text}]))
            elif isinstance(item, Data):
                out.append(item.to_dataframe())
            elif isinstance(item, list):
                out.append(DataFrame(item))
        return out

    def _column(self, frame: DataFrame, name: str, what: str = "Column") -> str:
        if not name:
            raise ValueError(f"{what} name is required.")
        if name not in frame.columns:
            raise ValueError(f"{what} '{name}' not found. Available columns: {', '.join(frame.columns)}")
        return name

    def table_operation(self, op: str) -> DataFrame:
        if op == "Merge":
            return self._merge()
        tables = self._tables()
        if not tables:
            raise ValueError("No table input provided.")
        if op == "Concatenate":
            rows = [row for t in tables for row in t.rows]
            cols: list[str] = []
            for t in tables:
                cols.extend(c for c in t.columns if c not in cols)
            return DataFrame(rows, columns=cols)
        frame = tables[0]
        rows = [dict(r) for r in frame.rows]
        columns = list(frame.columns)
        if op == "Add Column":
            name = self.new_column_name  # type: ignore[attr-defined]
            if not name:
                raise ValueError("New column name is required.")
            for r in rows:
                r[name] = self.new_column_value  # type: ignore[attr-defined]
            return DataFrame(rows, columns=[*columns, name] if name not in columns else columns)
        if op == "Drop Column":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            for r in rows:
                r.pop(col, None)
            return DataFrame(rows, columns=[c for c in columns if c != col])
        if op == "Filter":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            return DataFrame(
                [r for r in rows if _match(r.get(col), self.filter_value, self.filter_operator)], columns=columns
            )  # type: ignore[attr-defined]
        if op in ("Head", "Tail"):
            n = self.num_rows  # type: ignore[attr-defined]
            if n < 0:
                raise ValueError("Number of rows must be non-negative.")
            return DataFrame(rows[:n] if op == "Head" else (rows[-n:] if n else []), columns=columns)
        if op == "Rename Column":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            new = self.new_column_name  # type: ignore[attr-defined]
            if not new:
                raise ValueError("New column name is required.")
            renamed = [{(new if k == col else k): v for k, v in r.items()} for r in rows]
            return DataFrame(renamed, columns=[new if c == col else c for c in columns])
        if op == "Replace Value":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            old, new_value = self.replace_value, self.replacement_value  # type: ignore[attr-defined]
            for r in rows:
                if r.get(col) == old or (r.get(col) is not None and str(r.get(col)) == old):
                    r[col] = new_value
            return DataFrame(rows, columns=columns)
        if op == "Select Columns":
            wanted = [c.strip() for c in (self.columns_to_select or []) if c and c.strip()]  # type: ignore[attr-defined]
            if not wanted:
                raise ValueError("Select at least one column.")
            for c in wanted:
                self._column(frame, c)
            return DataFrame([{c: r.get(c) for c in wanted} for r in rows], columns=wanted)
        if op == "Sort":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            numeric = all(_num(r.get(col)) is not None for r in rows if r.get(col) is not None)

            def key(r: dict[str, Any]) -> tuple[int, Any]:
                v = r.get(col)
                if v is None:
                    return (1, 0)
                return (0, _num(v) if numeric else str(v))

            present = sorted((r for r in rows if r.get(col) is not None), key=key, reverse=not self.ascending)  # type: ignore[attr-defined]
            return DataFrame(present + [r for r in rows if r.get(col) is None], columns=columns)
        if op == "Drop Duplicates":
            subset = [self._column(frame, self.column_name)] if self.column_name else columns  # type: ignore[attr-defined]
            seen: set[str] = set()
            kept = []
            for r in rows:
                sig = json.dumps([r.get(c) for c in subset], sort_keys=True, default=str)
                if sig not in seen:
                    seen.add(sig)
                    kept.append(r)
            return DataFrame(kept, columns=columns)
        raise ValueError(f"Unknown table operation '{op}'")

    def _merge(self) -> DataFrame:
        left, right = self.left_dataframe, self.right_dataframe  # type: ignore[attr-defined]
        if not isinstance(left, DataFrame) or not isinstance(right, DataFrame):
            tables = self._tables()
            if len(tables) >= 2:
                left, right = tables[0], tables[1]
            else:
                raise ValueError("Merge needs a left and a right table.")
        on = self.merge_on_column  # type: ignore[attr-defined]
        self._column(left, on, "Merge column")
        self._column(right, on, "Merge column")
        how = self.merge_how  # type: ignore[attr-defined]
        if how not in ("inner", "outer", "left", "right"):
            raise ValueError(f"Invalid merge type '{how}'")
        overlap = (set(left.columns) & set(right.columns)) - {on}

        def lname(c: str) -> str:
            return f"{c}_x" if c in overlap else c

        def rname(c: str) -> str:
            return f"{c}_y" if c in overlap else c

        columns = [lname(c) for c in left.columns] + [rname(c) for c in right.columns if c != on]
        index: dict[Any, list[dict[str, Any]]] = {}
        for r in right.rows:
            index.setdefault(json.dumps(r.get(on), default=str), []).append(r)
        used: set[int] = set()
        out = []
        for lrow in left.rows:
            matches = index.get(json.dumps(lrow.get(on), default=str), [])
            if matches:
                for rrow in matches:
                    used.add(id(rrow))
                    row = {lname(c): lrow.get(c) for c in left.columns}
                    row.update({rname(c): rrow.get(c) for c in right.columns if c != on})
                    out.append(row)
            elif how in ("left", "outer"):
                row = {lname(c): lrow.get(c) for c in left.columns}
                row.update({rname(c): None for c in right.columns if c != on})
                out.append(row)
        if how in ("right", "outer"):
            for rrow in right.rows:
                if id(rrow) not in used:
                    row = {lname(c): None for c in left.columns}
                    row[on] = rrow.get(on)
                    row.update({rname(c): rrow.get(c) for c in right.columns if c != on})
                    out.append(row)
        return DataFrame(out, columns=columns)


def _match(cell: Any, value: Any, operator: str) -> bool:
    text = "" if cell is None else str(cell)
    value = "" if value is None else str(value)
    if operator == "equals":
        a, b = _num(cell), _num(value)
        return (a == b) if a is not None and b is not None else text == value
    if operator == "not equals":
        a, b = _num(cell), _num(value)
        return (a != b) if a is not None and b is not None else text != value
    if operator == "contains":
        return value in text
    if operator == "not contains":
        return value not in text
    if operator == "starts with":
        return text.startswith(value)
    if operator == "ends with":
        return text.endswith(value)
    if operator in ("greater than", "less than"):
        a, b = _num(cell), _num(value)
        if a is None or b is None:
            return (text > value) if operator == "greater than" else (text < value)
        return a > b if operator == "greater than" else a < b
    raise ValueError(f"Invalid filter operator '{operator}'. Use one of: {', '.join(FILTER_OPERATORS)}")


def _literal_eval(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _literal_eval(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_literal_eval(v) for v in value]
    if isinstance(value, str) and len(value) <= 100_000:
        stripped = value.strip()
        if (
            stripped[:1] in ("{", "[", "(", "'", '"')
            or stripped in ("True", "False", "None")
            or re.fullmatch(r"-?\d+(\.\d+)?([eE]-?\d+)?", stripped)
        ):
            try:
                parsed = ast.literal_eval(stripped)  # literals only, never code
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return value
            if isinstance(parsed, tuple):
                parsed = list(parsed)
            if isinstance(parsed, set):
                parsed = sorted(parsed, key=str)
            return _literal_eval(parsed) if isinstance(parsed, (dict, list)) else parsed
    return value


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
            options=_options(TEXT_OPS),
            placeholder="Select Operation",
            real_time_refresh=True,
            info=_OPERATIONS_INFO,
        ),
        *_json_inputs(),
        *_table_inputs(),
        *_text_inputs(),
    ]
    outputs = _all_outputs()


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
            options=_options(TEXT_OPS),
            placeholder="Select Operation",
            real_time_refresh=True,
        ),
        *_text_inputs(),
    ]
    outputs = _all_outputs()

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
            options=_options(JSON_OPS),
            placeholder="Select Operation",
            real_time_refresh=True,
        ),
        *_json_inputs(),
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
            options=_options(TABLE_OPS),
            placeholder="Select Operation",
            real_time_refresh=True,
        ),
        *_table_inputs(),
    ]
    outputs = [Output("output", "Table", "perform_operation", ["Table"])]

    def perform_operation(self) -> DataFrame:
        if self.operation_name() and self.operation_name() not in TABLE_NAMES:
            raise ValueError(f"'{self.operation_name()}' is not a table operation")
        return self.as_dataframe()

    def active_outputs(self) -> list[str] | None:
        return ["output"]


COMPONENTS = [OperationsComponent, TextOperations, DataOperations, DataFrameOperations]
