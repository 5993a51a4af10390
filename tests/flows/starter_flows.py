"""The source of the starter flows (``plugins/flows/service_flows/examples/*.json``).

Every node is the catalog's own frontend node (``to_frontend_node`` of a bundle's component), as the
editor saves it, so a starter can only use components that exist. Regenerate the files after a
component's fields change with ``python -m tests.flows.starter_flows``;
``tests/flows/test_starters.py`` fails when a committed file differs from what this module builds.

LLM starters use the Language Model / Agent with the ``OpenAI Compatible`` provider: its endpoint and
key come from the global variables ``OPENAI_COMPATIBLE_BASE_URL`` and ``OPENAI_COMPATIBLE_API_KEY``
(for OpenAI itself: ``https://api.openai.com/v1`` and an OpenAI key).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from service_bundle_data import bundle as data_bundle
from service_bundle_documents import bundle as documents_bundle
from service_bundle_mcp import bundle as mcp_bundle
from service_bundle_models import bundle as models_bundle
from service_bundle_standard import bundle as standard_bundle

from core.engine import Registry
from tests import flowkit

EXAMPLES = Path(__file__).resolve().parents[2] / "plugins" / "flows" / "service_flows" / "examples"
MODEL = [
    {
        "name": "gpt-4o-mini",
        "provider": "OpenAI Compatible",
        "icon": "OpenAI",
        "category": "OpenAI Compatible",
        "metadata": {},
    }
]
SETUP = (
    "**Set up the model once**: in Settings → Model providers enter the base URL of an OpenAI-compatible "
    "server (for OpenAI: `https://api.openai.com/v1`) and its key, then Test connection. "
    "Pick another model on the model field if you like."
)

_REGISTRY: Registry | None = None


def registry() -> Registry:
    global _REGISTRY
    if _REGISTRY is None:
        classes = [
            *standard_bundle.register_components(),
            *models_bundle.register_components(),
            *documents_bundle.register_components(),
            *data_bundle.register_components(),
            *mcp_bundle.register_components(),
        ]
        _REGISTRY = Registry.from_classes(classes)
    return _REGISTRY


def node(
    key: str, node_id: str, x: int, y: int, *, show: dict[str, bool] | None = None, **values: Any
) -> dict[str, Any]:
    made = flowkit.node(key, node_id, show=show, registry=registry(), **values)
    made["position"] = {"x": x, "y": y}
    return made


def prompt(node_id: str, x: int, y: int, template: str, variables: list[str]) -> dict[str, Any]:
    """A Prompt Template node with one connectable text field per ``{variable}``, as the editor adds them."""
    made = node("Prompt Template", node_id, x, y, template=template)
    fnode = made["data"]["node"]
    for name in variables:
        fnode["template"][name] = {
            "name": name,
            "display_name": name,
            "type": "str",
            "_input_type": "MessageTextInput",
            "value": "",
            "show": True,
            "advanced": False,
            "required": False,
            "dynamic": False,
            "multiline": True,
            "input_types": ["Message"],
            "list": False,
            "placeholder": "",
            "info": "",
            "load_from_db": False,
            "password": False,
        }
    fnode["custom_fields"] = {"template": list(variables)}
    fnode["field_order"] = [*fnode.get("field_order", []), *variables]
    return made


def as_tool(made: dict[str, Any]) -> dict[str, Any]:
    """Tool mode, as the editor's toggle sets it: the node's one output is its toolset."""
    made["data"]["node"]["tool_mode"] = True
    made["data"]["node"]["outputs"] = [
        {
            "allows_loop": False,
            "cache": True,
            "display_name": "Toolset",
            "group_outputs": False,
            "method": "to_toolkit",
            "name": "component_as_tool",
            "selected": "Tool",
            "tool_mode": True,
            "types": ["Tool"],
            "value": "__UNDEFINED__",
        }
    ]
    return made


def note(node_id: str, x: int, y: int, text: str) -> dict[str, Any]:
    return {
        "id": node_id,
        "type": "noteNode",
        "position": {"x": x, "y": y},
        "data": {
            "id": node_id,
            "type": "note",
            "node": {
                "description": text,
                "display_name": "",
                "documentation": "",
                "template": {"backgroundColor": "neutral"},
            },
        },
    }


edge = flowkit.edge


def starter(
    name: str, description: str, icon: str, gradient: str, tags: list[str], nodes: list, edges: list, **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "icon": icon,
        "gradient": gradient,
        "tags": tags,
        **extra,
        "data": {"nodes": nodes, "edges": edges, "viewport": {"x": 0, "y": 0, "zoom": 0.8}},
    }


# --- the starters ------------------------------------------------------------------------------------------
def basic_prompting() -> dict[str, Any]:
    chat_in = node("ChatInput", "ChatInput-BP001", 0, 260)
    instructions = prompt(
        "Prompt-BP002",
        0,
        0,
        "You are a friendly guide to this flow builder. Answer in two or three sentences.",
        [],
    )
    model = node("LanguageModelComponent", "LanguageModelComponent-BP003", 420, 80, model=MODEL)
    out = node("ChatOutput", "ChatOutput-BP004", 840, 160)
    return starter(
        "Basic Prompting",
        "A prompt and a language model answer the chat: the smallest LLM flow.",
        "Braces",
        "2",
        ["chatbots", "getting-started"],
        [
            note(
                "note-BP000",
                -460,
                0,
                "## Basic Prompting\n\nThe Prompt Template sets the model's instructions (its system message); "
                "the chat message is the question. Open the Playground and ask something.\n\n" + SETUP,
            ),
            chat_in,
            instructions,
            model,
            out,
        ],
        [
            edge(instructions, "prompt", model, "system_message"),
            edge(chat_in, "message", model, "input_value"),
            edge(model, "text_output", out, "input_value"),
        ],
    )


def memory_chatbot() -> dict[str, Any]:
    memory = node("Memory", "Memory-MC001", 0, 0)
    chat_in = node("ChatInput", "ChatInput-MC002", 0, 320)
    context = prompt(
        "Prompt-MC003",
        420,
        0,
        "You are a helpful assistant that remembers the conversation.\n\nConversation so far:\n{memory}",
        ["memory"],
    )
    model = node("LanguageModelComponent", "LanguageModelComponent-MC004", 840, 120, model=MODEL)
    out = node("ChatOutput", "ChatOutput-MC005", 1260, 200)
    return starter(
        "Memory Chatbot",
        "A chatbot that keeps the conversation: Message History feeds earlier turns into the prompt.",
        "MessagesSquare",
        "3",
        ["chatbots", "memory"],
        [
            note(
                "note-MC000",
                -460,
                0,
                "## Memory Chatbot\n\nMessage History reads this session's earlier messages and the prompt hands "
                "them to the model, so it can refer back to them. Tell it your name, then ask for it.\n\n" + SETUP,
            ),
            memory,
            chat_in,
            context,
            model,
            out,
        ],
        [
            edge(memory, "messages_text", context, "memory"),
            edge(context, "prompt", model, "system_message"),
            edge(chat_in, "message", model, "input_value"),
            edge(model, "text_output", out, "input_value"),
        ],
    )


def document_qa() -> dict[str, Any]:
    document = node("File", "File-DQ001", 0, 0)
    chat_in = node("ChatInput", "ChatInput-DQ002", 0, 420)
    question = prompt(
        "Prompt-DQ003",
        420,
        120,
        "Answer the question using only the document below. If the document does not say, say so.\n\n"
        "Document:\n{document}\n\nQuestion: {question}",
        ["document", "question"],
    )
    model = node("LanguageModelComponent", "LanguageModelComponent-DQ004", 840, 120, model=MODEL)
    out = node("ChatOutput", "ChatOutput-DQ005", 1260, 200)
    return starter(
        "Document Q&A",
        "Ask questions about a file: Read File loads it, a prompt puts it before the question, a model answers.",
        "FileText",
        "4",
        ["documents", "q-a"],
        [
            note(
                "note-DQ000",
                -460,
                0,
                "## Document Q&A\n\nUpload a text, Markdown, CSV, JSON, PDF or DOCX file (My Files, or `POST "
                "/api/v2/files`) and put its path in Read File's *Files* field. Then ask about it in the "
                "Playground.\n\n" + SETUP,
            ),
            document,
            chat_in,
            question,
            model,
            out,
        ],
        [
            edge(document, "message", question, "document"),
            edge(chat_in, "message", question, "question"),
            edge(question, "prompt", model, "input_value"),
            edge(model, "text_output", out, "input_value"),
        ],
    )


def simple_agent() -> dict[str, Any]:
    chat_in = node("ChatInput", "ChatInput-SA001", 0, 200)
    calculator = as_tool(node("CalculatorComponent", "CalculatorComponent-SA002", 0, 420))
    agent = node(
        "Agent",
        "Agent-SA003",
        420,
        100,
        model=MODEL,
        system_prompt="You are a helpful assistant. Use the calculator for any arithmetic.",
        add_calculator_tool=False,
    )
    out = node("ChatOutput", "ChatOutput-SA004", 840, 200)
    return starter(
        "Simple Agent",
        "An agent that decides when to use a tool: here a calculator for arithmetic.",
        "Bot",
        "1",
        ["agents", "getting-started"],
        [
            note(
                "note-SA000",
                -460,
                0,
                "## Simple Agent\n\nThe Agent reads the question, calls the Calculator tool when it needs "
                "arithmetic and answers. Try *What is 1234 * 5678?* and open the tool call in the "
                "Playground.\n\n" + SETUP,
            ),
            chat_in,
            calculator,
            agent,
            out,
        ],
        [
            edge(chat_in, "message", agent, "input_value"),
            edge(calculator, "component_as_tool", agent, "tools"),
            edge(agent, "response", out, "input_value"),
        ],
    )


def data_transformation() -> dict[str, Any]:
    chat_in = node("ChatInput", "ChatInput-DT001", 0, 0)
    to_json = node(
        "TypeConverterComponent", "TypeConverterComponent-DT002", 380, 0, output_type="JSON", auto_parse=True
    )
    to_json["data"]["node"]["outputs"] = [o for o in to_json["data"]["node"]["outputs"] if o["name"] == "data_output"]
    summary = node(
        "Operations",
        "Operations-DT003",
        760,
        0,
        show={"text_input": False},
        input_type="JSON",
        data="",
        operation=[{"name": "JQ Expression", "icon": "terminal"}],
        query="{customers: [.orders[].customer] | unique, total: (.orders | map(.qty * .price) | add)}",
    )
    # what the editor's dynamic rules show for a JSON input and the jq operation (lib/dynamic.ts)
    summary["data"]["node"]["outputs"] = [o for o in summary["data"]["node"]["outputs"] if o["name"] == "data_output"]
    out = node("ChatOutput", "ChatOutput-DT004", 1140, 60)
    return starter(
        "Data Transformation",
        "Reshape JSON with a jq expression: paste orders, get the customers and the total.",
        "Shuffle",
        "0",
        ["data", "getting-started"],
        [
            note(
                "note-DT000",
                -460,
                0,
                "## Data Transformation\n\nSend JSON in the Playground, for example\n\n"
                '`{"orders": [{"customer": "ada", "qty": 2, "price": 3}, {"customer": "bob", "qty": 1, '
                '"price": 12}]}`\n\nType Convert parses it, Data Operations runs the jq expression (real jq) '
                "and Chat Output shows the result. No model needed.",
            ),
            chat_in,
            to_json,
            summary,
            out,
        ],
        [
            edge(chat_in, "message", to_json, "input_data"),
            edge(to_json, "data_output", summary, "data"),
            edge(summary, "data_output", out, "input_value"),
        ],
    )


def api_request() -> dict[str, Any]:
    request = node(
        "APIRequest", "APIRequest-AR001", 0, 0, url_input="https://api.github.com/repos/pallets/flask", method="GET"
    )
    text = node(
        "ParserComponent",
        "ParserComponent-AR002",
        420,
        0,
        pattern="{full_name}: {description} ({stargazers_count} stars, {open_issues_count} open issues)",
    )
    out = node("ChatOutput", "ChatOutput-AR003", 840, 60)
    return starter(
        "API Request",
        "Call an HTTP API and turn its JSON into a sentence: API Request, a Parser template, Chat Output.",
        "Globe",
        "5",
        ["automation", "data"],
        [
            note(
                "note-AR000",
                -460,
                0,
                "## API Request\n\nAPI Request fetches a GitHub repository's JSON and the Parser's template picks its "
                "fields. Change the URL (and method, headers, body) and the template's `{keys}`, then press Run. "
                "Requests go through the server's outbound rules: private and loopback addresses are refused "
                "unless an administrator allows them (`SERVICE_SSRF_ALLOWED_HOSTS`).",
            ),
            request,
            text,
            out,
        ],
        [
            edge(request, "data", text, "input_data"),
            edge(text, "parsed_text", out, "input_value"),
        ],
    )


def mcp_tool() -> dict[str, Any]:
    chat_in = node("ChatInput", "ChatInput-MT001", 0, 200)
    tools = as_tool(node("MCPTools", "MCPTools-MT002", 0, 420))
    agent = node(
        "Agent",
        "Agent-MT003",
        420,
        100,
        model=MODEL,
        system_prompt="You are a helpful assistant. Use the tools of the MCP server when they fit the request.",
        add_calculator_tool=False,
        add_current_date_tool=False,
    )
    out = node("ChatOutput", "ChatOutput-MT004", 840, 200)
    return starter(
        "MCP Tool Agent",
        "An agent that uses the tools of an MCP server: add the server in Settings, pick it on MCP Tools.",
        "Hammer",
        "6",
        ["agents", "mcp"],
        [
            note(
                "note-MT000",
                -460,
                0,
                "## MCP Tool Agent\n\nAdd an MCP server in Settings → MCP servers (any Streamable HTTP server; "
                "another project's MCP server of this service works too), choose it on the MCP Tools node, "
                "then chat: the Agent calls the server's tools when they help.\n\n" + SETUP,
            ),
            chat_in,
            tools,
            agent,
            out,
        ],
        [
            edge(chat_in, "message", agent, "input_value"),
            edge(tools, "component_as_tool", agent, "tools"),
            edge(agent, "response", out, "input_value"),
        ],
    )


STARTERS = {
    "basic-prompting": basic_prompting,
    "memory-chatbot": memory_chatbot,
    "document-qa": document_qa,
    "simple-agent": simple_agent,
    "data-transformation": data_transformation,
    "api-request": api_request,
    "mcp-tool-agent": mcp_tool,
}


def render(build) -> str:
    return json.dumps(build(), indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main() -> None:
    for stem, build in STARTERS.items():
        (EXAMPLES / f"{stem}.json").write_text(render(build), encoding="utf-8")
        print(f"wrote {stem}.json")


if __name__ == "__main__":
    main()
