"""``POST /api/v1/validate/code`` and ``/validate/prompt`` without running anything.

Code is parsed with :mod:`ast` only: never imported, compiled to bytecode or
executed. Imported module names are *looked up* (standard library names,
installed distributions' top-level names, and a file search on ``sys.path``
with :class:`importlib.machinery.PathFinder`, which locates files without
loading them); an unknown one is reported as ``No module named 'x'``.
"""

from __future__ import annotations

import ast
import functools
import importlib.machinery
import importlib.metadata
import sys
from collections.abc import Mapping
from typing import Any

from core.engine import pyparse
from core.engine.inputs import MultilineInput
from core.engine.text import template_variables
from core.errors import ApiError

MAX_CODE_CHARS = 1_000_000
#: characters and names the reference refuses in prompt variables
INVALID_CHARACTERS = frozenset(" ,.:;!?/\\()[]\n\t")
INVALID_NAMES = frozenset(
    {
        "code",
        "input_variables",
        "output_parser",
        "partial_variables",
        "template",
        "template_format",
        "validate_template",
    }
)


@functools.lru_cache(maxsize=1)
def _distribution_modules() -> frozenset[str]:
    try:
        return frozenset(importlib.metadata.packages_distributions())
    except Exception:  # pragma: no cover - broken metadata must not break validation
        return frozenset()


@functools.lru_cache(maxsize=4096)
def module_available(name: str) -> bool:
    """Whether top-level module ``name`` could be imported, decided without importing it."""
    top = name.split(".")[0]
    if not top.isidentifier():
        return False
    if top in sys.builtin_module_names or top in sys.stdlib_module_names or top in sys.modules:
        return True
    if top in _distribution_modules():
        return True
    return importlib.machinery.PathFinder.find_spec(top) is not None


def validate_code(code: str) -> dict[str, Any]:
    """``{imports: {errors}, function: {errors}}``: syntax errors go to ``function``, unknown modules to ``imports``."""
    out: dict[str, Any] = {"imports": {"errors": []}, "function": {"errors": []}}
    if len(code) > MAX_CODE_CHARS:
        out["function"]["errors"].append(f"Code is longer than {MAX_CODE_CHARS} characters")
        return out
    try:
        tree = pyparse.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        out["function"]["errors"].append(str(exc))
        return out
    seen: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top in seen:
                continue
            seen.add(top)
            if not module_available(top):
                out["imports"]["errors"].append(f"No module named '{top}'")
    return out


# --- prompts -----------------------------------------------------------------------------------------
def prompt_variables(template: str, mustache: bool = False) -> list[str]:
    """The template's variables; 400 for names the reference refuses."""
    names = template_variables(template, double_brackets=mustache)
    for name in names:
        bad = sorted({c for c in name if c in INVALID_CHARACTERS})
        if bad:
            raise ApiError(400, f"Invalid variable name '{name}': it contains {', '.join(repr(c) for c in bad)}")
        if name in INVALID_NAMES:
            raise ApiError(400, f"Invalid variable name '{name}': the name is reserved")
    return names


def _prompt_field(name: str, value: Any = "") -> dict[str, Any]:
    field = MultilineInput(name, name, "", input_types=["Message"]).to_dict()
    field.update({"value": value, "field_type": "str", "fileTypes": [], "file_path": "", "load_from_db": False})
    return field


def validate_prompt(body: Mapping[str, Any]) -> dict[str, Any]:
    """``{input_variables, frontend_node}``; the node gains one field per variable (stale ones removed)."""
    node = body.get("frontend_node")
    if not node:
        return {"input_variables": [], "frontend_node": None}
    variables = prompt_variables(body["template"], bool(body.get("mustache")))
    name = body["name"]
    node = dict(node)
    template: dict[str, Any] = dict(node.get("template") or {})
    custom: dict[str, Any] = dict(node.get("custom_fields") or body.get("custom_fields") or {})
    previous = list(custom.get(name) or [])
    current: list[str] = []
    for var in variables:
        old = template.get(var)
        value = old.get("value", "") if isinstance(old, Mapping) else ""
        template[var] = _prompt_field(var, value)
        current.append(var)
    for var in previous:
        if var not in variables and var in template:
            del template[var]
    custom[name] = current
    if isinstance(template.get("input_variables"), Mapping):
        template["input_variables"] = {**template["input_variables"], "value": variables}
    node["template"] = template
    node["custom_fields"] = custom
    return {"input_variables": variables, "frontend_node": node}


def update_custom_component(body: dict[str, Any]) -> dict[str, Any]:
    """The node of an update request with ``template[field].value`` set (the code is parsed, never run)."""
    code = body["code"]
    if len(code) > MAX_CODE_CHARS:
        raise ApiError(400, f"Code is longer than {MAX_CODE_CHARS} characters")
    try:
        pyparse.parse(code)
    except SyntaxError as exc:
        raise ApiError(400, f"Invalid code: {exc.msg} (line {exc.lineno})") from None
    node = dict(body.get("frontend_node") or {})
    template = dict(body["template"])
    field = body["field"]
    entry = template.get(field)
    if not isinstance(entry, dict):
        raise ApiError(400, f"Field '{field}' is not in the component's template")
    template[field] = {**entry, "value": body.get("field_value")}
    if isinstance(template.get("code"), dict):
        template["code"] = {**template["code"], "value": code}
    node["template"] = template
    node["tool_mode"] = bool(body.get("tool_mode"))
    return node
