"""A safe evaluator for the one-argument lambdas Smart Transform asks a model to write (never ``eval``).

The reference ``eval``s the model's ``lambda`` in its own process. Here the text is parsed with
:mod:`ast` and interpreted node by node over a small, closed language: literals, names bound by the
lambda and its comprehensions, arithmetic/comparison/boolean operators, conditional expressions,
subscripts and slices, list/dict/set/generator comprehensions, a list of pure builtins (``len``,
``sorted``, ``sum``...) and a list of pure methods of ``str``/``list``/``dict`` (``upper``, ``split``,
``get``, ``items``...). Anything else (imports, other attributes, dunder names, ``lambda`` bodies
that call unknown functions) is refused with :class:`UnsupportedLambda`, naming the construct.
Work is bounded: a step budget, and caps on sequence sizes produced by ``*``, ``**`` and ``range``.

Memory is bounded in total, in process (issue 26: a lambda held 2.1 GB and answered 1.4 GB). Why not
the sandbox (:func:`core.sandbox.run_python`): it needs bubblewrap and a new interpreter per run
(tens of milliseconds, the value serialised both ways), and the language here is closed, so every
operation that can allocate is known and few. Each one is checked *before* it allocates (its size
computed from its operands: ``+``, ``*``, ``%`` formatting, ``str()``/f-strings of containers,
``join``, ``sum`` of sequences is refused) to stay under ``MAX_SIZE`` items or characters, and what
it produced is then *charged* (``sys.getsizeof``, shallow: a shared reference is not a copy) to a
budget for the whole run, ``MAX_MEMORY`` bytes or four times the input's size, whichever is larger;
``range`` is charged for the integers it may produce. The result is then measured as text (shared
references counted each time they appear, as a response would write them) against ``MAX_OUTPUT``
characters or twice the input's size. Anything over answers :class:`LambdaError` naming the bound.
"""

from __future__ import annotations

import ast
import operator
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from core.engine import pyparse
from core.engine.arithmetic import BINARY_OPS

__all__ = ["LambdaError", "UnsupportedLambda", "compile_lambda"]

MAX_STEPS = 2_000_000
MAX_SIZE = 1_000_000  # items or characters a single operation may produce
MAX_SOURCE = 4_000
MAX_INT_BITS = 100_000  # integers stay below ~30,000 digits
#: bytes one run may allocate in total (or 4x the input's size); one operation may allocate up to ~30 MB
#: before it is charged (a split of a MAX_SIZE string), so a run peaks under ~100 MB
MAX_MEMORY = 48 * 1024 * 1024
MAX_OUTPUT = 16 * 1024 * 1024  # characters of the result as text (or 2x the input's size)
_INT_BYTES = 32  # what an integer a range yields costs


class LambdaError(ValueError):
    """The lambda failed while running (a bad key, a type error, a budget exceeded)."""


class UnsupportedLambda(LambdaError):
    """The lambda uses something outside the safe language."""


_BIN = BINARY_OPS
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}
_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}


def _range(*args: int) -> range:
    r = range(*args)
    if len(r) > MAX_SIZE:
        raise LambdaError("range too large")
    return r


def _too_large(what: str = "result") -> LambdaError:
    return LambdaError(f"{what} too large (a single value is limited to {MAX_SIZE:,} items or characters)")


def text_size(value: Any, limit: int) -> int:
    """About how many characters ``value`` takes as text (``str``/JSON); :class:`LambdaError` past ``limit``.

    A container referenced many times is measured once and counted each time (``[[big] * 999] * 999``
    is small in memory but not as text), so the walk costs the distinct values, not the repetitions.
    """
    sizes: dict[int, int] = {}

    def measure(item: Any) -> int:
        if isinstance(item, str):
            return len(item) + 2
        if isinstance(item, bool) or item is None:
            return 5
        if isinstance(item, int):
            return item.bit_length() // 3 + 2
        if isinstance(item, float):
            return 24
        if isinstance(item, (list, tuple, set, frozenset, dict, range)):
            known = sizes.get(id(item))
            if known is not None:
                return known
            total = 2
            pairs = item.items() if isinstance(item, dict) else ((None, v) for v in item)
            for key, child in pairs:
                total += 2 + measure(child) + (measure(key) if key is not None else 0)
                if total > limit:
                    raise LambdaError(f"the result is too large (over {limit:,} characters as text)")
            sizes[id(item)] = total
            return total
        return 32

    try:
        size = measure(value)
    except RecursionError:
        raise LambdaError("the result is nested too deeply") from None
    if size > limit:
        raise LambdaError(f"the result is too large (over {limit:,} characters as text)")
    return size


_FORMAT = re.compile(r"%[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_format(fmt: str, args: Any) -> None:
    """``fmt % args`` before it runs: no ``*`` widths, no width or precision over ``MAX_SIZE``, and a result
    (the format plus the arguments as text) under ``MAX_SIZE``."""
    for width, precision in _FORMAT.findall(fmt):
        for part in (width, precision):
            if part == "*" or (part and int(part) > MAX_SIZE):
                raise _too_large("format width")
    text_size(args, MAX_SIZE - len(fmt))


BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "list": list,
    "dict": dict,
    "set": set,
    "tuple": tuple,
    "sorted": sorted,
    "reversed": reversed,
    "min": min,
    "max": max,
    "sum": sum,
    "abs": abs,
    "round": round,
    "any": any,
    "all": all,
    "enumerate": enumerate,
    "zip": zip,
    "range": _range,
    "filter": filter,
    "map": map,
    "isinstance": isinstance,
}
_CONSTANTS = {"None": None, "True": True, "False": False}
_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict, "set": set, "tuple": tuple}
#: pure methods by receiver type (no method that mutates shared state or touches the outside)
METHODS: dict[type, frozenset[str]] = {
    str: frozenset(
        [
            "upper",
            "lower",
            "title",
            "capitalize",
            "casefold",
            "swapcase",
            "strip",
            "lstrip",
            "rstrip",
            "split",
            "rsplit",
            "splitlines",
            "join",
            "replace",
            "startswith",
            "endswith",
            "find",
            "rfind",
            "index",
            "count",
            "isdigit",
            "isalpha",
            "isalnum",
            "isspace",
            "isupper",
            "islower",
            "isnumeric",
            "zfill",
            "center",
            "ljust",
            "rjust",
            "partition",
            "rpartition",
            "removeprefix",
            "removesuffix",
        ]
    ),
    list: frozenset(["index", "count", "copy"]),
    tuple: frozenset(["index", "count"]),
    dict: frozenset(["get", "items", "keys", "values", "copy"]),
    set: frozenset(["union", "intersection", "difference", "issubset", "issuperset", "copy"]),
}


def _check_size(func: Any, receiver: Any, args: list[Any]) -> None:
    """Refuse calls whose result would be huge before making them (padding widths, ``replace``, ``join``,
    ``str`` of a container, ``sum`` of sequences). ``args`` may be replaced (``join``'s iterable, listed)."""
    if func is str and args:
        text_size(args[0], MAX_SIZE)
    if func is sum:
        start = args[1] if len(args) > 1 else 0
        if not isinstance(start, (int, float)) or isinstance(start, bool):
            raise LambdaError("sum() adds numbers only")
    if isinstance(receiver, str) and getattr(func, "__name__", "") == "join" and args:
        items = list(args[0])
        total = len(receiver) * max(len(items) - 1, 0)
        for item in items:
            total += len(item) if isinstance(item, str) else 0
            if total > MAX_SIZE:
                raise _too_large()
        args[0] = items
    if isinstance(receiver, str):
        name = getattr(func, "__name__", "")
        if name in ("center", "ljust", "rjust", "zfill") and args and isinstance(args[0], int) and args[0] > MAX_SIZE:
            raise LambdaError("result too large")
        grows = name == "replace" and len(args) >= 2 and isinstance(args[1], str)
        if grows and len(receiver) * max(1, len(args[1])) > MAX_SIZE * 4:
            raise LambdaError("result too large")


class _Lambda:
    """A lambda value of the safe language (callable from builtins such as ``sorted(key=...)``)."""

    def __init__(self, node: ast.Lambda, scope: dict[str, Any], ev: _Evaluator):
        self.node, self.scope, self.ev = node, scope, ev

    def __call__(self, *args: Any) -> Any:
        params = [a.arg for a in self.node.args.args]
        if len(args) != len(params):
            raise LambdaError(f"the function takes {len(params)} argument(s), got {len(args)}")
        return self.ev.eval(self.node.body, {**self.scope, **dict(zip(params, args, strict=True))})


class _Evaluator:
    def __init__(self, budget: int = MAX_MEMORY) -> None:
        self.steps = 0
        self.used = 0
        self.budget = budget

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise LambdaError("the function did too much work")

    def charge(self, value: Any, extra: int = 0) -> Any:
        """Count what ``value`` allocated (shallow) against the run's memory budget; return ``value``."""
        if isinstance(value, (str, bytes, list, tuple, set, frozenset, dict, int, float)):
            extra += sys.getsizeof(value)
        self.used += extra
        if self.used > self.budget:
            raise LambdaError(f"the function uses too much memory (over {self.budget // (1024 * 1024)} MB)")
        return value

    def eval(self, node: ast.AST, scope: dict[str, Any]) -> Any:
        self.tick()
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise UnsupportedLambda(f"'{type(node).__name__}' is not supported")
        return method(node, scope)

    # -- leaves -------------------------------------------------------------------------------------
    def _Constant(self, node: ast.Constant, scope: dict[str, Any]) -> Any:
        return node.value

    def _Name(self, node: ast.Name, scope: dict[str, Any]) -> Any:
        if node.id in scope:
            return scope[node.id]
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if node.id in BUILTINS:
            return BUILTINS[node.id]
        raise UnsupportedLambda(f"the name '{node.id}' is not available")

    # -- containers ---------------------------------------------------------------------------------
    def _List(self, node: ast.List, scope: dict[str, Any]) -> list[Any]:
        return self.charge([self.eval(e, scope) for e in node.elts])

    def _Tuple(self, node: ast.Tuple, scope: dict[str, Any]) -> tuple[Any, ...]:
        return self.charge(tuple(self.eval(e, scope) for e in node.elts))

    def _Set(self, node: ast.Set, scope: dict[str, Any]) -> set[Any]:
        return self.charge({self.eval(e, scope) for e in node.elts})

    def _Dict(self, node: ast.Dict, scope: dict[str, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                out.update(self.eval(v, scope))
            else:
                out[self.eval(k, scope)] = self.eval(v, scope)
        return self.charge(out)

    def _JoinedStr(self, node: ast.JoinedStr, scope: dict[str, Any]) -> str:
        parts = []
        size = 0
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                if v.format_spec is not None:
                    raise UnsupportedLambda("format specs in f-strings are not supported")
                value = self.eval(v.value, scope)
                size += text_size(value, MAX_SIZE - size)
                parts.append(repr(value) if v.conversion == ord("r") else str(value))
            else:
                parts.append(str(self.eval(v, scope)))
        return self.charge("".join(parts))

    # -- operators ----------------------------------------------------------------------------------
    def _BinOp(self, node: ast.BinOp, scope: dict[str, Any]) -> Any:
        op = _BIN.get(type(node.op))
        if op is None:
            raise UnsupportedLambda(f"the operator '{type(node.op).__name__}' is not supported")
        left, right = self.eval(node.left, scope), self.eval(node.right, scope)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > 1000:
            raise LambdaError("exponent too large")
        if isinstance(left, int) and isinstance(right, int):  # checked before computing: big ints are slow
            bits = max(left.bit_length(), 1)
            if isinstance(node.op, ast.Pow) and bits * max(right, 0) > MAX_INT_BITS:
                raise LambdaError("result too large")
            if isinstance(node.op, ast.Mult) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise LambdaError("result too large")
        if isinstance(node.op, ast.Mult):
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_SIZE:
                    raise _too_large()
        seqs = (str, list, tuple)
        concat = isinstance(node.op, ast.Add) and isinstance(left, seqs) and isinstance(right, seqs)
        if concat and len(left) + len(right) > MAX_SIZE:
            raise _too_large()
        if isinstance(node.op, ast.Mod) and isinstance(left, str):
            _check_format(left, right)
        try:
            return self.charge(op(left, right))
        except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:
            raise LambdaError(str(exc)) from None

    def _UnaryOp(self, node: ast.UnaryOp, scope: dict[str, Any]) -> Any:
        op = _UNARY.get(type(node.op))
        if op is None:
            raise UnsupportedLambda(f"the operator '{type(node.op).__name__}' is not supported")
        try:
            return op(self.eval(node.operand, scope))
        except TypeError as exc:
            raise LambdaError(str(exc)) from None

    def _BoolOp(self, node: ast.BoolOp, scope: dict[str, Any]) -> Any:
        value: Any = None
        for expr in node.values:
            value = self.eval(expr, scope)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def _Compare(self, node: ast.Compare, scope: dict[str, Any]) -> bool:
        left = self.eval(node.left, scope)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comp, scope)
            try:
                if not _CMP[type(op)](left, right):
                    return False
            except TypeError as exc:
                raise LambdaError(str(exc)) from None
            left = right
        return True

    def _IfExp(self, node: ast.IfExp, scope: dict[str, Any]) -> Any:
        return self.eval(node.body if self.eval(node.test, scope) else node.orelse, scope)

    def _Subscript(self, node: ast.Subscript, scope: dict[str, Any]) -> Any:
        value = self.eval(node.value, scope)
        index = self.eval(node.slice, scope)
        try:
            return self.charge(value[index]) if isinstance(index, slice) else value[index]
        except (KeyError, IndexError, TypeError) as exc:
            raise LambdaError(f"cannot take [{index!r}]: {exc}") from None

    def _Slice(self, node: ast.Slice, scope: dict[str, Any]) -> slice:
        def part(expr: ast.expr | None) -> Any:
            return None if expr is None else self.eval(expr, scope)

        return slice(part(node.lower), part(node.upper), part(node.step))

    def _Lambda(self, node: ast.Lambda, scope: dict[str, Any]) -> _Lambda:
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
            raise UnsupportedLambda("only plain positional lambda parameters are supported")
        return _Lambda(node, scope, self)

    # -- calls --------------------------------------------------------------------------------------
    def _Call(self, node: ast.Call, scope: dict[str, Any]) -> Any:
        receiver: Any = None
        if isinstance(node.func, ast.Attribute):
            receiver = self.eval(node.func.value, scope)
            name = node.func.attr
            allowed = next((names for kind, names in METHODS.items() if isinstance(receiver, kind)), frozenset())
            if name.startswith("_") or name not in allowed:
                raise UnsupportedLambda(f"the method '{type(receiver).__name__}.{name}' is not available")
            func: Any = getattr(receiver, name)
        else:
            func = self.eval(node.func, scope)
            if not isinstance(func, _Lambda) and func not in BUILTINS.values():
                raise UnsupportedLambda("only the listed builtins and lambdas can be called")
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.eval(a.value, scope))
            else:
                args.append(self.eval(a, scope))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise UnsupportedLambda("** arguments are not supported")
            kwargs[kw.arg] = self.eval(kw.value, scope)
        if func is isinstance and len(args) == 2:
            kinds = args[1] if isinstance(args[1], tuple) else (args[1],)
            if not all(k in _TYPES.values() for k in kinds):
                raise UnsupportedLambda("isinstance() takes the basic types only")
        _check_size(func, receiver if isinstance(node.func, ast.Attribute) else None, args)
        try:
            result = func(*args, **kwargs)
        except LambdaError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError) as exc:
            raise LambdaError(str(exc)) from None
        if isinstance(result, (str, list, tuple, set, dict)) and len(result) > MAX_SIZE:
            raise _too_large()
        if isinstance(result, Iterator):
            return self._bounded(result)
        if isinstance(result, range):
            return self.charge(result, len(result) * _INT_BYTES)
        if isinstance(receiver, str) and isinstance(result, (list, tuple)):
            # split, partition...: every item is a new string
            return self.charge(result, sum(sys.getsizeof(item) for item in result))
        return self.charge(result)

    def _bounded(self, items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            self.tick()
            yield self.charge(item) if isinstance(item, tuple) else item  # zip, enumerate: new tuples

    # -- comprehensions -----------------------------------------------------------------------------
    def _bind(self, target: ast.AST, value: Any, scope: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value)
            if len(values) != len(target.elts):
                raise LambdaError("cannot unpack: wrong number of values")
            for t, v in zip(target.elts, values, strict=True):
                self._bind(t, v, scope)
        else:
            raise UnsupportedLambda("only names and tuples can be loop targets")

    def _iterate(self, generators: list[ast.comprehension], scope: dict[str, Any]) -> Iterator[dict[str, Any]]:
        first, rest = generators[0], generators[1:]
        if first.is_async:
            raise UnsupportedLambda("async comprehensions are not supported")
        for value in self.eval(first.iter, scope):
            self.tick()
            inner = dict(scope)
            self._bind(first.target, value, inner)
            if all(self.eval(cond, inner) for cond in first.ifs):
                if rest:
                    yield from self._iterate(rest, inner)
                else:
                    yield inner

    def _ListComp(self, node: ast.ListComp, scope: dict[str, Any]) -> list[Any]:
        return self.charge([self.eval(node.elt, s) for s in self._iterate(node.generators, scope)])

    def _SetComp(self, node: ast.SetComp, scope: dict[str, Any]) -> set[Any]:
        return self.charge({self.eval(node.elt, s) for s in self._iterate(node.generators, scope)})

    def _GeneratorExp(self, node: ast.GeneratorExp, scope: dict[str, Any]) -> list[Any]:
        return self.charge([self.eval(node.elt, s) for s in self._iterate(node.generators, scope)])

    def _DictComp(self, node: ast.DictComp, scope: dict[str, Any]) -> dict[Any, Any]:
        items = self._iterate(node.generators, scope)
        return self.charge({self.eval(node.key, s): self.eval(node.value, s) for s in items})


def compile_lambda(text: str) -> Callable[[Any], Any]:
    """The one-argument lambda in ``text`` as a callable of the safe language; refuses anything else."""
    source = text.strip()
    if len(source) > MAX_SOURCE:
        raise UnsupportedLambda("the function is too long")
    try:
        tree = pyparse.parse(source, mode="eval")
    except SyntaxError as exc:
        raise UnsupportedLambda(f"not a valid lambda: {exc.msg}") from None
    body = tree.body
    if not isinstance(body, ast.Lambda) or len(body.args.args) != 1:
        raise UnsupportedLambda("expected a lambda of one argument")
    for node in ast.walk(body):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise UnsupportedLambda(f"the attribute '{node.attr}' is not available")
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise UnsupportedLambda(f"the name '{node.id}' is not available")

    def run(value: Any) -> Any:
        size = text_size(value, sys.maxsize)  # the bounds grow with the input (already in memory)
        ev = _Evaluator(budget=max(MAX_MEMORY, 4 * size))
        try:
            fn = ev.eval(body, {})
            result = fn(value)
            result = list(result) if isinstance(result, Iterator) else result
        except RecursionError:
            raise LambdaError("the function is nested too deeply") from None
        except MemoryError:  # a bound this module missed: still an error of the lambda, never of the process
            raise LambdaError("the function uses too much memory") from None
        text_size(result, max(MAX_OUTPUT, 2 * size))
        return result

    return run
