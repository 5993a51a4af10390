"""Fields and outputs shared by Data Operations and the legacy Text/JSON/Table operations.

The operation lists (name, icon) are the reference's; the input builders return fresh
descriptors each call so every component class owns its own.
"""

from __future__ import annotations

from typing import Any

from core.engine import Output
from core.engine.inputs import (
    BoolInput,
    DataFrameInput,
    DictInput,
    DropdownInput,
    IntInput,
    MessageTextInput,
    MultilineInput,
    StrInput,
)

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


def operation_options(ops: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"icon": icon, "name": name} for name, icon in ops]


def json_inputs() -> list[Any]:
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


def table_inputs() -> list[Any]:
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


def text_inputs() -> list[Any]:
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


def all_outputs() -> list[Output]:
    return [
        Output("message_output", "Message", "as_message", ["Message"]),
        Output("data_output", "JSON", "as_data", ["JSON"]),
        Output("dataframe_output", "Table", "as_dataframe", ["Table"]),
        Output("text_output", "Text", "as_text", ["Message"]),
    ]
