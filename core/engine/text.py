"""Text helpers shared by components: safe ``{placeholder}`` templates and value-to-string conversion.

:func:`format_template` is deliberately not ``str.format``: a user template can
only look keys up, never reach attributes or indexes of Python objects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from core.engine.types import Data, DataFrame, Message, jsonable, to_text

__all__ = ["format_template", "safe_convert", "template_variables"]

_SINGLE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_DOUBLE = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


def template_variables(template: str, *, double_brackets: bool = False) -> list[str]:
    """Variable names in ``template`` (``{name}``; ``{{name}}`` when ``double_brackets``), first-seen order."""
    names: list[str] = []
    if double_brackets:
        found = (m.group(1) for m in _DOUBLE.finditer(template or ""))
    else:
        found = (m.group(1) for m in _SINGLE.finditer(template or "") if m.group(1) is not None)
    for name in found:
        name = name.strip()
        if name and name not in names:
            names.append(name)
    return names


def format_template(
    template: str,
    values: Mapping[str, Any],
    *,
    missing: Callable[[str], str] | None = None,
    double_brackets: bool = False,
) -> str:
    """Replace ``{key}`` with ``to_text(values[key])``; ``{{``/``}}`` are literal braces.

    ``missing(key)`` supplies the text of an absent key (default: raise ``KeyError``).
    """

    def lookup(key: str) -> str:
        key = key.strip()
        if key in values:
            return to_text(values[key])
        if missing is not None:
            return missing(key)
        raise KeyError(key)

    if double_brackets:
        return _DOUBLE.sub(lambda m: lookup(m.group(1)), template or "")

    def repl(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok == "{{":
            return "{"
        if tok == "}}":
            return "}"
        return lookup(m.group(1))

    return _SINGLE.sub(repl, template or "")


def _clean_markdown(frame: DataFrame) -> str:
    rows = [r for r in frame.rows if any(v not in (None, "") and str(v).strip() for v in r.values())]
    return DataFrame(rows, columns=frame.columns).to_markdown()


def safe_convert(value: Any, clean_data: bool = False) -> str:
    """The reference's ``safe_convert``: Data becomes a fenced JSON block, tables become markdown."""
    if value is None or isinstance(value, (str, Message)):
        return to_text(value)
    if isinstance(value, Data):
        return "```json\n" + json.dumps(jsonable(value.data), indent=2, ensure_ascii=False) + "\n```"
    if isinstance(value, DataFrame):
        return _clean_markdown(value) if clean_data else value.to_markdown()
    if isinstance(value, (list, tuple)):
        return "\n".join(safe_convert(v, clean_data) for v in value)
    if isinstance(value, dict):
        return json.dumps(jsonable(value), indent=2, ensure_ascii=False)
    return str(value)
