"""A small, safe subset of jq for the JSON operations (no I/O, no ``env``, no modules).

Supported: ``.``, ``.a``, ``."a b"``, ``.[0]``, ``.["k"]``, ``.[]``, ``.[1:3]``, optional ``?``,
pipes ``|``, commas ``,``, parentheses, array construction ``[...]``, literals,
comparisons (``== != < <= > >=``), ``and``/``or``, and the functions ``keys``, ``length``,
``map(f)``, ``select(f)``, ``not``, ``first``, ``last``, ``add``, ``tostring``, ``tonumber``,
``type``, ``sort``, ``reverse``, ``unique``, ``to_entries``, ``values``, ``has(k)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["JQError", "compile_jq", "jq_all"]

_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<str>\"(?:[^\"\\]|\\.)*\")|(?P<op>==|!=|<=|>=|\.\.|[.\[\]|,():<>?])|(?P<id>[A-Za-z_][A-Za-z0-9_]*))"
)
_MAX_OUTPUTS = 100_000

Filter = Callable[[Any], Iterator[Any]]


class JQError(ValueError):
    pass


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise JQError(f"Invalid jq expression near: {text[pos : pos + 10]!r}")
        kind = m.lastgroup or ""
        tokens.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return tokens


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _index(v: Any, key: Any, optional: bool) -> Iterator[Any]:
    if v is None:
        yield None
        return
    try:
        if isinstance(key, str):
            if not isinstance(v, dict):
                raise JQError(f'Cannot index {_type_name(v)} with "{key}"')
            yield v.get(key)
        elif isinstance(key, slice):
            yield v[key]
        else:
            if not isinstance(v, list):
                raise JQError(f"Cannot index {_type_name(v)} with number")
            i = int(key)
            yield v[i] if -len(v) <= i < len(v) else None
    except JQError:
        if not optional:
            raise


def _iterate(v: Any, optional: bool) -> Iterator[Any]:
    if isinstance(v, list):
        yield from v
    elif isinstance(v, dict):
        yield from v.values()
    elif not optional:
        raise JQError(f"Cannot iterate over {_type_name(v)}")


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]):
        self.t = tokens
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise JQError(f"Expected {value!r} in jq expression")
        self.i += 1
        return tok

    def parse(self) -> Filter:
        f = self.pipe()
        if self.peek() is not None:
            raise JQError(f"Unexpected {self.peek()[1]!r} in jq expression")  # type: ignore[index]
        return f

    def pipe(self) -> Filter:
        left = self.comma()
        while self.peek() and self.peek()[1] == "|":  # type: ignore[index]
            self.take("|")
            right = self.comma()
            left = (lambda a, b: lambda v: (y for x in a(v) for y in b(x)))(left, right)
        return left

    def comma(self) -> Filter:
        parts = [self.logic()]
        while self.peek() and self.peek()[1] == ",":  # type: ignore[index]
            self.take(",")
            parts.append(self.logic())
        if len(parts) == 1:
            return parts[0]
        return lambda v: (y for p in parts for y in p(v))

    def logic(self) -> Filter:
        left = self.compare()
        while self.peek() and self.peek()[1] in ("and", "or"):  # type: ignore[index]
            op = self.take()[1]
            right = self.compare()
            if op == "and":
                left = (lambda a, b: lambda v: (bool(_truthy(x) and _truthy(y)) for x in a(v) for y in b(v)))(
                    left, right
                )
            else:
                left = (lambda a, b: lambda v: (bool(_truthy(x) or _truthy(y)) for x in a(v) for y in b(v)))(
                    left, right
                )
        return left

    def compare(self) -> Filter:
        left = self.postfix()
        tok = self.peek()
        if tok and tok[1] in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            right = self.postfix()
            fn = {
                "==": lambda a, b: a == b,
                "!=": lambda a, b: a != b,
                "<": lambda a, b: _cmp(a, b) < 0,
                "<=": lambda a, b: _cmp(a, b) <= 0,
                ">": lambda a, b: _cmp(a, b) > 0,
                ">=": lambda a, b: _cmp(a, b) >= 0,
            }[op]
            return (lambda a, b, f: lambda v: (f(x, y) for y in b(v) for x in a(v)))(left, right, fn)
        return left

    def postfix(self) -> Filter:
        f = self.primary()
        while True:
            tok = self.peek()
            if tok is None:
                return f
            if tok[1] == "." and self.i + 1 < len(self.t) and self.t[self.i + 1][0] in ("id", "str"):
                self.take(".")
                kind, name = self.take()
                key = json.loads(name) if kind == "str" else name
                f = self._opt(f, lambda v, k=key: _index(v, k, False), lambda v, k=key: _index(v, k, True))
            elif tok[1] == "." and self.i + 1 < len(self.t) and self.t[self.i + 1][1] == "[":
                self.take(".")
            elif tok[1] == "[":
                f = self._bracket(f)
            else:
                return f

    def _opt(self, f: Filter, step: Callable[[Any], Iterator[Any]], opt_step: Callable[[Any], Iterator[Any]]) -> Filter:
        if self.peek() and self.peek()[1] == "?":  # type: ignore[index]
            self.take("?")
            return lambda v: (y for x in f(v) for y in opt_step(x))
        return lambda v: (y for x in f(v) for y in step(x))

    def _bracket(self, f: Filter) -> Filter:
        self.take("[")
        tok = self.peek()
        if tok and tok[1] == "]":
            self.take("]")
            return self._opt(f, lambda v: _iterate(v, False), lambda v: _iterate(v, True))
        start = end = None
        if tok and tok[0] == "num" and self.i + 1 < len(self.t) and self.t[self.i + 1][1] in ("]", ":"):
            start = int(float(self.take()[1]))
        elif tok and tok[0] == "str" and self.i + 1 < len(self.t) and self.t[self.i + 1][1] == "]":
            key = json.loads(self.take()[1])
            self.take("]")
            return self._opt(f, lambda v, k=key: _index(v, k, False), lambda v, k=key: _index(v, k, True))
        elif not (tok and tok[1] == ":"):
            raise JQError("Unsupported index expression in jq subset")
        if self.peek() and self.peek()[1] == ":":  # type: ignore[index]
            self.take(":")
            if self.peek() and self.peek()[0] == "num":  # type: ignore[index]
                end = int(float(self.take()[1]))
            self.take("]")
            sl = slice(start, end)
            return self._opt(f, lambda v, s=sl: _index(v, s, False), lambda v, s=sl: _index(v, s, True))
        self.take("]")
        return self._opt(f, lambda v, k=start: _index(v, k, False), lambda v, k=start: _index(v, k, True))

    def primary(self) -> Filter:
        tok = self.peek()
        if tok is None:
            raise JQError("Unexpected end of jq expression")
        kind, val = tok
        if val == ".":
            self.take()
            nxt = self.peek()
            if nxt and nxt[0] in ("id", "str") and not (nxt[0] == "id" and nxt[1] in ("and", "or")):
                kind2, name = self.take()
                key = json.loads(name) if kind2 == "str" else name
                return self._opt(
                    lambda v: iter((v,)), lambda v, k=key: _index(v, k, False), lambda v, k=key: _index(v, k, True)
                )
            return lambda v: iter((v,))
        if val == "..":
            self.take()
            return lambda v: _recurse(v)
        if kind == "num":
            self.take()
            num = float(val) if "." in val else int(val)
            return lambda v, n=num: iter((n,))
        if kind == "str":
            self.take()
            s = json.loads(val)
            return lambda v, s=s: iter((s,))
        if val == "(":
            self.take("(")
            inner = self.pipe()
            self.take(")")
            return inner
        if val == "[":
            self.take("[")
            if self.peek() and self.peek()[1] == "]":  # type: ignore[index]
                self.take("]")
                return lambda v: iter(([],))
            inner = self.pipe()
            self.take("]")
            return lambda v: iter((_limited(inner(v)),))
        if kind == "id":
            self.take()
            return self._function(val)
        raise JQError(f"Unexpected {val!r} in jq expression")

    def _function(self, name: str) -> Filter:
        consts = {"true": True, "false": False, "null": None}
        if name in consts:
            return lambda v, c=consts[name]: iter((c,))
        simple: dict[str, Callable[[Any], Any]] = {
            "keys": lambda v: sorted(v.keys()) if isinstance(v, dict) else list(range(len(v))),
            "length": lambda v: (
                0 if v is None else (abs(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else len(v))
            ),
            "not": lambda v: not _truthy(v),
            "first": lambda v: v[0] if v else None,
            "last": lambda v: v[-1] if v else None,
            "add": _add,
            "tostring": lambda v: v if isinstance(v, str) else json.dumps(v),
            "tonumber": lambda v: v if isinstance(v, (int, float)) else (float(v) if "." in str(v) else int(v)),
            "type": _type_name,
            "sort": lambda v: sorted(v, key=_sort_key),
            "reverse": lambda v: list(reversed(v)),
            "unique": lambda v: [json.loads(x) for x in sorted({json.dumps(i, sort_keys=True) for i in v})],
            "to_entries": lambda v: [{"key": k, "value": x} for k, x in v.items()],
            "values": lambda v: list(v.values()) if isinstance(v, dict) else list(v),
        }
        if name in simple:
            fn = simple[name]

            def run(v: Any, fn: Callable[[Any], Any] = fn) -> Iterator[Any]:
                try:
                    yield fn(v)
                except (TypeError, ValueError, AttributeError, KeyError) as exc:
                    raise JQError(f"{name} cannot be applied to {_type_name(v)}") from exc

            return run
        if name in ("map", "select", "has"):
            self.take("(")
            arg = self.pipe()
            self.take(")")
            if name == "map":
                return lambda v: iter(([y for x in _iterate(v, False) for y in arg(x)],))
            if name == "select":
                return lambda v: (v for c in arg(v) if _truthy(c))
            return lambda v: iter(tuple(k in v if isinstance(v, dict) else int(k) < len(v) for k in arg(v)))
        raise JQError(f"Unsupported jq function '{name}'")


def _truthy(v: Any) -> bool:
    return v is not None and v is not False


def _sort_key(v: Any) -> tuple[int, Any]:
    order = {"null": 0, "boolean": 1, "number": 2, "string": 3, "array": 4, "object": 5}
    t = _type_name(v)
    return (order[t], json.dumps(v, sort_keys=True) if t in ("array", "object") else v)


def _cmp(a: Any, b: Any) -> int:
    ka, kb = _sort_key(a), _sort_key(b)
    return (ka > kb) - (ka < kb)


def _add(v: Any) -> Any:
    items = list(v.values()) if isinstance(v, dict) else list(v or [])
    items = [i for i in items if i is not None]
    if not items:
        return None
    total = items[0]
    for i in items[1:]:
        total = {**total, **i} if isinstance(total, dict) else total + i
    return total


def _recurse(v: Any) -> Iterator[Any]:
    yield v
    if isinstance(v, dict):
        for x in v.values():
            yield from _recurse(x)
    elif isinstance(v, list):
        for x in v:
            yield from _recurse(x)


def _limited(it: Iterator[Any]) -> list[Any]:
    out = []
    for x in it:
        out.append(x)
        if len(out) > _MAX_OUTPUTS:
            raise JQError("jq expression produced too many results")
    return out


def compile_jq(expression: str) -> Filter:
    """Compile ``expression``; raise :class:`JQError` (a ``ValueError``) when it is not in the subset."""
    if len(expression) > 2000:
        raise JQError("jq expression is too long")
    return _Parser(_tokenize(expression)).parse()


def jq_all(expression: str, value: Any) -> list[Any]:
    return _limited(compile_jq(expression)(value))
