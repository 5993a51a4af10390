"""``parse(source, mode)``: ``ast.parse`` behind one lock per process, for every caller in the service.

CPython 3.11 counts the AST constructor's recursion depth in the ``_ast`` module's state, which every thread
shares (python/cpython#106905): two threads building trees at once can fail with ``SystemError: AST
constructor recursion depth mismatch``. Full test runs hit it twice (a migration script read while
another thread parsed: the depths were a test's deep stack and a background thread's shallow one). Trees
are small here (migration scripts, a component's code, a one-line expression), so one lock costs nothing
measurable; a greenlet never switches inside ``ast.parse``. In ``core.engine`` so
the executor's distribution (the engine only) has it too.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal, overload

_lock = threading.Lock()


@overload
def parse(source: str | bytes, mode: Literal["exec"] = "exec") -> ast.Module: ...


@overload
def parse(source: str | bytes, mode: Literal["eval"]) -> ast.Expression: ...


def parse(source: str | bytes, mode: str = "exec") -> ast.AST:
    """``ast.parse(source, mode=mode)``, one tree at a time in this process (its errors unchanged).

    The lock orders this service's own parses; the standard library parses too, outside it (3.11's
    ``traceback`` parses a source line to place its ``^^^`` marks, in whatever thread logs an exception),
    so a mismatch can still happen: it says nothing about the source, and the parse is tried again (each
    parse starts the shared count afresh)."""
    with _lock:
        for attempt in range(_ATTEMPTS):
            try:
                return ast.parse(source, mode=mode)
            except SystemError as exc:
                if "recursion depth mismatch" not in str(exc) or attempt == _ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # the loop returns or raises


#: tries of one parse that another thread's parse disturbed
_ATTEMPTS = 3
