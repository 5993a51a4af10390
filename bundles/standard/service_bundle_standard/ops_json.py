"""JSON operations of Data Operations (Select Keys ... JQ Expression)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from core.engine import Data, DataFrame, Message
from service_bundle_standard.jq_lite import jq_all


class JSONOperationsMixin:
    """``json_operation(op)`` over ``self.data`` and the JSON fields."""

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
            if keys == ["data"] and isinstance(data.get("data"), dict):  # the reference unwraps a nested "data"
                return Data(dict(data["data"]))
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
        if op == "Remove Keys":  # at every depth, as the reference
            return Data(_remove_keys(data, {str(k) for k in self.remove_keys_input or []}))  # type: ignore[attr-defined]
        if op == "Rename Keys":
            mapping = self.rename_keys_input or {}  # type: ignore[attr-defined]
            if isinstance(mapping, list):
                merged: dict[str, Any] = {}
                for m in mapping:
                    if isinstance(m, dict):
                        merged.update(m)
                mapping = merged
            return Data(_rename_keys(data, {str(k): str(v) for k, v in mapping.items()}))  # at every depth
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


def _remove_keys(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _remove_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_remove_keys(v, keys) for v in value]
    return value


def _rename_keys(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {mapping.get(k, k): _rename_keys(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_keys(v, mapping) for v in value]
    return value


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
