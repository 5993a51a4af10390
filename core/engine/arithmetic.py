"""Safe arithmetic for components and tools: ``+ - * / // % **`` over numbers, by walking the ``ast``.

Never ``eval``: anything but numbers, those operators and unary ``+``/``-`` is refused with
``ValueError``; results that would be too large to compute cheaply are refused before they are
computed. Division by zero raises ``ZeroDivisionError`` (callers word it their own way).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from core.engine import pyparse

#: the binary operators safe arithmetic allows (the safe lambda language too)
BINARY_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
UNARY_OPS: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def safe_arithmetic(expression: str) -> float | int:
    """The value of ``expression``; ``ValueError`` for anything outside arithmetic over numbers."""
    if len(expression) > 1000:
        raise ValueError("Expression is too long")
    try:
        tree = pyparse.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError("Invalid expression syntax") from None

    def walk(node: ast.AST, depth: int = 0) -> float | int:
        if depth > 100:
            raise ValueError("Expression is nested too deeply")
        if isinstance(node, ast.Expression):
            return walk(node.body, depth + 1)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPS:
            left, right = walk(node.left, depth + 1), walk(node.right, depth + 1)
            if isinstance(node.op, ast.Pow) and (abs(right) > 1000 or abs(left) > 1e100):
                raise ValueError("Exponent is too large")
            if isinstance(node.op, ast.Mult) and abs(left) * abs(right) > 1e300:
                raise ValueError("Result is too large")
            return BINARY_OPS[type(node.op)](left, right)  # type: ignore[no-any-return]
        if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY_OPS:
            return UNARY_OPS[type(node.op)](walk(node.operand, depth + 1))  # type: ignore[no-any-return]
        raise ValueError(f"Unsupported operation: {type(node).__name__}")

    return walk(tree)
