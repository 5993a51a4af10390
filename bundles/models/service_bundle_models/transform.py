"""Smart Transform (reference key ``Smart Transform``): the model writes a one-argument lambda, we apply it.

Difference from the reference, on purpose: the reference ``eval``s the model's lambda in the
server process. Here the lambda is parsed with ``ast`` and applied by the safe evaluator of
:mod:`service_bundle_models.safe_lambda` (a closed expression language: comprehensions, operators,
subscripts, pure builtins and pure ``str``/``list``/``dict`` methods). Nothing the model wrote is
executed as Python; a lambda outside that language fails with a message naming what it used.
The evaluator bounds work, memory in total and the result's size (see its module), so a lambda that
would allocate gigabytes or answer with one fails fast as a component error.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.inputs import HandleInput, Input, IntInput, MultilineInput
from core.engine.types import jsonable, to_text
from service_bundle_models.llm_ops import _model_providers, api_key_input, ask, chat_model, model_input

TEXT_PROMPT = (
    "Given this text, create a Python lambda function that transforms it according to the instruction.\n"
    "The lambda should take a string parameter and return the transformed string.\n\n"
    "Text Preview:\n{preview}\n\nInstruction: {instruction}\n\n"
    "Return ONLY the lambda function and nothing else. No need for ```python or whatever.\n"
    "Just a string starting with lambda.\nExample: lambda text: text.upper()"
)
DATA_PROMPT = (
    "Given this data structure and examples, create a Python lambda function that implements the "
    "following instruction:\n\nData Structure:\n{structure}\n\nExample Items:\n{sample}\n\n"
    "Instruction: {instruction}\n\n"
    "Return ONLY the lambda function and nothing else. No need for ```python or whatever.\n"
    "Just a string starting with lambda. Use only plain expressions: comprehensions, operators, "
    "indexing, builtins such as len/sorted/sum/min/max, and str/list/dict methods; no imports."
)
_LAMBDA = re.compile(r"lambda\s+\w+\s*:.*?(?=\n|$)")


def structure(value: Any) -> Any:
    """The shape of ``value`` with leaves replaced by their type names (the reference's data structure)."""
    if isinstance(value, list):
        return [structure(value[0])] if value else []
    if isinstance(value, dict):
        return {k: structure(v) for k, v in value.items()}
    return type(value).__name__


class SmartTransform(Component):
    key = "Smart Transform"
    display_name = "Smart Transform"
    description = "Uses an LLM to generate a function for filtering or transforming structured data and messages."
    icon = "square-function"
    category = "llm_operations"
    io_bound = True
    inputs: ClassVar[list[Input]] = [
        HandleInput(
            "data",
            "JSON",
            None,
            required=True,
            is_list=True,
            input_types=["Data", "JSON", "DataFrame", "Table", "Message"],
            info="The structured data or text messages to filter or transform.",
        ),
        model_input(),
        api_key_input(),
        MultilineInput(
            "filter_instruction",
            "Instructions",
            "Transform the data to...",
            required=True,
            info="What to do, e.g. 'Keep only items whose status is active', 'Convert the text to uppercase'.",
        ),
        IntInput("sample_size", "Sample Size", 1000, advanced=True, info="Characters sampled from head/tail."),
        IntInput("max_size", "Max Size", 30000, advanced=True, info="Characters for the data to count as large."),
    ]
    outputs: ClassVar[list[Output]] = [
        Output("data_output", "Output", "process_as_data", ["JSON"]),
        Output("dataframe_output", "Output", "process_as_dataframe", ["Table"]),
        Output("message_output", "Output", "process_as_message", ["Message"]),
    ]
    model_providers = staticmethod(_model_providers)

    def _items(self) -> list[Any]:
        items = self.data if isinstance(self.data, list) else [self.data]
        return [i for i in items if i is not None]

    def _is_message(self) -> bool:
        items = self._items()
        return bool(items) and isinstance(items[0], Message)

    def _input_type(self) -> str:
        items = self._items()
        first = items[0] if items else None
        if isinstance(first, Message):
            return "Message"
        if isinstance(first, DataFrame):
            return "DataFrame"
        if isinstance(first, Data):
            return "Data"
        return "unknown"

    def _message_text(self) -> str:
        texts = [m.text or "" for m in self._items() if isinstance(m, Message)]
        return "\n\n".join(texts) if len(texts) > 1 else (texts[0] if texts else "")

    def _structured(self) -> Any:
        combined: list[Any] = []
        for item in self._items():
            if isinstance(item, DataFrame):
                combined.extend(item.to_records())
            elif isinstance(item, Data):
                combined.append(jsonable(item.data))
            elif isinstance(item, (dict, list)):
                combined.extend(item if isinstance(item, list) else [item])
        if len(combined) == 1 and isinstance(combined[0], dict):
            return combined[0]
        return combined if combined else {}

    def _prompt(self, value: Any, is_text: bool) -> str:
        sample, limit = max(0, int(self.sample_size or 0)), max(0, int(self.max_size or 0))
        instruction = to_text(self.filter_instruction)
        if is_text:
            preview = value
            if len(value) > limit:
                preview = (
                    f"Text length: {len(value)} characters\n\nFirst {sample} characters:\n{value[:sample]}\n\n"
                    f"Last {sample} characters:\n{value[-sample:] if sample else ''}"
                )
            return TEXT_PROMPT.format(preview=preview, instruction=instruction)
        dump = json.dumps(value, ensure_ascii=False, default=str)
        shown = dump
        if len(dump) > limit:
            shown = (
                f"Data is too long to display...\n\nFirst lines (head): {dump[:sample]}\n\n"
                f"Last lines (tail): {dump[-sample:] if sample else ''}"
            )
        return DATA_PROMPT.format(
            structure=json.dumps(structure(value), default=str), sample=shown, instruction=instruction
        )

    def _result(self) -> Any:
        if hasattr(self, "_cached"):
            return self._cached
        if not self._items():
            raise ComponentError("Smart Transform: no input data.")
        if not to_text(self.filter_instruction).strip():
            raise ComponentError("Smart Transform: the instructions are empty.")
        is_text = self._is_message()
        value = self._message_text() if is_text else self._structured()
        answer = ask(self, chat_model(self), self._prompt(value, is_text))
        found = _LAMBDA.search(answer)
        if not found:
            raise ComponentError(f"Could not find lambda in response: {answer[:300]}")
        text = found.group().strip()
        self.log(f"Generated lambda: {text}")
        from service_bundle_models.safe_lambda import LambdaError, compile_lambda

        try:
            self._cached = compile_lambda(text)(value)
        except LambdaError as exc:
            raise ComponentError(f"Smart Transform: cannot apply the generated function ({text}): {exc}") from None
        return self._cached

    def _fail(self, exc: Exception, output: str) -> ComponentError:
        return ComponentError(
            f"Failed to convert result to {output} output. Error: {exc}. Input type was {self._input_type()}. "
            "Try using the same output type as the input."
        )

    def process_as_data(self) -> Data:
        result = self._result()
        if isinstance(result, dict):
            data = Data(result)
        elif isinstance(result, list):
            data = Data({"_results": result})
        else:
            data = Data({"text": str(result)})
        self.status = data
        return data

    def process_as_dataframe(self) -> DataFrame:
        result = self._result()
        try:
            if isinstance(result, list):
                frame = (
                    DataFrame(result)
                    if all(isinstance(i, dict) for i in result)
                    else DataFrame([{"value": i} for i in result])
                )
            elif isinstance(result, dict):
                frame = DataFrame([result])
            else:
                frame = DataFrame([{"value": str(result)}])
        except (TypeError, ValueError) as exc:
            raise self._fail(exc, "DataFrame") from None
        self.status = frame
        return frame

    def process_as_message(self) -> Message:
        result = self._result()
        if isinstance(result, str):
            text = result
        elif isinstance(result, list):
            text = "\n".join(str(i) for i in result)
        elif isinstance(result, dict):
            text = json.dumps(result, indent=2, ensure_ascii=False, default=str)
        else:
            text = str(result)
        message = Message(text, sender="Machine")
        self.status = message
        return message


COMPONENTS = [SmartTransform]
