"""``core.engine.pyparse``: a parse another thread disturbed (CPython 3.11's shared AST depth count) is tried
again; every other error is the caller's, unchanged."""

from __future__ import annotations

import ast

import pytest

from core.engine import pyparse

MISMATCH = SystemError("AST constructor recursion depth mismatch (before=177, after=57)")


def _flaky(monkeypatch: pytest.MonkeyPatch, failures: int, error: BaseException = MISMATCH) -> list[str]:
    real, calls = ast.parse, []

    def parse(source, mode="exec"):
        calls.append(mode)
        if len(calls) <= failures:
            raise error
        return real(source, mode=mode)

    monkeypatch.setattr(pyparse.ast, "parse", parse)
    return calls


def test_a_disturbed_parse_is_tried_again(monkeypatch):
    calls = _flaky(monkeypatch, failures=2)
    tree = pyparse.parse("revision = 'a'\n")
    assert isinstance(tree, ast.Module) and len(calls) == 3
    assert isinstance(pyparse.parse("1 + 2", mode="eval"), ast.Expression)


def test_it_gives_up_after_three_tries(monkeypatch):
    calls = _flaky(monkeypatch, failures=5)
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        pyparse.parse("x = 1\n")
    assert len(calls) == 3


def test_other_errors_are_not_retried(monkeypatch):
    calls = _flaky(monkeypatch, failures=1, error=SystemError("something else"))
    with pytest.raises(SystemError, match="something else"):
        pyparse.parse("x = 1\n")
    assert len(calls) == 1
    monkeypatch.undo()
    with pytest.raises(SyntaxError):
        pyparse.parse("x = = 1\n")
