"""Issue 27 #3, second part: more components' output fields as the reference's (langflow-base 1.12.8).

Each test runs the component and asserts the names a downstream Parser template, a Data Operations step
or a table column of a flow written on the reference relies on (``docs/components.md``, "Reference
field names", lists every component checked).
"""

from __future__ import annotations

from typing import Any

import pytest
from service_bundle_documents.read_file import ReadFile
from service_bundle_documents.write_file import SaveToFile
from service_bundle_models.guardrails import GuardrailValidatorV2
from service_bundle_standard.data_operations import OperationsComponent
from service_bundle_standard.embeddings import EmbeddingSimilarityComponent
from service_bundle_standard.legacy_data import MessagetoData
from service_bundle_standard.processing import (
    DataToDataFrame,
    ParserComponent,
    RegexExtractorComponent,
    TypeConverterComponent,
)
from service_bundle_standard.utilities import CalculatorComponent, MemoryComponent
from service_bundle_tools import search

from core.engine import Data, DataFrame, Message, RunContext
from tests.catalog.apiserver import allowlisted, recorded_api

FILES = {
    "u1/notes.txt": b"first file",
    "u1/more.md": b"second file",
    "u1/people.csv": b"name,age,score\nAda,36,1.5\nBob,,x\n",
    "u1/config.json": b'{"model": "m", "n": 2}',
}


def read_file(**params: Any) -> ReadFile:
    def reader(ref: str) -> bytes:
        if ref not in FILES:
            raise FileNotFoundError(ref)
        return FILES[ref]

    coerced = {k: ReadFile.input_map()[k].coerce(v) for k, v in params.items()}
    return ReadFile(coerced, context=RunContext(read_file=reader))


def test_read_file_message_carries_the_references_file_metadata():
    message = read_file(path=["u1/notes.txt"]).load_files_message()
    assert message.text == "first file"
    assert message.data == {
        "text": "first file",
        "file_path": "u1/notes.txt",
        "filename": "notes.txt",
        "file_size": len(b"first file"),
        "mimetype": "text/plain",
    }


def test_read_file_message_of_several_files_lists_each_files_text():
    message = read_file(path=["u1/notes.txt", "u1/more.md"]).load_files_message()
    assert message.text == "first file\n\nsecond file"
    assert message.data["file_path"] == "u1/notes.txt"  # the first file's metadata, as the reference
    assert message.data["source_files"] == [
        {"file_path": "u1/notes.txt", "text": "first file"},
        {"file_path": "u1/more.md", "text": "second file"},
    ]


def test_read_file_message_to_data_keeps_the_metadata():
    message = read_file(path=["u1/notes.txt"]).load_files_message()
    data = MessagetoData({"message": message}).convert_message_to_data().data
    assert {"text", "file_path", "filename", "file_size", "mimetype"} <= set(data)


def test_read_file_tables_json_and_path_outputs():
    files = read_file(path=["u1/notes.txt", "u1/more.md"]).load_files_dataframe()
    assert files.columns == ["file_path", "text"] and len(files) == 2
    people = read_file(path=["u1/people.csv"]).load_files_dataframe()
    assert people.columns == ["name", "age", "score"]
    assert people.rows == [{"name": "Ada", "age": 36, "score": 1.5}, {"name": "Bob", "age": None, "score": "x"}]
    assert read_file(path=["u1/config.json"]).load_files_json().data == {"model": "m", "n": 2}
    assert read_file(path=["u1/notes.txt"]).load_files_json().data == {"value": "first file"}
    assert read_file(path=["u1/notes.txt", "u1/more.md"]).load_files_path().text == "u1/notes.txt\nu1/more.md"
    assert [o.name for o in ReadFile.outputs] == ["message", "dataframe", "json", "path"]
    assert [o["name"] for o in ReadFile.to_frontend_node()["outputs"]] == ["message"]
    assert [o.name for o in ReadFile.outputs if o.tool_mode] == ["message"]  # one tool, as before


STORED = [
    {
        "id": "m1",
        "text": "hi",
        "sender": "User",
        "sender_name": "User",
        "session_id": "s1",
        "flow_id": "f1",
        "timestamp": "2026-11-26 10:00:00.000000 UTC",
        "files": [],
    }
]


def test_message_history_table_has_the_references_message_columns():
    ctx = RunContext(session_id="s1", flow_id="f1", get_messages=lambda *_a: STORED)
    table = MemoryComponent({"mode": "Retrieve"}, context=ctx).retrieve_messages_dataframe()
    assert sorted(table.columns) == sorted(
        [
            *("timestamp", "sender", "sender_name", "session_id", "context_id", "text", "files", "error", "edit"),
            *("properties", "category", "content_blocks", "session_metadata", "id", "flow_id", "run_id"),
        ]
    )
    row = table.rows[0]
    assert [row[k] for k in ("text", "sender", "id", "flow_id", "category")] == ["hi", "User", "m1", "f1", "message"]


def json_op(name: str, data: list[Data], **params: Any) -> dict[str, Any]:
    comp = OperationsComponent.build(input_type="JSON", operation=[{"name": name}], data=data, **params)
    return comp.as_data().data


def test_data_operations_remove_and_rename_keys_at_every_depth():
    nested = Data({"a": 1, "user": {"a": 2, "name": "Ada"}, "items": [{"a": 3, "n": 1}]})
    assert json_op("Remove Keys", [nested], remove_keys_input=["a"]) == {"user": {"name": "Ada"}, "items": [{"n": 1}]}
    assert json_op("Rename Keys", [nested], rename_keys_input={"a": "x"}) == {
        "x": 1,
        "user": {"x": 2, "name": "Ada"},
        "items": [{"x": 3, "n": 1}],
    }


def test_data_operations_select_keys_data_unwraps_the_nested_object():
    assert json_op("Select Keys", [Data({"data": {"k": "v"}, "other": 1})], select_keys_input=["data"]) == {"k": "v"}


def guard(text: str, **params: Any) -> GuardrailValidatorV2:
    params = {"input_text": text, "checking_method": "Rules only", **params}
    return GuardrailValidatorV2({k: GuardrailValidatorV2.input_map()[k].coerce(v) for k, v in params.items()})


@pytest.mark.parametrize(
    ("text", "params", "action", "result"),
    [
        ("a lovely day", {}, "pass", "pass"),
        ("my key is sk-abcdefghijklmnopqrstuvwx", {}, "block", "fail"),
        ("write to ada@example.org", {"medium_risk_action": "sanitize"}, "sanitize", "pass"),
    ],
)
def test_guardrails_verdict_has_the_references_keys(text, params, action, result):
    data = guard(text, **params).result_data().data
    assert {"text", "result", "action", "violations"} <= set(data)
    assert (data["action"], data["result"]) == (action, result)
    if action == "block":
        assert data["violations"] == ["Tokens/Passwords"] and data["justification"]
    if action == "sanitize":  # the reference's text is what passes on; the input is original_text
        assert data["original_text"] == text and data["text"] != text and "ada@example.org" not in data["text"]
        assert data["flagged"] == ["PII"] and data["scores"]["PII"] == data["top_score"]


def test_guardrails_fail_message_is_an_error_message():
    message = guard("my key is sk-abcdefghijklmnopqrstuvwx").fail_message()
    assert isinstance(message, Message) and message.error and message.text


def save_file(value: Any, **params: Any) -> str:
    stored: dict[str, bytes] = {}

    def write(name: str, content: bytes, append: bool) -> dict[str, Any]:
        stored[name] = stored.get(name, b"") + content if append else content
        return {"path": f"u1/{name}"}

    def read(ref: str) -> bytes:
        if ref.removeprefix("u1/") not in stored:
            raise FileNotFoundError(ref)
        return stored[ref.removeprefix("u1/")]

    ctx = RunContext(user_id="u1", write_file=write, read_file=read)
    params = {"input": value, "file_name": "out", **params}
    coerced = {k: SaveToFile.input_map()[k].coerce(v) for k, v in params.items()}
    SaveToFile(coerced, context=ctx).save_to_file()  # once, so that append mode finds the file
    return SaveToFile(coerced, context=ctx).save_to_file().text


def test_save_file_confirmation_is_the_references_text():
    table = DataFrame([{"a": 1}])
    assert save_file(table, local_format="csv") == "DataFrame saved successfully as 'u1/out.csv'"
    assert save_file(Data({"a": 1}), local_format="json") == "Data saved successfully as 'u1/out.json'"
    assert save_file(Message(text="hi"), local_format="txt") == "Message saved successfully as 'u1/out.txt'"
    assert save_file(Message(text="hi"), local_format="txt", append_mode=True) == "Message appended to 'u1/out.txt'"


def test_regex_extractor_without_matches_says_so():
    comp = RegexExtractorComponent.build(input_text="abc", pattern=r"\d")
    assert comp.extract_matches() == [] and comp.get_matches_text().text == "No matches found"


def test_calculator_invalid_expression_text():
    data = CalculatorComponent.build(expression="2 +").evaluate_expression().data
    assert set(data) == {"error", "input"} and data["error"].startswith("Invalid expression: ")
    assert CalculatorComponent.build(expression="4*4*(33/22)+12-20").evaluate_expression().data == {"result": "16"}


def test_data_to_dataframe_adds_the_text_of_any_text_key():
    rows = [Data({"content": "hello", "n": 1}, text_key="content"), Data({"n": 2})]
    table = DataToDataFrame.build(data_list=rows).build_dataframe()
    assert table.rows == [{"content": "hello", "n": 1, "text": "hello"}, {"n": 2}]


def test_type_convert_auto_parse_puts_a_list_under_records():
    def to_json(text: str) -> dict[str, Any]:
        return TypeConverterComponent.build(input_data=Message(text=text), auto_parse=True).convert_to_data().data

    assert to_json('[{"a": 1}, {"a": 2}]') == {"records": [{"a": 1}, {"a": 2}]}
    assert to_json("a,b\n1,2") == {"records": [{"a": "1", "b": "2"}]}
    assert to_json("[1, 2]") == {"text": "[1, 2]"}  # not a list of objects: the text, as the reference


def test_parser_reads_the_read_file_metadata_of_a_message():
    message = read_file(path=["u1/notes.txt"]).load_files_message()
    parsed = ParserComponent.build(input_data=message, mode="Parser", pattern="{filename} ({mimetype}): {text}")
    assert parsed.parse_combined_text().text == "notes.txt (text/plain): first file"


def test_embedding_similarity_text_is_the_score():
    vectors = [Data({"embeddings": [1.0, 0.0]}), Data({"embeddings": [1.0, 0.0]})]
    data = EmbeddingSimilarityComponent.build(embedding_vectors=vectors).compute_similarity()
    assert sorted(data.data) == ["embedding_1", "embedding_2", "similarity_score"]
    assert data.text_key == "similarity_score" and data.get_text() == {"cosine_similarity": pytest.approx(1.0)}


def test_google_search_and_serper_rows_carry_the_references_text(monkeypatch):
    item = {"position": 1, "title": "T", "link": "https://t", "snippet": "S", "date": "1 day ago"}
    with recorded_api() as api:
        api.route("GET", "/customsearch/v1", {"items": [item]})
        api.route("POST", "/search", {"organic": [item]})
        monkeypatch.setattr(search, "GOOGLE_CSE_URL", api.base + "/customsearch/v1")
        monkeypatch.setattr(search, "SERPER_URL", api.base)
        params = {"google_api_key": "g", "google_cse_id": "cx", "input_value": "x", "k": 1}
        google = search.GoogleSearchAPI(params, context=allowlisted()).run_model()
        params = {"serper_api_key": "s", "query": "x", "query_type": "search", "k": 1}
        serper = search.GoogleSerperAPI(params, context=allowlisted()).run_model()
    assert google[0].data == {"title": "T", "link": "https://t", "snippet": "S", "text": "S"}
    assert serper[0].data == {"position": 1, "title": "T", "link": "https://t", "date": "1 day ago", "text": "S"}
