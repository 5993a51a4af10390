"""User-supplied regular expressions cannot hold a worker: they stop after a time limit."""

import time

import pytest
from service_bundle_standard import user_regex
from service_bundle_standard.user_regex import UserPattern

from tests.flowkit import edge, flow, node, standard_registry

EVIL = "(a|aa)+$"  # exponential backtracking that the regex module does not optimise away
SLOW_INPUT = "a" * 40 + "!"


def test_catastrophic_backtracking_is_stopped(monkeypatch):
    monkeypatch.setattr(user_regex, "TIMEOUT", 0.2)
    started = time.monotonic()
    with pytest.raises(ValueError, match=r"took longer than 0\.2 s"):
        UserPattern(EVIL).search(SLOW_INPUT)
    assert time.monotonic() - started < 2


def test_ordinary_patterns_behave_like_re():
    assert UserPattern(r"(\d+)-(\d+)").findall("1-2 and 30-40") == [("1", "2"), ("30", "40")]
    assert UserPattern(r"\s+").sub("_", "a  b\tc") == "a_b_c"
    assert UserPattern("HELLO", user_regex.IGNORECASE).search("well, hello")
    assert UserPattern(r"\w+").finditer_groups("ab cd") == ["ab", "cd"]
    with pytest.raises(ValueError, match="Invalid regex pattern"):
        UserPattern("(unclosed")


def test_a_runaway_pattern_fails_its_vertex_not_the_process(monkeypatch):
    from core.engine import RunContext, run_flow

    monkeypatch.setattr(user_regex, "TIMEOUT", 0.2)
    text_in = node("TextInput", "TextInput-a", input_value=SLOW_INPUT)
    extract = node(
        "Operations", "Operations-b", input_type="Text", operation=[{"name": "Text Extract"}], extract_pattern=EVIL
    )
    text_out = node("TextOutput", "TextOutput-c")
    data = flow(
        [text_in, extract, text_out],
        [edge(text_in, "text", extract, "text_input"), edge(extract, "message_output", text_out, "input_value")],
    )
    result = run_flow(data, standard_registry(), RunContext())
    assert result.status == "failed"
    assert result.error["vertex_id"] == "Operations-b"
    assert "took longer" in result.error["message"]
