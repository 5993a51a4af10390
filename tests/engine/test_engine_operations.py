"""Data Operations: every Text, JSON and Table operation, empty inputs, bad parameters, legacy components."""

from __future__ import annotations

import pytest
from service_bundle_standard.data_operations import (
    DataFrameOperations,
    DataOperations,
    OperationsComponent,
    TextOperations,
)

from core.engine import Data, DataFrame, Message, RunContext, run_flow
from tests.flowkit import edge, flow, node, standard_registry


def op(name: str, **params):
    return OperationsComponent.build(operation=[{"name": name}], **params)


# -- text -----------------------------------------------------------------------------------


def test_word_count():
    c = op("Word Count", text_input="one two two\n\nthree")
    assert c.active_outputs() == ["data_output"]
    assert c.as_data().data == {
        "word_count": 4,
        "unique_words": 3,
        "character_count": 18,
        "character_count_no_spaces": 16,
        "line_count": 3,
        "non_empty_lines": 2,
    }
    partial = op("Word Count", text_input="a b", count_characters=False, count_lines=False)
    assert partial.as_data().data == {"word_count": 2, "unique_words": 2}


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("uppercase", "HELLO WORLD"),
        ("lowercase", "hello world"),
        ("title", "Hello World"),
        ("capitalize", "Hello world"),
        ("swapcase", "HELLO wORLD"),
    ],
)
def test_case_conversion(case, expected):
    assert op("Case Conversion", text_input="hello World", case_type=case).as_message().text == expected


def test_case_conversion_default_is_lowercase_and_bad_value_fails():
    assert op("Case Conversion", text_input="ABC").as_message().text == "abc"
    with pytest.raises(ValueError, match="Invalid case type"):
        op("Case Conversion", text_input="x", case_type="shout").as_message()


def test_text_replace():
    assert op("Text Replace", text_input="a-b-c", search_pattern="-", replacement_text="+").as_message().text == "a+b+c"
    assert (
        op("Text Replace", text_input="a1b22", search_pattern=r"\d+", replacement_text="#", use_regex=True)
        .as_message()
        .text
        == "a#b#"
    )
    assert op("Text Replace", text_input="a.b", search_pattern=".", replacement_text="!").as_message().text == "a!b"
    assert op("Text Replace", text_input="same", search_pattern="").as_message().text == "same"
    with pytest.raises(ValueError, match="Invalid regex"):
        op("Text Replace", text_input="x", search_pattern="(", use_regex=True).as_message()


def test_text_extract():
    text = "a1 b22 c333 d4444"
    assert op("Text Extract", text_input=text, extract_pattern=r"\d+").as_message().text == "1\n22\n333\n4444"
    assert op("Text Extract", text_input=text, extract_pattern=r"\d+", max_matches=2).as_message().text == "1\n22"
    assert (
        op("Text Extract", text_input=text, extract_pattern=r"\d+", max_matches=0).as_message().text
        == "1\n22\n333\n4444"
    )
    assert op("Text Extract", text_input="abc", extract_pattern=r"\d").as_message().text == ""
    with pytest.raises(ValueError):
        op("Text Extract", text_input="x", extract_pattern="[").as_message()


def test_head_tail():
    assert op("Text Head", text_input="abcdef", head_characters=2).as_message().text == "ab"
    assert op("Text Tail", text_input="abcdef", tail_characters=2).as_message().text == "ef"
    assert op("Text Tail", text_input="abcdef", tail_characters=0).as_message().text == ""
    assert op("Text Head", text_input="x" * 150).as_message().text == "x" * 100
    with pytest.raises(ValueError, match="non-negative"):
        op("Text Head", text_input="abc", head_characters=-1).as_message()
    with pytest.raises(ValueError, match="non-negative"):
        op("Text Tail", text_input="abc", tail_characters=-1).as_message()


def test_strip():
    assert op("Text Strip", text_input="  hi  ").as_message().text == "hi"
    assert op("Text Strip", text_input="  hi  ", strip_mode="left").as_message().text == "hi  "
    assert op("Text Strip", text_input="  hi  ", strip_mode="right").as_message().text == "  hi"
    assert op("Text Strip", text_input="xxhixx", strip_characters="x").as_message().text == "hi"


def test_join_has_two_outputs_and_works_with_empty_first():
    c = op("Text Join", text_input="a", text_input_2="b")
    assert c.active_outputs() == ["text_output", "message_output"]
    assert c.as_message().text == "a\nb" and c.as_text().text == "a\nb"
    assert op("Text Join", text_input="", text_input_2="b").as_message().text == "b"


def test_clean():
    text = "Hello,   world!!\n\n\tBye  now"
    assert op("Text Clean", text_input=text).as_message().text == "Hello, world!!\n\nBye now"
    assert (
        op("Text Clean", text_input=text, remove_special_chars=True, remove_empty_lines=True).as_message().text
        == "Hello world\nBye now"
    )


def test_text_to_dataframe():
    md = "| name | age |\n|------|-----|\n| Ada | 36 |\n| Bob | 40 |"
    c = op("Text to DataFrame", text_input=md)
    assert c.active_outputs() == ["dataframe_output"]
    frame = c.as_dataframe()
    assert frame.columns == ["name", "age"] and frame.rows == [
        {"name": "Ada", "age": "36"},
        {"name": "Bob", "age": "40"},
    ]
    no_header = op("Text to DataFrame", text_input="a;b\nc;d", table_separator=";", has_header=False).as_dataframe()
    assert no_header.rows == [{"col_0": "a", "col_1": "b"}, {"col_0": "c", "col_1": "d"}]


@pytest.mark.parametrize(
    "name",
    [
        "Word Count",
        "Case Conversion",
        "Text Replace",
        "Text Extract",
        "Text Head",
        "Text Tail",
        "Text Strip",
        "Text Clean",
    ],
)
def test_empty_text_gives_empty_result(name):
    c = op(name, text_input="")
    assert c.run_operation() == ""


def test_no_operation_selected():
    with pytest.raises(ValueError, match="Select an operation"):
        OperationsComponent.build(text_input="x").as_message()


# -- JSON ------------------------------------------------------------------------------------


def jop(name: str, data, **params):
    return OperationsComponent.build(input_type="JSON", operation=[{"name": name}], data=data, **params)


def test_select_keys():
    d = Data({"a": 1, "b": 2, "c": 3})
    assert jop("Select Keys", [d], select_keys_input=["a", "c"]).as_data().data == {"a": 1, "c": 3}
    with pytest.raises(ValueError, match="not found"):
        jop("Select Keys", [d], select_keys_input=["zzz"]).as_data()


def test_literal_eval_is_literal_only():
    d = Data({"n": "42", "l": "[1, 2]", "d": "{'x': 'y'}", "s": "plain", "code": "__import__('os').system('true')"})
    out = jop("Literal Eval", [d]).as_data().data
    assert out == {"n": 42, "l": [1, 2], "d": {"x": "y"}, "s": "plain", "code": "__import__('os').system('true')"}


def test_combine():
    out = jop("Combine", [Data({"a": 1, "t": [1]}), Data({"a": 2, "b": 3, "t": [2]})]).as_data().data
    assert out == {"a": [1, 2], "b": 3, "t": [1, 2]}
    with pytest.raises(ValueError, match="at least two"):
        jop("Combine", [Data({"a": 1})]).as_data()


def test_append_remove_rename():
    d = Data({"a": 1, "b": 2})
    assert jop("Append or Update", [d], append_update_data={"b": 20, "c": 3}).as_data().data == {
        "a": 1,
        "b": 20,
        "c": 3,
    }
    assert jop("Remove Keys", [d], remove_keys_input=["a", "missing"]).as_data().data == {"b": 2}
    assert jop("Rename Keys", [d], rename_keys_input={"a": "alpha"}).as_data().data == {"alpha": 1, "b": 2}
    assert d.data == {"a": 1, "b": 2}  # inputs are not mutated


def test_path_selection_and_jq():
    d = Data({"user": {"name": "Ada", "tags": ["x", "y"]}, "items": [{"n": 1}, {"n": 5}]})
    assert jop("Path Selection", [d], selected_key=".user.name").as_data().data == {"result": "Ada"}
    assert jop("Path Selection", [d], selected_key="user").as_data().data == {"name": "Ada", "tags": ["x", "y"]}
    assert jop("JQ Expression", [d], query=".items | map(.n)").as_data().data == {"result": [1, 5]}
    assert jop("JQ Expression", [d], query="[.items[] | select(.n > 2) | .n]").as_data().data == {"result": [5]}
    assert jop("JQ Expression", [d], query=".user.tags | length").as_data().data == {"result": 2}
    with pytest.raises(ValueError):
        jop("JQ Expression", [d], query="$ENV").as_data()
    with pytest.raises(ValueError):
        jop("JQ Expression", [d], query="env").as_data()
    with pytest.raises(ValueError, match="needs a query"):
        jop("JQ Expression", [d], query="").as_data()


def test_json_ops_need_one_input():
    with pytest.raises(ValueError, match="No JSON input"):
        jop("Remove Keys", []).as_data()
    with pytest.raises(ValueError, match="single JSON input"):
        jop("Remove Keys", [Data({"a": 1}), Data({"b": 1})]).as_data()


# -- tables ----------------------------------------------------------------------------------

PEOPLE = DataFrame(
    [
        {"name": "Ada", "age": 36, "city": "London"},
        {"name": "Bob", "age": 40, "city": "Paris"},
        {"name": "Cy", "age": 9, "city": "Paris"},
    ]
)


def top(name: str, df=PEOPLE, **params):
    return OperationsComponent.build(input_type="Table", operation=[{"name": name}], df=[df], **params).as_dataframe()


def test_filter_operators():
    assert [
        r["name"] for r in top("Filter", column_name="age", filter_operator="greater than", filter_value="10").rows
    ] == ["Ada", "Bob"]
    assert [
        r["name"] for r in top("Filter", column_name="age", filter_operator="less than", filter_value="10").rows
    ] == ["Cy"]
    assert [r["name"] for r in top("Filter", column_name="city", filter_value="Paris").rows] == ["Bob", "Cy"]
    assert [r["name"] for r in top("Filter", column_name="age", filter_value="36").rows] == ["Ada"]
    assert [
        r["name"] for r in top("Filter", column_name="city", filter_operator="not equals", filter_value="Paris").rows
    ] == ["Ada"]
    assert [
        r["name"] for r in top("Filter", column_name="name", filter_operator="contains", filter_value="y").rows
    ] == ["Cy"]
    assert [
        r["name"] for r in top("Filter", column_name="name", filter_operator="not contains", filter_value="o").rows
    ] == ["Ada", "Cy"]
    assert [
        r["name"] for r in top("Filter", column_name="name", filter_operator="starts with", filter_value="B").rows
    ] == ["Bob"]
    assert [
        r["name"] for r in top("Filter", column_name="name", filter_operator="ends with", filter_value="a").rows
    ] == ["Ada"]
    with pytest.raises(ValueError, match="not found"):
        top("Filter", column_name="nope", filter_value="x")
    with pytest.raises(ValueError, match="Invalid filter operator"):
        top("Filter", column_name="age", filter_operator="roughly", filter_value="1")


def test_sort_head_tail():
    assert [r["name"] for r in top("Sort", column_name="age").rows] == ["Cy", "Ada", "Bob"]
    assert [r["name"] for r in top("Sort", column_name="age", ascending=False).rows] == ["Bob", "Ada", "Cy"]
    assert [r["name"] for r in top("Head", num_rows=2).rows] == ["Ada", "Bob"]
    assert [r["name"] for r in top("Tail", num_rows=1).rows] == ["Cy"]
    assert len(top("Head").rows) == 3  # default 5
    with pytest.raises(ValueError):
        top("Head", num_rows=-1)


def test_columns_ops():
    assert top("Add Column", new_column_name="x", new_column_value="1").columns == ["name", "age", "city", "x"]
    assert top("Drop Column", column_name="age").columns == ["name", "city"]
    renamed = top("Rename Column", column_name="age", new_column_name="years")
    assert renamed.columns == ["name", "years", "city"] and renamed.rows[0]["years"] == 36
    assert top("Select Columns", columns_to_select=["city", "name"]).to_records()[0] == {
        "city": "London",
        "name": "Ada",
    }
    assert [
        r["city"]
        for r in top("Replace Value", column_name="city", replace_value="Paris", replacement_value="Lyon").rows
    ] == ["London", "Lyon", "Lyon"]
    with pytest.raises(ValueError):
        top("Drop Column", column_name="")
    with pytest.raises(ValueError, match="New column name"):
        top("Add Column")


def test_drop_duplicates_concatenate_merge():
    dup = DataFrame([{"a": 1, "b": 1}, {"a": 1, "b": 2}, {"a": 1, "b": 1}])
    assert len(top("Drop Duplicates", df=dup).rows) == 2
    assert len(top("Drop Duplicates", df=dup, column_name="a").rows) == 1
    both = OperationsComponent.build(
        operation=[{"name": "Concatenate"}], df=[PEOPLE, DataFrame([{"name": "Di", "zip": 1}])]
    ).as_dataframe()
    assert len(both) == 4 and both.columns == ["name", "age", "city", "zip"]
    left = DataFrame([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}])
    right = DataFrame([{"id": 2, "w": "x"}, {"id": 3, "w": "y"}])

    def merge(how):
        return OperationsComponent.build(
            operation=[{"name": "Merge"}],
            left_dataframe=left,
            right_dataframe=right,
            merge_on_column="id",
            merge_how=how,
        ).as_dataframe()

    assert merge("inner").to_records() == [{"id": 2, "v": "b", "w": "x"}]
    assert len(merge("left")) == 2 and len(merge("outer")) == 3 and len(merge("right")) == 2
    with pytest.raises(ValueError, match="Merge column"):
        OperationsComponent.build(
            operation=[{"name": "Merge"}], left_dataframe=left, right_dataframe=right, merge_on_column="zz"
        ).as_dataframe()


def test_table_needs_input():
    with pytest.raises(ValueError, match="No table input"):
        OperationsComponent.build(operation=[{"name": "Head"}]).as_dataframe()


# -- in a flow, and the legacy components ----------------------------------------------------------


def test_operations_output_follows_operation_in_a_flow():
    ops = node("Operations", "Operations-1", text_input="a b a", operation=[{"name": "Word Count", "icon": "hash"}])
    conv = node("TypeConverterComponent", "TypeConverterComponent-1", output_type="Message")
    out = node("ChatOutput", "ChatOutput-1")
    ops["data"]["node"]["outputs"] = [o for o in ops["data"]["node"]["outputs"]]
    data = flow(
        [ops, conv, out],
        [edge(ops, "data_output", conv, "input_data"), edge(conv, "message_output", out, "input_value")],
    )
    result = run_flow(data, standard_registry(), RunContext())
    assert result.ok, result.error
    assert '"word_count": 3' in result.answer()


def test_legacy_components():
    t = TextOperations.build(text_input="abc", operation=[{"name": "Case Conversion"}], case_type="uppercase")
    assert t.as_message().text == "ABC"
    with pytest.raises(ValueError, match="not a text operation"):
        TextOperations.build(text_input="abc", operation=[{"name": "Sort"}]).as_message()
    j = DataOperations.build(
        data=[Data({"a": 1, "b": 2})], operations=[{"name": "Select Keys"}], select_keys_input=["b"]
    )
    assert j.as_data().data == {"b": 2}
    f = DataFrameOperations.build(df=[PEOPLE], operation=[{"name": "Head"}], num_rows=1)
    assert f.perform_operation().rows == [PEOPLE.rows[0]]
    assert isinstance(op("Case Conversion", text_input=Message(text="Hi")).as_message(), Message)
