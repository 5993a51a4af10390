"""JQ Expression runs real jq: a conformance table, and the limits around it.

Each row is (expression, input, every output) as the jq command prints them (checked with the
jq 1.6 command line; the binding runs libjq 1.8, whose only difference on this table is that
``leaf_paths`` is gone, so ``paths(scalars)`` stands in). The hand-written subset this replaced
passed 22 of these rows.
"""

from __future__ import annotations

import pytest
from service_bundle_standard import jq_lite
from service_bundle_standard.jq_lite import JQError, compile_jq, jq_all

CONFORMANCE = [
    (".", {"a": 1}, [{"a": 1}]),
    (".a", {"a": 1}, [1]),
    (".a.b.c", {"a": {"b": {"c": "deep"}}}, ["deep"]),
    ('."first name"', {"first name": "Ada"}, ["Ada"]),
    (".missing", {"a": 1}, [None]),
    (".[0]", [10, 20, 30], [10]),
    (".[-1]", [10, 20, 30], [30]),
    (".[1:]", [10, 20, 30], [[20, 30]]),
    (".[]", [1, "two", None], [1, "two", None]),
    (".a[]?", {"a": 5}, []),
    ("{a: .b}", {"b": 1}, [{"a": 1}]),
    ("{user, total}", {"user": "ada", "total": 3, "x": 0}, [{"user": "ada", "total": 3}]),
    ("{(.k): .v}", {"k": "name", "v": 7}, [{"name": 7}]),
    ('.a // "default"', {"a": None}, ["default"]),
    ('.a // "default"', {"a": False}, ["default"]),
    ('.a // "default"', {"a": 0}, [0]),
    ('if .n > 10 then "big" elif .n > 5 then "medium" else "small" end', {"n": 7}, ["medium"]),
    ('"Hello \\(.name)!"', {"name": "Ada"}, ["Hello Ada!"]),
    (
        "[.orders[] | .total] | add",
        {
            "orders": [
                {"id": 1, "user": "ada", "total": 30, "tags": ["new"]},
                {"id": 2, "user": "bob", "total": 5, "tags": []},
                {"id": 3, "user": "ada", "total": 12, "tags": ["vip", "new"]},
            ]
        },
        [47],
    ),
    (
        "[.orders[] | select(.total > 10) | .id]",
        {
            "orders": [
                {"id": 1, "user": "ada", "total": 30, "tags": ["new"]},
                {"id": 2, "user": "bob", "total": 5, "tags": []},
                {"id": 3, "user": "ada", "total": 12, "tags": ["vip", "new"]},
            ]
        },
        [[1, 3]],
    ),
    (
        ".orders | map(.user) | unique",
        {
            "orders": [
                {"id": 1, "user": "ada", "total": 30, "tags": ["new"]},
                {"id": 2, "user": "bob", "total": 5, "tags": []},
                {"id": 3, "user": "ada", "total": 12, "tags": ["vip", "new"]},
            ]
        },
        [["ada", "bob"]],
    ),
    (
        ".orders | sort_by(.total) | map(.id)",
        {
            "orders": [
                {"id": 1, "user": "ada", "total": 30, "tags": ["new"]},
                {"id": 2, "user": "bob", "total": 5, "tags": []},
                {"id": 3, "user": "ada", "total": 12, "tags": ["vip", "new"]},
            ]
        },
        [[2, 3, 1]],
    ),
    (
        ".orders | sort_by(-.total) | .[0].id",
        {
            "orders": [
                {"id": 1, "user": "ada", "total": 30, "tags": ["new"]},
                {"id": 2, "user": "bob", "total": 5, "tags": []},
                {"id": 3, "user": "ada", "total": 12, "tags": ["vip", "new"]},
            ]
        },
        [1],
    ),
    (
        ".orders | group_by(.user) | map({user: .[0].user, n: length})",
        {
            "orders": [
                {"id": 1, "user": "ada", "total": 30, "tags": ["new"]},
                {"id": 2, "user": "bob", "total": 5, "tags": []},
                {"id": 3, "user": "ada", "total": 12, "tags": ["vip", "new"]},
            ]
        },
        [[{"user": "ada", "n": 2}, {"user": "bob", "n": 1}]],
    ),
    (
        ".orders | max_by(.total) | .id",
        {
            "orders": [
                {"id": 1, "user": "ada", "total": 30, "tags": ["new"]},
                {"id": 2, "user": "bob", "total": 5, "tags": []},
                {"id": 3, "user": "ada", "total": 12, "tags": ["vip", "new"]},
            ]
        },
        [1],
    ),
    (
        ".orders | min_by(.total).id",
        {
            "orders": [
                {"id": 1, "user": "ada", "total": 30, "tags": ["new"]},
                {"id": 2, "user": "bob", "total": 5, "tags": []},
                {"id": 3, "user": "ada", "total": 12, "tags": ["vip", "new"]},
            ]
        },
        [2],
    ),
    ("del(.b)", {"a": 1, "b": 2}, [{"a": 1}]),
    ("del(.[0, 2])", [1, 2, 3, 4], [[2, 4]]),
    ('test("^a.c$")', "abc", [True]),
    ('[.[] | select(test("err"; "i"))]', ["ERROR x", "ok", "an error"], [["ERROR x", "an error"]]),
    ("max", [3, 9, 2], [9]),
    ("min", [3, 9, 2], [2]),
    ("to_entries", ["x", "y"], [[{"key": 0, "value": "x"}, {"key": 1, "value": "y"}]]),
    ("to_entries", {"a": 1, "b": 2}, [[{"key": "a", "value": 1}, {"key": "b", "value": 2}]]),
    ("from_entries", [{"key": "a", "value": 1}, {"name": "b", "value": 2}], [{"a": 1, "b": 2}]),
    ("with_entries(.value += 1)", {"a": 1, "b": 2}, [{"a": 2, "b": 3}]),
    ("keys", {"b": 1, "a": 2}, [["a", "b"]]),
    ("keys_unsorted", {"b": 1, "a": 2}, [["b", "a"]]),
    ("length", "héllo", [5]),
    ("length", {"a": 1, "b": 2}, [2]),
    ("map(. * 2)", [1, 2, 3], [[2, 4, 6]]),
    ("map_values(. + 1)", {"a": 1, "b": 2}, [{"a": 2, "b": 3}]),
    ("[.[] | tostring]", [1, "a", [1]], [["1", "a", "[1]"]]),
    ("[.[] | tonumber]", ["1", "2.5"], [[1, 2.5]]),
    ('split(", ")', "a, b, c", [["a", "b", "c"]]),
    ('join("-")', ["a", "b", "c"], ["a-b-c"]),
    ("ascii_downcase", "MiXeD", ["mixed"]),
    ('sub("(?<x>[0-9]+)"; "<\\(.x)>")', "order 42 of 7", ["order <42> of 7"]),
    ('gsub("[0-9]"; "#")', "a1b22", ["a#b##"]),
    ('[match("[a-z]+"; "g").string]', "ab 12 cd", [["ab", "cd"]]),
    ('capture("(?<y>\\\\d{4})-(?<m>\\\\d{2})")', "2024-05-01", [{"y": "2024", "m": "05"}]),
    ("flatten", [1, [2, [3, [4]]]], [[1, 2, 3, 4]]),
    ("[paths]", {"a": {"b": 1}, "c": [2]}, [[["a"], ["a", "b"], ["c"], ["c", 0]]]),
    ("[paths(scalars)]", {"a": {"b": 1}, "c": [2]}, [[["a", "b"], ["c", 0]]]),
    ("reduce .[] as $x (0; . + $x)", [1, 2, 3, 4], [10]),
    ("[foreach .[] as $x (0; . + $x)]", [1, 2, 3], [[1, 3, 6]]),
    (". as [$a, $b] | {a: $a, b: $b}", [1, 2], [{"a": 1, "b": 2}]),
    ("[limit(2; .[])]", [5, 6, 7], [[5, 6]]),
    ("first(.[] | select(. > 1))", [0, 1, 2, 3], [2]),
    ("any(.[]; . > 2)", [1, 2, 3], [True]),
    ("all(.[]; . > 0)", [1, 2, 3], [True]),
    ("[range(0; 10; 3)]", None, [[0, 3, 6, 9]]),
    ('indices(", ")', "a, b, c", [[1, 4]]),
    ('index("b")', "abcb", [1]),
    ('contains({a: ["x"]})', {"a": ["x", "y"], "b": 1}, [True]),
    ("inside([1, 2, 3])", [1, 3], [True]),
    ('has("a")', {"a": None}, [True]),
    ('in({"a": 1})', "a", [True]),
    ("type", [1], ["array"]),
    ("[.[] | numbers]", [1, "a", None, 2.5], [[1, 2.5]]),
    ("tojson", {"a": [1, 2]}, ['{"a":[1,2]}']),
    ("fromjson", '{"a": [1, 2]}', [{"a": [1, 2]}]),
    ("@base64", "hello", ["aGVsbG8="]),
    ("@base64d", "aGVsbG8=", ["hello"]),
    ("@csv", [1, "a,b", None], ['1,"a,b",']),
    ("@uri", "a b&c", ["a%20b%26c"]),
    ("@html", "<b>&</b>", ["&lt;b&gt;&amp;&lt;/b&gt;"]),
    ('ltrimstr("foo")', "foobar", ["bar"]),
    ('rtrimstr("bar")', "foobar", ["foo"]),
    ('startswith("foo")', "foobar", [True]),
    ('splits(", *")', "a, b,c", ["a", "b", "c"]),
    ('walk(if type == "number" then . + 1 else . end)', {"a": [1, {"b": 2}]}, [{"a": [2, {"b": 3}]}]),
    ('setpath(["a", "b"]; 5)', {}, [{"a": {"b": 5}}]),
    ('getpath(["a", "b"])', {"a": {"b": 9}}, [9]),
    ("to_entries | map(select(.value > 1)) | from_entries", {"a": 1, "b": 2, "c": 3}, [{"b": 2, "c": 3}]),
    (".a += 1 | .b |= . * 10", {"a": 1, "b": 2}, [{"a": 2, "b": 20}]),
    ("def double: . * 2; map(double)", [1, 2], [[2, 4]]),
    ('[.[] | (.a? // "none")]', [{"a": 1}, 2, {"b": 3}], [[1, "none", "none"]]),
    ('try error("x") catch .', None, ["x"]),
    ('[.[] | try tonumber catch "bad"]', ["1", "x"], [[1, "bad"]]),
    (
        "label $out | foreach .[] as $item (0; . + $item; if . > 3 then ., break $out else . end)",
        [1, 2, 3, 4],
        [1, 3, 6],
    ),
    ("unique_by(length)", ["a", "bb", "c", "dd", "eee"], [["a", "bb", "eee"]]),
    ("transpose", [[1, 2], [3, 4]], [[[1, 3], [2, 4]]]),
    ("[combinations]", [[1, 2], [3, 4]], [[[1, 3], [1, 4], [2, 3], [2, 4]]]),
    ("input_line_number", None, [0]),
    ("implode", [72, 105], ["Hi"]),
    ("explode", "Hi", [[72, 105]]),
    ("floor, sqrt", 16.5, [16, 4.06201920231798]),
    ('@text "n=\\(.)"', 3, ["n=3"]),
    ("[.[] | ascii_upcase] | sort | reverse", ["b", "a", "c"], [["C", "B", "A"]]),
    ("map(select(.active)) | length", [{"active": True}, {"active": False}, {}], [1]),
    ('with_entries(select(.key | startswith("_") | not))', {"_id": 1, "name": "x"}, [{"name": "x"}]),
    (
        "[.[] | {name: .n, upper: (.n | ascii_upcase)}]",
        [{"n": "a"}, {"n": "b"}],
        [[{"name": "a", "upper": "A"}, {"name": "b", "upper": "B"}]],
    ),
    ("INDEX(.id) | keys", [{"id": "x"}, {"id": "y"}], [["x", "y"]]),
    ('splits("a") | length', "bab", [1, 1]),
    ("tostream", {"a": [1]}, [[["a", 0], 1], [["a", 0]], [["a"]]]),
    ("[.[] | strings]", [1, "a", None], [["a"]]),
    ("min_by(.x), max_by(.x)", [{"x": 2}, {"x": 1}], [{"x": 1}, {"x": 2}]),
    ("add / length", [2, 4, 6], [4]),
    ("(.a, .b) = 0", {"a": 1, "b": 2, "c": 3}, [{"a": 0, "b": 0, "c": 3}]),
    ('to_entries | map("\\(.key)=\\(.value)") | join("&")', {"q": "x", "n": 2}, ["q=x&n=2"]),
]


@pytest.mark.parametrize(("expression", "value", "expected"), CONFORMANCE, ids=[r[0][:40] for r in CONFORMANCE])
def test_conformance(expression, value, expected):
    assert jq_all(expression, value) == expected


def test_table_is_large_enough():
    assert len(CONFORMANCE) >= 40


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("env", "env is not available"),
        ("env.PATH", "env is not available"),
        ("$ENV", "$ENV is not available"),
        ("$ENV.HOME", "$ENV is not available"),
        (".), ($ENV", "$ENV is not available"),  # closing the wrapper does not escape it
        (".), (env", "env is not available"),
        ("input", "input is not available"),
        ("$__loc__", "$__loc__ is not available"),
        ('import "evil" as e; .', "syntax error, unexpected import"),
        ('include "evil"; .', "syntax error"),
        ('"evil" | modulemeta', "modules are not available"),
        ('"out" | halt_error', "jq: out"),
        ('error("boom")', "jq: boom"),
        (".a.b", "Cannot index number"),
        (".a |", "unexpected end of the expression"),
        (".a\n| nosuch", "nosuch/0 is not defined (line 2, column 3)"),
        ("", "empty"),
    ],
)
def test_refused_and_failing_expressions(expression, message):
    with pytest.raises(JQError) as info:
        jq_all(expression, {"a": 5})
    assert message in str(info.value)


def test_nothing_reaches_the_process():
    assert jq_all("[inputs]", 1) == [[]]
    assert jq_all("debug | . + 1", 1) == [2]  # debug writes nowhere, the value passes through
    assert jq_all('debug("msg") | stderr', 1) == [1]
    assert jq_all("input_filename, get_search_list", None) == [None, []]
    assert jq_all("def env: 1; env", None) == [1]  # authors may still define their own names


def test_the_child_has_no_environment(monkeypatch):
    monkeypatch.setenv("SERVICE_SECRET_KEY", "do-not-leak")
    # even a program that got past the prelude's definitions would see an empty environment
    program = jq_lite._PRELUDE.replace('def env: error("env is not available in flows");', "") + "env\n)"
    seen = jq_lite._run(program, None, 1)[0]
    assert set(seen) <= {"LC_CTYPE"}  # only what Python's locale coercion sets in the child


def test_time_is_bounded(monkeypatch):
    monkeypatch.setattr(jq_lite, "CPU_SECONDS", 1)
    with pytest.raises(JQError, match=r"more than 1 s of CPU|took longer than"):  # wall clock on a busy machine
        jq_all("def f: f; f", None)


def test_memory_is_bounded():
    with pytest.raises(JQError, match="MB of memory"):
        jq_all('"x" * 1000000000 | length', None)


def test_output_is_bounded(monkeypatch):
    with pytest.raises(JQError, match="more than 10000 results"):
        jq_all("range(20000)", None)
    monkeypatch.setattr(jq_lite, "MAX_OUTPUT_BYTES", 1024 * 1024)
    with pytest.raises(JQError, match="larger than 1 MB"):
        jq_all('[range(300000) | "xxxxxx"]', None)


def test_regex_backtracking_is_bounded():
    with pytest.raises(JQError, match="Regex failure"):
        jq_all('test("(a+)+$")', "a" * 40 + "!")


def test_long_expressions_are_refused():
    with pytest.raises(JQError, match="too long"):
        compile_jq("." * (jq_lite.MAX_EXPRESSION_LENGTH + 1))


def test_values_that_are_not_json_are_stringified():
    import datetime

    assert jq_all(".when | type", {"when": datetime.date(2024, 1, 2)}) == ["string"]
