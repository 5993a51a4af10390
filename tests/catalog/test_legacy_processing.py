"""The legacy processing helpers of the standard bundle: ordinary, empty and bad inputs."""

from __future__ import annotations

import json

import pytest
from service_bundle_standard.legacy_data import (
    AlterMetadata,
    CreateList,
    DynamicCreateData,
    ExtractaKey,
    FilterData,
    FilterDataValues,
    MergeDataComponent,
    MessagetoData,
    SelectData,
    UpdateData,
)
from service_bundle_standard.legacy_parsing import (
    CSV_FORMAT_INSTRUCTIONS,
    JSONCleaner,
    OutputParser,
    ParseData,
    ParseDataFrame,
    ParseJSONData,
    StoreMessage,
)

from core.engine import ComponentError, Data, DataFrame, Message, RunContext


def test_alter_metadata():
    out = AlterMetadata.build(
        input_value=[Message(text="hi"), Data({"text": "x", "drop": 1})],
        text_in="typed",
        metadata={"source": "test", " ": "blank key ignored"},
        remove_fields=["drop"],
    ).process_output()
    # the reference lists the typed text's row first (the earlier assertion pinned it last)
    assert [d.data for d in out] == [
        {"text": "typed", "source": "test"},
        {"text": "hi", "source": "test"},
        {"text": "x", "source": "test"},
    ]
    assert AlterMetadata.build(metadata={"a": 1}).process_output() == []
    assert AlterMetadata.build(metadata=[{"key": "k", "value": "v"}], text_in="t").as_dataframe().rows == [
        {"text": "t", "k": "v"}
    ]
    with pytest.raises(ValueError, match="Invalid JSON object"):
        AlterMetadata.build(metadata="{not json", text_in="t").process_output()


def test_create_list():
    assert [d.data for d in CreateList.build(texts=["a", "b"]).create_list()] == [{"text": "a"}, {"text": "b"}]
    assert CreateList.build().create_list() == []
    assert CreateList.build(texts=["a"]).as_dataframe().rows == [{"text": "a"}]


def test_extract_key():
    c = ExtractaKey.build(data_input=Data({"a": 1, "b": 2}), key="a")
    assert c.extract_key().data == {"a": 1}
    assert ExtractaKey.build(data_input=[Data({"a": 1}), Data({"b": 2})], key="a").extract_key()[0].data == {"a": 1}
    assert ExtractaKey.build(data_input=Data({"b": 2}), key="a").extract_key().data == {
        "error": "Key 'a' not found in JSON object."
    }
    assert "error" in ExtractaKey.build(key="a").extract_key().data
    assert ExtractaKey.key == "ExtractaKey"  # the field does not shadow the registry key


def test_filter_data_and_values():
    assert FilterData.build(data=Data({"a": 1, "b": 2}), filter_criteria=["a", "z"]).filter_data().data == {"a": 1}
    assert FilterData.build().filter_data().data == {}
    with pytest.raises(ValueError, match="one JSON object"):
        FilterData.build(data=[Data({"a": 1}), Data({"a": 2})], filter_criteria=["a"]).filter_data()
    items = [Data({"route": "CMIP6"}), Data({"route": "other"}), Data({"x": 1})]
    assert len(FilterDataValues.build(input_data=items, filter_value="CMIP", operator="starts with").filter_data()) == 1
    assert len(FilterDataValues.build(input_data=items, filter_value="CMIP6").filter_data()) == 1
    assert len(FilterDataValues.build(input_data=items, filter_value="CMIP6", operator="not equals").filter_data()) == 1
    assert FilterDataValues.build().filter_data() == []
    with pytest.raises(ValueError, match="Invalid operator"):
        FilterDataValues.build(input_data=items, operator="regex").filter_data()


@pytest.mark.parametrize(
    ("operation", "rows"),
    [
        ("Concatenate", [{"a": "x\ny", "n": 2}]),
        ("Append", [{"a": "x", "n": 1}, {"a": "y", "n": 2}]),
        ("Merge", [{"a": ["x", "y"], "n": 2}]),
        ("Join", [{"a": "x", "n": 1, "a_doc2": "y", "n_doc2": 2}]),
    ],
)
def test_combine_data(operation, rows):
    items = [Data({"a": "x", "n": 1}), Data({"a": "y", "n": 2})]
    assert MergeDataComponent.build(data_inputs=items, operation=operation).combine_data().rows == rows


def test_combine_data_empty_and_bad():
    assert MergeDataComponent.build(data_inputs=[Data({"a": 1})]).combine_data().rows == []
    with pytest.raises(ValueError, match="Invalid operation"):
        MergeDataComponent.build(data_inputs=[Data({}), Data({})], operation="Zip").combine_data()


def test_message_to_data_and_select():
    data = MessagetoData.build(message=Message(text="hi", sender="User")).convert_message_to_data()
    assert data.data["text"] == "hi" and data.data["sender"] == "User"
    assert MessagetoData.build(message="plain").convert_message_to_data().data["text"] == "plain"
    assert "error" in MessagetoData(params={"message": 42}).convert_message_to_data().data
    items = [Data({"i": 0}), Data({"i": 1})]
    assert SelectData.build(data_list=items, data_index=1).select_data().data == {"i": 1}
    with pytest.raises(ValueError, match="out of range"):
        SelectData.build(data_list=items, data_index=2).select_data()
    with pytest.raises(ValueError, match="out of range"):
        SelectData.build().select_data()


def test_update_data():
    c = UpdateData.build(old_data=[Data({"a": 1})], number_of_fields=1, field_1_key={"b": 2}, text_key="b")
    out = c.build_data()
    assert out.data == {"a": 1, "b": 2} and out.text_key == "b"
    many = UpdateData.build(old_data=[Data({"a": 1}), Data({"a": 2})], field_1_key=[{"key": "z", "value": 0}])
    assert [d.data for d in many.build_data()] == [{"a": 1, "z": 0}, {"a": 2, "z": 0}]
    with pytest.raises(ValueError, match="No JSON"):
        UpdateData.build().build_data()
    with pytest.raises(ValueError, match="between 0 and 15"):
        UpdateData.build(old_data=[Data({})], number_of_fields=16).build_data()
    with pytest.raises(ValueError, match="not found"):
        UpdateData.build(old_data=[Data({})], text_key="q", text_key_validator=True).build_data()


def test_dynamic_create_data():
    fields = [
        {"field_name": "name", "field_type": "Text"},
        {"field_name": "age", "field_type": "Number"},
        {"field_name": "ok", "field_type": "Boolean"},
        {"field_name": "doc", "field_type": "Data"},
    ]
    c = DynamicCreateData.build(
        form_fields=fields,
        dynamic_name=Message(text="Ada"),
        dynamic_age="36",
        dynamic_ok="true",
        dynamic_doc=Data({"k": 1}),
    )
    assert c.process_form().data == {"name": "Ada", "age": 36, "ok": True, "doc": {"k": 1}}
    # the reference's "Form Data" block (the earlier assertions pinned ``name: value`` lines and an empty text)
    assert c.get_message().text.splitlines() == [
        "📋 Form Data:",
        "=" * 40,
        "• name: Ada",
        "• age: 36",
        "• ok: True",
        "• doc: {'k': 1}",
        "=" * 40,
        "Total fields: 4",
    ]
    assert DynamicCreateData.build().process_form().data == {}
    assert DynamicCreateData.build().get_message().text == "No form data available"
    assert DynamicCreateData.build(include_metadata=True).get_message().text == "No form data available"
    with pytest.raises(ValueError, match="expects a number"):
        DynamicCreateData.build(form_fields=fields[1:2], dynamic_age="old").process_form()
    with pytest.raises(ValueError, match="Invalid field type"):
        DynamicCreateData.build(form_fields=[{"field_name": "x", "field_type": "Blob"}]).process_form()


def test_json_cleaner():
    out = JSONCleaner.build(json_str='Here: {"a": 1, "b": [1, 2,], } thanks').clean_json().text
    assert json.loads(out) == {"a": 1, "b": [1, 2]}
    assert json.loads(JSONCleaner.build(json_str='{"a": "x\x01y"}', remove_control_chars=True).clean_json().text) == {
        "a": "xy"
    }
    with pytest.raises(ValueError, match="Missing"):
        JSONCleaner.build(json_str="").clean_json()
    with pytest.raises(ValueError, match="Invalid JSON string"):
        JSONCleaner.build(json_str="{'a': }", validate_json=True).clean_json()


def test_output_parser():
    assert OutputParser.build().format_instructions().text == CSV_FORMAT_INSTRUCTIONS
    assert OutputParser.build().build_parser().parse("a, b ,c") == ["a", "b", "c"]
    with pytest.raises(ValueError, match="Unsupported"):
        OutputParser.build(parser_type="XML").format_instructions()


def test_parse_data_and_dataframe():
    items = [Data({"text": "a", "n": 1}), Data({"text": "b", "n": 2})]
    assert ParseData.build(data=items, template="{text}-{n}").parse_data().text == "a-1\nb-2"
    assert [d.get_text() for d in ParseData.build(data=items, template="<{n}>").parse_data_as_list()] == ["<1>", "<2>"]
    assert ParseData.build(data=[], template="{text}").parse_data().text == ""
    with pytest.raises(ValueError, match="not found"):
        ParseData.build(data=items, template="{missing}").parse_data()
    frame = DataFrame([{"x": 1, "y": "a"}, {"x": 2, "y": "b"}])
    assert ParseDataFrame.build(df=frame, template="{x}:{y}", sep=", ").parse_data().text == "1:a, 2:b"
    assert ParseDataFrame.build().parse_data().text == ""
    with pytest.raises(ValueError, match="not found"):
        ParseDataFrame.build(df=frame, template="{z}").parse_data()


def test_parse_json():
    msg = Message(text='{"items": [{"id": 1}, {"id": 2}]}')
    assert [d.data for d in ParseJSONData.build(input_value=msg, query=".items[]").filter_data()] == [
        {"id": 1},
        {"id": 2},
    ]
    assert [d.data for d in ParseJSONData.build(input_value=Data({"a": 5}), query=".a").filter_data()] == [
        {"text": "5"}
    ]
    assert ParseJSONData.build(input_value=Message(text="{'a': 1,}"), query=".a").filter_data()[0].data == {"text": "1"}
    assert ParseJSONData.build(query=".").filter_data() == []
    with pytest.raises(ValueError):
        ParseJSONData.build(input_value=msg, query=".[").filter_data()


def test_store_message():
    stored: list[dict] = []
    ctx = RunContext(flow_id="f", session_id="s", store_message=lambda m: (stored.append(m), {**m, "id": "m1"})[1])
    c = StoreMessage({"message": Message(text="hello")}, context=ctx)
    out = c.store_message()
    assert out.text == "hello" and out.id == "m1" and out.session_id == "s" and out.sender == "Machine"
    assert stored[0]["text"] == "hello"
    with pytest.raises(ValueError, match="No message"):
        StoreMessage.build().store_message()
    with pytest.raises(ComponentError, match="External memories"):
        StoreMessage.build(message="x", memory=object()).store_message()


@pytest.mark.parametrize(
    ("metric", "key", "value"),
    [
        ("Cosine Similarity", "cosine_similarity", 0.0),
        ("Euclidean Distance", "euclidean_distance", 2**0.5),
        ("Manhattan Distance", "manhattan_distance", 2.0),
    ],
)
def test_embedding_similarity(metric, key, value):
    from service_bundle_standard.embeddings import EmbeddingSimilarityComponent

    vectors = [Data({"text": "a", "embeddings": [1, 0]}), Data({"text": "b", "embeddings": [0, 1]})]
    out = EmbeddingSimilarityComponent.build(embedding_vectors=vectors, similarity_metric=metric).compute_similarity()
    assert out.data["similarity_score"][key] == pytest.approx(value)
    assert out.data["embedding_1"] == [1.0, 0.0]


def test_embedding_similarity_bad_inputs():
    from service_bundle_standard.embeddings import EmbeddingSimilarityComponent as Sim

    same = [Data({"embeddings": [1, 2]}), Data({"embeddings": [2, 4]})]
    assert Sim.build(embedding_vectors=same).compute_similarity().data["similarity_score"]["cosine_similarity"] == (
        pytest.approx(1.0)
    )
    mismatch = [Data({"embeddings": [1, 2]}), Data({"embeddings": [1, 2, 3]})]
    assert Sim.build(embedding_vectors=mismatch).compute_similarity().data["similarity_score"] == {
        "error": "Embeddings must have the same dimensions."
    }
    with pytest.raises(ValueError, match="Exactly two"):
        Sim.build(embedding_vectors=[]).compute_similarity()
    with pytest.raises(ValueError, match="no 'embeddings'"):
        Sim.build(embedding_vectors=[Data({}), Data({"embeddings": [1]})]).compute_similarity()
    with pytest.raises(ValueError, match="must be numbers"):
        Sim.build(embedding_vectors=[Data({"embeddings": ["x"]}), Data({"embeddings": [1]})]).compute_similarity()
    with pytest.raises(ValueError, match="zero vector"):
        Sim.build(embedding_vectors=[Data({"embeddings": [0]}), Data({"embeddings": [1]})]).compute_similarity()
    with pytest.raises(ValueError, match="Invalid similarity metric"):
        Sim.build(embedding_vectors=same, similarity_metric="Jaccard").compute_similarity()
