"""The reference's legacy node types resolve (issue 27 #2): its explicit legacy table (``parser``, ``Prompt``)
and the names it derives from each component (display name, the key without its ``Component`` suffix),
through the registry, on upload and on run."""

from __future__ import annotations

import pytest

from core.engine import Component, Message, Output, Registry, RunContext, run_flow
from core.engine.inputs import MessageTextInput
from tests.flowkit import edge, flow, node, standard_registry


@pytest.mark.parametrize(
    ("legacy", "key"),
    [
        ("parser", "ParserComponent"),  # the reference's explicit legacy table
        ("Prompt", "Prompt Template"),
        ("URL", "URLComponent"),  # display name (0.10 starters type the URL node so)
        ("Parser", "ParserComponent"),  # key without "Component"
        ("Data Operations", "Operations"),
    ],
)
def test_legacy_types_resolve(legacy, key):
    assert standard_registry()[legacy].key == key


def _cls(key: str, name: str) -> type[Component]:
    class C(Component):
        inputs = [MessageTextInput("input_value", "In", "")]
        outputs = [Output("out", "Out", "go", ["Message"])]

        def go(self) -> Message:
            return Message(text=key)

    C.key, C.display_name = key, name
    return C


def test_derived_aliases_never_shadow_keys_nor_guess_between_two():
    a, b, c = _cls("SameComponent", "Twin"), _cls("Other", "Twin"), _cls("Same", "Solo")
    reg = Registry.from_classes([a, b, c])
    assert reg["Same"] is c  # a key wins over another component's derived alias
    assert "Twin" not in reg  # two components share the display name: no guess
    assert reg["Solo"] is c


def test_a_flow_with_a_legacy_parser_node_runs():
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    to_data = node("MessagetoData", "MessagetoData-DDDDD")
    parser = node("ParserComponent", "parser-BBBBB", pattern="Text: {text}", mode="Parser")
    parser["data"]["type"] = "parser"
    out = node("ChatOutput", "ChatOutput-CCCCC")
    edges = [
        edge(chat_in, "message", to_data, "message"),
        edge(to_data, "data", parser, "input_data"),
        edge(parser, "parsed_text", out, "input_value"),
    ]
    result = run_flow(
        flow([chat_in, to_data, parser, out], edges), standard_registry(), RunContext(flow_id="f"), input_value="hello"
    )
    assert result.status == "completed", result.error
    assert result.results["ChatOutput-CCCCC"].outputs["message"].text == "Text: hello"
