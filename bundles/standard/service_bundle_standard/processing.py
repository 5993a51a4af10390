"""Processing components.

Parser, Prompt Template, Combine/Split Text, Regex Extractor, Create Data, Data to DataFrame
(Type Convert is in :mod:`service_bundle_standard.type_convert`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.engine import Component, Data, DataFrame, Message, Output
from core.engine.inputs import (
    BoolInput,
    DataInput,
    DictInput,
    DropdownInput,
    HandleInput,
    IntInput,
    MessageTextInput,
    MultilineInput,
    PromptInput,
    TabInput,
)
from core.engine.text import format_template, safe_convert, template_variables
from core.engine.types import to_text
from service_bundle_standard.type_convert import TypeConverterComponent
from service_bundle_standard.user_regex import UserPattern


def _fallback(default: Any) -> Callable[[str], str]:
    """A ``missing`` callback of :func:`format_template` that answers ``default`` as text for any name."""
    return lambda _name: to_text(default)


# -- Parser ------------------------------------------------------------------------------------


class ParserComponent(Component):
    key = "ParserComponent"
    aliases = ("parser",)  # the reference's legacy node type (its starters until 1.12)
    display_name = "Parser"
    display_names = {"en": "Parser", "fr": "Analyseur", "de": "Parser", "es": "Analizador"}
    description = "Extracts text using a template."
    icon = "braces"
    category = "processing"
    documentation = "https://docs.service.org/parser"
    inputs = [
        HandleInput(
            "input_data",
            "Data or Table",
            "",
            input_types=["DataFrame", "Table", "Data", "JSON"],
            required=True,
            info="Accepts either a Table or a JSON object.",
        ),
        TabInput(
            "mode",
            "Mode",
            "Parser",
            options=["Parser", "Stringify"],
            info="Convert into raw string instead of using a template.",
        ),
        MultilineInput(
            "pattern",
            "Template",
            "Text: {text}",
            required=True,
            dynamic=True,
            info=(
                "Use variables within curly brackets to extract column values for DataFrames or key values "
                "for Data.For example: `Name: {Name}, Age: {Age}, Country: {Country}`"
            ),
        ),
        MessageTextInput("sep", "Separator", "\n", advanced=True, info="String used to separate rows/items."),
        BoolInput(
            "clean_data",
            "Clean Data",
            True,
            advanced=True,
            show=False,
            info="Remove empty rows and lines when stringifying tables.",
        ),
    ]
    outputs = [Output("parsed_text", "Parsed Text", "parse_combined_text", ["Message"])]

    def parse_combined_text(self) -> Message:
        value = self.input_data
        if self.mode == "Stringify":
            if isinstance(value, list):
                text = "".join(safe_convert(item, clean_data=self.clean_data) for item in value)
            else:
                text = safe_convert(value, clean_data=self.clean_data)
            message = Message(text=text)
            self.status = message
            return message
        if self.mode != "Parser":
            raise ValueError(f"Invalid mode '{self.mode}'. Use Parser or Stringify.")
        if not self.pattern:
            raise ValueError("Template is required in Parser mode.")
        items = value if isinstance(value, list) else [value]
        lines: list[str] = []
        for item in items:
            if isinstance(item, DataFrame):
                for row in item.rows:
                    try:
                        lines.append(format_template(self.pattern, row))
                    except KeyError as exc:
                        raise ValueError(
                            f"Column {exc} not found in the table. Available columns: {', '.join(item.columns)}"
                        ) from None
            elif isinstance(item, Data):
                data = item.data  # a Message's: its text and what a component put beside it (Read File's file_path...)
                default = item.default_value if item.default_value is not None else ""
                lines.append(format_template(self.pattern, data, missing=_fallback(default)))
            elif isinstance(item, dict):
                lines.append(format_template(self.pattern, item, missing=lambda _k: ""))
            elif item in (None, ""):
                continue
            else:
                raise ValueError(f"Unsupported input of type {type(item).__name__}; connect JSON or a Table.")
        text = to_text(self.sep).join(lines)
        self.status = text
        return Message(text=text)


# -- Prompt Template ---------------------------------------------------------------------------


class PromptComponent(Component):
    key = "Prompt Template"
    aliases = ("Prompt",)
    display_name = "Prompt Template"
    display_names = {
        "en": "Prompt Template",
        "fr": "Modèle de prompt",
        "de": "Prompt-Vorlage",
        "es": "Plantilla de prompt",
    }
    description = "Create a prompt template with dynamic variables."
    icon = "braces"
    category = "models_and_agents"
    documentation = "https://docs.service.org/components-prompts"
    accepts_dynamic_fields = True
    inputs = [
        PromptInput("template", "Template", ""),
        BoolInput(
            "use_double_brackets",
            "Use Double Brackets",
            False,
            advanced=True,
            info="Use {{variable}} syntax (mustache) instead of {variable}.",
        ),
        MessageTextInput("tool_placeholder", "Tool Placeholder", "", advanced=True, show=False, tool_mode=True),
    ]
    outputs = [Output("prompt", "Prompt", "build_prompt", ["Message"])]

    def build_prompt(self) -> Message:
        values = {k: v for k, v in self.extra_params.items()}
        text = format_template(
            self.template or "", values, missing=lambda _k: "", double_brackets=self.use_double_brackets
        )
        message = Message(text=text)
        self.status = text
        return message

    @classmethod
    def variables(cls, template: str, double_brackets: bool = False) -> list[str]:
        return template_variables(template, double_brackets=double_brackets)


# -- text utilities --------------------------------------------------------------------------------


class CombineText(Component):
    key = "CombineText"
    display_name = "Combine Text"
    display_names = {"en": "Combine Text", "fr": "Combiner du texte", "de": "Text kombinieren", "es": "Combinar texto"}
    description = "Concatenate two text sources into a single text chunk using a specified delimiter."
    icon = "merge"
    category = "processing"
    legacy = True
    inputs = [
        MessageTextInput("text1", "First Text", "", info="The first text input to concatenate."),
        MessageTextInput("text2", "Second Text", "", info="The second text input to concatenate."),
        MessageTextInput(
            "delimiter",
            "Delimiter",
            " ",
            info="A string used to separate the two text inputs. Defaults to a whitespace.",
        ),
    ]
    outputs = [Output("combined_text", "Combined Text", "combine_texts", ["Message"])]

    def combine_texts(self) -> Message:
        combined = to_text(self.delimiter).join([to_text(self.text1), to_text(self.text2)])
        self.status = combined
        return Message(text=combined)


def _split_keep(text: str, separator: str, keep: str) -> list[str]:
    if not separator:
        return list(text)
    if keep in ("False", "", "false"):
        return [s for s in text.split(separator)]
    parts = text.split(separator)
    if keep in ("True", "Start", "true"):
        return [parts[0], *[separator + p for p in parts[1:]]]
    return [p + separator for p in parts[:-1]] + [parts[-1]]


def split_into_chunks(
    text: str, *, chunk_size: int, chunk_overlap: int, separator: str, keep_separator: str
) -> list[str]:
    """Character splitter: split on ``separator`` then merge pieces up to ``chunk_size`` with overlap."""
    if chunk_size <= 0:
        raise ValueError("Chunk size must be positive.")
    if chunk_overlap < 0 or chunk_overlap >= chunk_size:
        raise ValueError("Chunk overlap must be between 0 and the chunk size.")
    pieces = [p for p in _split_keep(text, separator, keep_separator) if p]
    joiner = "" if keep_separator not in ("False", "", "false") else separator
    chunks: list[str] = []
    current: list[str] = []
    total = 0
    for piece in pieces:
        add = len(piece) + (len(joiner) if current else 0)
        if current and total + add > chunk_size:
            chunks.append(joiner.join(current).strip())
            while current and (total > chunk_overlap or total + len(piece) + len(joiner) > chunk_size):
                total -= len(current[0]) + (len(joiner) if len(current) > 1 else 0)
                current.pop(0)
            add = len(piece) + (len(joiner) if current else 0)
        current.append(piece)
        total += add
    if current:
        chunks.append(joiner.join(current).strip())
    return [c for c in chunks if c]


class SplitText(Component):
    key = "SplitText"
    display_name = "Split Text"
    display_names = {"en": "Split Text", "fr": "Découper le texte", "de": "Text aufteilen", "es": "Dividir texto"}
    description = "Split text into chunks based on specified criteria."
    icon = "scissors-line-dashed"
    category = "processing"
    inputs = [
        HandleInput(
            "data_inputs",
            "Input",
            "",
            input_types=["Data", "JSON", "DataFrame", "Table", "Message"],
            required=True,
            info="The data with texts to split in chunks.",
        ),
        IntInput("chunk_overlap", "Chunk Overlap", 200, info="Number of characters to overlap between chunks."),
        IntInput("chunk_size", "Chunk Size", 1000, info="The maximum length of each chunk."),
        MessageTextInput(
            "separator", "Separator", "\n", info='The character to split on. Use \\n for newline. Defaults to "\\n".'
        ),
        MessageTextInput("text_key", "Text Key", "text", advanced=True, info="The key to use for the text column."),
        DropdownInput(
            "keep_separator",
            "Keep Separator",
            "False",
            options=["False", "True", "Start", "End"],
            advanced=True,
            info="Whether to keep the separator in the output chunks and where to place it.",
        ),
        BoolInput(
            "clean_output", "Clean Output", False, advanced=True, info="Output only the text column (no metadata)."
        ),
    ]
    outputs = [Output("dataframe", "Chunks", "split_text", ["Table"])]

    def split_text(self) -> DataFrame:
        separator = to_text(self.separator).replace("\\n", "\n").replace("\\t", "\t")
        key = self.text_key or "text"
        value = self.data_inputs
        items = value if isinstance(value, list) else [value]
        docs: list[tuple[str, dict[str, Any]]] = []
        for item in items:
            if isinstance(item, Message):
                docs.append((to_text(item.text), {}))
            elif isinstance(item, DataFrame):
                for row in item.rows:
                    if key not in row:
                        raise ValueError(f"Column '{key}' not found in the table.")
                    docs.append((to_text(row[key]), {k: v for k, v in row.items() if k != key}))
            elif isinstance(item, Data):
                if key not in item.data:
                    raise ValueError(f"Key '{key}' not found in the JSON input.")
                docs.append((to_text(item.data[key]), {k: v for k, v in item.data.items() if k != key}))
            elif isinstance(item, str):
                docs.append((item, {}))
        rows = []
        for text, meta in docs:
            for chunk in split_into_chunks(
                text,
                chunk_size=self.chunk_size,
                chunk_overlap=self.chunk_overlap,
                separator=separator,
                keep_separator=str(self.keep_separator),
            ):
                # the reference names the chunk column ``text`` whatever the input's text key
                rest = {} if self.clean_output else {k: v for k, v in meta.items() if k != "text"}
                rows.append({"text": chunk, **rest})
        frame = DataFrame(rows)
        self.status = frame
        return frame


class RegexExtractorComponent(Component):
    key = "RegexExtractorComponent"
    display_name = "Regex Extractor"
    display_names = {
        "en": "Regex Extractor",
        "fr": "Extracteur regex",
        "de": "Regex-Extraktor",
        "es": "Extractor regex",
    }
    description = "Extract patterns from text using regular expressions."
    icon = "regex"
    category = "processing"
    legacy = True
    inputs = [
        MessageTextInput("input_text", "Input Text", "", required=True, info="The text to analyze"),
        MessageTextInput("pattern", "Regex Pattern", "", required=True, info="The regex pattern to match"),
    ]
    outputs = [
        Output("data", "JSON", "extract_matches", ["JSON"]),
        Output("text", "Message", "get_matches_text", ["Message"]),
    ]

    def _matches(self) -> list[str]:
        if not self.pattern or not self.input_text:
            return []
        found = UserPattern(self.pattern).findall(to_text(self.input_text))
        return [m if isinstance(m, str) else " ".join(m) for m in found]

    def extract_matches(self) -> list[Data]:
        found = [Data({"match": m}) for m in self._matches() if m]
        self.status = found
        return found

    def get_matches_text(self) -> Message:
        text = "\n".join(m for m in self._matches() if m) or "No matches found"  # the reference's text
        self.status = text
        return Message(text=text)


class CreateData(Component):
    key = "CreateData"
    display_name = "Create Data"
    display_names = {"en": "Create Data", "fr": "Créer des données", "de": "Daten erstellen", "es": "Crear datos"}
    description = "Dynamically create a JSON object with a specified number of fields."
    icon = "ListFilter"
    category = "processing"
    legacy = True
    accepts_dynamic_fields = True
    inputs = [
        IntInput(
            "number_of_fields",
            "Number of Fields",
            1,
            real_time_refresh=True,
            info="Number of fields to be added to the record.",
        ),
        MessageTextInput(
            "text_key",
            "Text Key",
            "",
            advanced=True,
            info="Key that identifies the field to be used as the text content.",
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

    def build_data(self) -> Data:
        if self.number_of_fields < 0 or self.number_of_fields > 15:
            raise ValueError("Number of fields must be between 0 and 15.")
        merged: dict[str, Any] = {}
        for name in sorted(self.extra_params):
            value = (
                DictInput(name).coerce(self.extra_params[name])
                if not isinstance(self.extra_params[name], (Data, Message))
                else self.extra_params[name]
            )
            if isinstance(value, Message):
                merged[name] = value.text
            elif isinstance(value, Data):
                merged.update(value.data)
            elif isinstance(value, dict):
                merged.update(value)
        if self.text_key_validator and self.text_key and self.text_key not in merged:
            raise ValueError(f"Text Key: '{self.text_key}' not found in the Data keys.")
        data = Data(merged, text_key=self.text_key or "text")
        self.status = data
        return data


class DataToDataFrame(Component):
    key = "DataToDataFrame"
    display_name = "Data → DataFrame"
    display_names = {
        "en": "Data → DataFrame",
        "fr": "Données → Tableau",
        "de": "Daten → Tabelle",
        "es": "Datos → Tabla",
    }
    description = "Converts one or multiple JSON objects into a Table. Each object corresponds to one row."
    icon = "table"
    category = "processing"
    legacy = True
    inputs = [
        DataInput(
            "data_list",
            "JSON or JSON List",
            "",
            is_list=True,
            info="One or multiple JSON objects to transform into a Table.",
        )
    ]
    outputs = [Output("dataframe", "Table", "build_dataframe", ["Table"])]

    def build_dataframe(self) -> DataFrame:
        rows = []
        for item in self.data_list or []:
            if isinstance(item, Message):
                rows.append({"text": item.text})
            elif isinstance(item, Data):
                row = dict(item.data)
                text = item.get_text()
                if text:  # the reference adds the text (of any text key) as a "text" column
                    row["text"] = text
                rows.append(row)
            elif isinstance(item, DataFrame):
                rows.extend(item.rows)
            elif isinstance(item, dict):
                rows.append(item)
            else:
                raise ValueError(f"Expected JSON objects, got {type(item).__name__}")
        frame = DataFrame(rows)
        self.status = frame
        return frame


COMPONENTS = [
    TypeConverterComponent,
    ParserComponent,
    PromptComponent,
    CombineText,
    SplitText,
    RegexExtractorComponent,
    CreateData,
    DataToDataFrame,
]
