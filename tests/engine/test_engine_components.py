"""Standard components other than Data Operations."""

from __future__ import annotations

import json

import pytest
from service_bundle_standard.flow_control import ConditionalRouter, LoopComponent, Pass, evaluate_condition
from service_bundle_standard.http import CSVtoData, JSONtoData, parse_curl
from service_bundle_standard.inputs_outputs import ChatOutput, Webhook
from service_bundle_standard.processing import (
    CombineText,
    CreateData,
    DataToDataFrame,
    ParserComponent,
    PromptComponent,
    RegexExtractorComponent,
    SplitText,
    TypeConverterComponent,
    split_into_chunks,
)
from service_bundle_standard.utilities import (
    CalculatorComponent,
    CurrentDate,
    IDGenerator,
    MemoryComponent,
    safe_arithmetic,
)

from core.engine import Data, DataFrame, Message, RunContext, run_flow
from tests.flowkit import EventLog, edge, flow, node, standard_registry


def test_webhook_payloads():
    assert Webhook.build(data='{"a": 1}').build_data().data == {"a": 1}
    assert Webhook.build(data="plain").build_data().data == {"payload": "plain"}
    assert Webhook.build(data="[1, 2]").build_data().data == {"payload": [1, 2]}
    assert Webhook.build(data="").build_data().data == {}


def test_chat_output_converts_values():
    assert ChatOutput.build(input_value=Data({"k": "v"})).convert_to_string() == '```json\n{\n  "k": "v"\n}\n```'
    table = ChatOutput.build(input_value=DataFrame([{"a": 1, "b": None}])).convert_to_string()
    assert table.splitlines()[0] == "| a | b |"
    assert ChatOutput.build(input_value=[Message(text="x"), "y"]).convert_to_string() == "x\ny"


def test_type_convert_all_directions():
    msg = Message(text='{"a": 1}')
    assert TypeConverterComponent.build(input_data=msg).convert_to_message().text == '{"a": 1}'
    assert TypeConverterComponent.build(input_data=msg, output_type="JSON").convert_to_data().data == {
        "text": '{"a": 1}'
    }
    assert TypeConverterComponent.build(input_data=msg, auto_parse=True).convert_to_data().data == {"a": 1}
    assert TypeConverterComponent.build(
        input_data=Message(text="a,b\n1,2"), auto_parse=True
    ).convert_to_dataframe().rows == [{"a": "1", "b": "2"}]
    assert TypeConverterComponent.build(
        input_data=Data({"rows": [{"x": 1}, {"x": 2}]})
    ).convert_to_dataframe().rows == [{"x": 1}, {"x": 2}]
    assert TypeConverterComponent.build(input_data=DataFrame([{"x": 1}])).convert_to_data().data == {
        "results": [{"x": 1}]
    }
    assert TypeConverterComponent.build(input_data=Data({"text": "hi"})).convert_to_message().text == "hi"
    assert TypeConverterComponent.build(output_type="Table").active_outputs() == ["dataframe_output"]
    with pytest.raises(ValueError):
        TypeConverterComponent.build(output_type="Banana").active_outputs()


def test_parser_modes():
    frame = DataFrame([{"n": "Ada", "a": 36}, {"n": "Bob", "a": 40}])
    assert (
        ParserComponent.build(input_data=frame, pattern="{n} is {a}").parse_combined_text().text
        == "Ada is 36\nBob is 40"
    )
    with pytest.raises(ValueError, match="not found"):
        ParserComponent.build(input_data=frame, pattern="{missing}").parse_combined_text()
    data = Data({"text": "hello"}, default_value="?")
    assert (
        ParserComponent.build(input_data=data, pattern="Text: {text} / {other}").parse_combined_text().text
        == "Text: hello / ?"
    )
    assert (
        ParserComponent.build(input_data=data, pattern="{{literal}} {text}").parse_combined_text().text
        == "{literal} hello"
    )
    # attribute access is not a template feature
    assert ParserComponent.build(input_data=data, pattern="{text.__class__}").parse_combined_text().text == "?"
    assert (
        ParserComponent.build(input_data=data, mode="Stringify").parse_combined_text().text
        == '```json\n{\n  "text": "hello"\n}\n```'
    )
    assert "| n | a |" in ParserComponent.build(input_data=frame, mode="Stringify").parse_combined_text().text
    with pytest.raises(ValueError, match="Invalid mode"):
        ParserComponent.build(input_data=data, mode="Weird").parse_combined_text()


def test_prompt_template_variables_become_inputs_in_a_flow():
    p = node("Prompt Template", "Prompt-1", template="Hi {name}, you are {age}. {{x}}")
    p["data"]["node"]["template"]["name"] = {
        "name": "name",
        "type": "str",
        "show": True,
        "value": "",
        "input_types": ["Message"],
    }
    p["data"]["node"]["template"]["age"] = {
        "name": "age",
        "type": "str",
        "show": True,
        "value": "36",
        "input_types": ["Message"],
    }
    src = node("TextInput", "TextInput-1", input_value="Ada")
    out = node("ChatOutput", "ChatOutput-1")
    data = flow([src, p, out], [edge(src, "text", p, "name"), edge(p, "prompt", out, "input_value")])
    assert run_flow(data, standard_registry(), RunContext()).answer() == "Hi Ada, you are 36. {x}"
    assert PromptComponent.variables("{a} {b} {a} {{c}}") == ["a", "b"]
    assert PromptComponent.build(template="{{a}}!", use_double_brackets=True, a="x").build_prompt().text == "x!"


def test_prompt_legacy_alias():
    assert standard_registry().get("Prompt") is PromptComponent


def test_combine_split_regex():
    assert CombineText.build(text1="a", text2="b", delimiter="-").combine_texts().text == "a-b"
    chunks = SplitText.build(data_inputs=Message(text="aaaa\nbbbb\ncccc"), chunk_size=9, chunk_overlap=0).split_text()
    assert [r["text"] for r in chunks.rows] == ["aaaa\nbbbb", "cccc"]
    overlap = split_into_chunks("a b c d e f", chunk_size=5, chunk_overlap=2, separator=" ", keep_separator="False")
    assert overlap == ["a b c", "c d e", "e f"]
    with pytest.raises(ValueError):
        split_into_chunks("x", chunk_size=5, chunk_overlap=5, separator=" ", keep_separator="False")
    with pytest.raises(ValueError, match="Key 'body'"):
        SplitText.build(data_inputs=Data({"text": "x"}), text_key="body").split_text()
    r = RegexExtractorComponent.build(input_text="a1 b2", pattern=r"\d")
    assert [d.data for d in r.extract_matches()] == [{"match": "1"}, {"match": "2"}]
    assert r.get_matches_text().text == "1\n2"
    with pytest.raises(ValueError):
        RegexExtractorComponent.build(input_text="x", pattern="(").get_matches_text()


def test_create_data_and_to_dataframe():
    d = CreateData.build(number_of_fields=2, field_1_key={"a": 1}, field_2_key={"b": "x"}, text_key="b").build_data()
    assert d.data == {"a": 1, "b": "x"} and d.get_text() == "x"
    with pytest.raises(ValueError):
        CreateData.build(number_of_fields=2, field_1_key={"a": 1}, text_key="zz", text_key_validator=True).build_data()
    frame = DataToDataFrame.build(data_list=[Data({"a": 1}), Data({"b": 2})]).build_dataframe()
    assert frame.columns == ["a", "b"] and len(frame) == 2


def test_router_operators():
    assert evaluate_condition("Hello", "hello", "equals", case_sensitive=False)
    assert not evaluate_condition("Hello", "hello", "equals", case_sensitive=True)
    assert evaluate_condition("abc", "b", "contains", case_sensitive=True)
    assert evaluate_condition("abc", "^a.c$", "regex", case_sensitive=True)
    assert not evaluate_condition("abc", "(", "regex", case_sensitive=True)
    assert evaluate_condition("10", "9", "greater than", case_sensitive=True)
    assert evaluate_condition("9", "9", "less than or equal", case_sensitive=True)
    assert not evaluate_condition("x", "9", "less than", case_sensitive=True)
    with pytest.raises(ValueError):
        evaluate_condition("a", "b", "similar", case_sensitive=True)
    r = ConditionalRouter.build(input_text="go", match_text="go", true_case_message="yes!")
    assert r.true_response().text == "yes!" and r.stopped_outputs == {"false_result"}


def test_loop_items_and_pass():
    assert [d.data for d in LoopComponent.build(data=DataFrame([{"a": 1}, {"a": 2}])).loop_items()] == [
        {"a": 1},
        {"a": 2},
    ]
    assert LoopComponent.build(data=None).loop_items() == []
    assert LoopComponent.build().loop_done([Message(text="x"), Data({"y": 1})]).rows == [{"text": "x"}, {"y": 1}]
    assert Pass.build(input_message=Message(text="m")).pass_message().text == "m"


def test_calculator_is_safe():
    assert safe_arithmetic("4*4*(33/22)+12-20") == 16.0
    assert CalculatorComponent.build(expression="2**10").evaluate_expression().data == {"result": "1024"}
    assert CalculatorComponent.build(expression="1/0").evaluate_expression().data["error"] == "Error: Division by zero"
    for bad in ("__import__('os')", "a + 1", "[1][0]", "(1).real", "9**99999", "lambda: 1"):
        out = CalculatorComponent.build(expression=bad).evaluate_expression().data
        assert "error" in out, bad


def test_current_date_and_id():
    text = CurrentDate.build(timezone="UTC").get_current_date().text
    assert text.startswith("Current date and time in UTC: ")
    with pytest.raises(ValueError):
        CurrentDate.build(timezone="Mars/Base").get_current_date()
    assert "Europe/Paris" in CurrentDate.to_frontend_node()["template"]["timezone"]["options"]
    assert IDGenerator.build(unique_id="fixed").generate_id().text == "fixed"
    assert len(IDGenerator.build().generate_id().text) == 36


def test_message_history_retrieve_and_store():
    history = [
        {"text": "hi", "sender": "User", "sender_name": "User", "session_id": "s"},
        {"text": "hello", "sender": "Machine", "sender_name": "AI", "session_id": "s"},
    ]
    asked = []

    def get_messages(session_id, flow_id, n, order):
        asked.append((session_id, flow_id, n, order))
        return history

    ctx = RunContext(session_id="s", flow_id="f", get_messages=get_messages)
    mem = MemoryComponent(
        {
            "n_messages": 100,
            "order": "Descending",
            "template": "{sender_name}: {text}",
            "mode": "Retrieve",
            "sender_type": "Machine and User",
        },
        context=ctx,
    )
    assert mem.retrieve_messages_as_text().text == "User: hi\nAI: hello"
    assert asked == [("s", "f", 100, "DESC")]
    only_ai = MemoryComponent({"sender_type": "Machine", "template": "{text}", "n_messages": 100}, context=ctx)
    assert only_ai.retrieve_messages_as_text().text == "hello"
    assert only_ai.retrieve_messages_dataframe().columns[:3] == ["text", "sender", "sender_name"]
    stored = []
    log = EventLog()
    store = MemoryComponent(
        {"mode": "Store", "message": "remember me", "n_messages": 1},
        context=RunContext(session_id="s", store_message=stored.append, emit=log),
    )
    assert store.retrieve_messages_as_text().text.endswith("remember me")
    assert stored[0]["text"] == "remember me" and log.names == ["add_message"]


def test_csv_and_json_loading():
    rows = CSVtoData.build(csv_string="a,b\n1,2\n3,4").load_csv_to_data()
    assert [r.data for r in rows] == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}]
    assert JSONtoData.build(json_string='{"x": 1}').convert_json_to_data().data == {"x": 1}
    assert [d.data for d in JSONtoData.build(json_string='[{"x": 1}, 2]').convert_json_to_data()] == [
        {"x": 1},
        {"value": 2},
    ]
    with pytest.raises(ValueError, match="Invalid JSON"):
        JSONtoData.build(json_string="{nope").convert_json_to_data()
    with pytest.raises(Exception, match="not available"):
        CSVtoData.build(csv_path="/etc/passwd").load_csv_to_data()
    reader = CSVtoData({"csv_path": "user/file.csv"}, context=RunContext(read_file=lambda p: b"q\n1\n"))
    assert [r.data for r in reader.load_csv_to_data()] == [{"q": "1"}]


def test_parse_curl():
    parsed = parse_curl("curl -X PUT -H 'A: 1' --data '{\"k\": 2}' https://example.com/x")
    assert parsed == {"method": "PUT", "url": "https://example.com/x", "headers": {"A": "1"}, "body": '{"k": 2}'}
    assert parse_curl("curl -d x https://e.com")["method"] == "POST"
    with pytest.raises(ValueError):
        parse_curl("wget https://e.com")


def test_every_component_serialises_to_a_frontend_node():
    reg = standard_registry()
    for key in reg.keys():  # noqa: SIM118 - Registry.keys() is a method, not a dict view
        klass = reg[key]
        fnode = klass.to_frontend_node("fr")
        json.dumps(fnode)
        assert "code" not in fnode["template"]
        assert fnode["template"]["_type"] == "Component"
        assert set(fnode["field_order"]) <= set(fnode["template"])
        assert {"en", "fr", "de"} <= set(klass.display_names), key
        assert fnode["display_name"] == klass.display_names["fr"]
