"""Chat Input/Output, Text Input/Output and Webhook (category ``input_output``)."""

from __future__ import annotations

import json
from typing import Any

from core.engine import Component, Data, DataFrame, Message, Output
from core.engine.inputs import BoolInput, DropdownInput, FileInput, HandleInput, MessageTextInput, MultilineInput
from core.engine.text import safe_convert

DOCS = "https://docs.service.org/chat-input-and-output"
FILE_TYPES = [
    "csv",
    "json",
    "pdf",
    "txt",
    "md",
    "mdx",
    "yaml",
    "yml",
    "xml",
    "html",
    "htm",
    "docx",
    "py",
    "sh",
    "sql",
    "js",
    "ts",
    "tsx",
    "jpg",
    "jpeg",
    "png",
    "bmp",
    "image",
]


def session_inputs() -> list[Any]:
    return [
        MessageTextInput(
            "session_id",
            "Session ID",
            "",
            advanced=True,
            info="The session ID of the chat. If empty, the current session ID parameter will be used.",
        ),
        MessageTextInput(
            "context_id",
            "Context ID",
            "",
            advanced=True,
            info="The context ID of the chat. Adds an extra layer to the local memory.",
        ),
    ]


class ChatInput(Component):
    key = "ChatInput"
    display_name = "Chat Input"
    display_names = {"en": "Chat Input", "fr": "Entrée de chat", "de": "Chat-Eingabe", "es": "Entrada de chat"}
    description = "Get chat inputs from the Playground."
    icon = "MessagesSquare"
    category = "input_output"
    documentation = DOCS
    minimized = True
    is_input = True
    inputs = [
        MultilineInput("input_value", "Input Text", "", input_types=[], info="Message to be passed as input."),
        BoolInput(
            "should_store_message", "Store Messages", True, advanced=True, info="Store the message in the history."
        ),
        DropdownInput(
            "sender", "Sender Type", "User", options=["Machine", "User"], advanced=True, info="Type of sender."
        ),
        MessageTextInput("sender_name", "Sender Name", "User", advanced=True, info="Name of the sender."),
        *session_inputs(),
        FileInput(
            "files",
            "Files",
            "",
            is_list=True,
            advanced=True,
            info="Files to be sent with the message.",
            fileTypes=FILE_TYPES,
            temp_file=True,
        ),
    ]
    outputs = [Output("message", "Chat Message", "message_response", ["Message"])]

    def message_response(self) -> Message:
        files = (
            [f for f in (self.files or []) if f]
            if isinstance(self.files, list)
            else ([self.files] if self.files else [])
        )
        message = Message(
            text=self.input_value or "",
            sender=self.sender,
            sender_name=self.sender_name,
            session_id=self.session_id or self.context.session_id,
            context_id=self.context_id,
            flow_id=self.context.flow_id,
            files=files,
        )
        if message.session_id and self.should_store_message:
            message = self.send_message(message)
        self.status = message
        return message


class ChatOutput(Component):
    key = "ChatOutput"
    display_name = "Chat Output"
    display_names = {"en": "Chat Output", "fr": "Sortie de chat", "de": "Chat-Ausgabe", "es": "Salida de chat"}
    description = "Display a chat message in the Playground."
    icon = "MessagesSquare"
    category = "input_output"
    documentation = DOCS
    minimized = True
    is_output = True
    inputs = [
        HandleInput(
            "input_value",
            "Inputs",
            "",
            input_types=["Data", "JSON", "DataFrame", "Table", "Message"],
            required=True,
            info="Message to be passed as output.",
        ),
        BoolInput(
            "should_store_message", "Store Messages", True, advanced=True, info="Store the message in the history."
        ),
        DropdownInput(
            "sender", "Sender Type", "Machine", options=["Machine", "User"], advanced=True, info="Type of sender."
        ),
        MessageTextInput("sender_name", "Sender Name", "AI", advanced=True, info="Name of the sender."),
        *session_inputs(),
        MessageTextInput(
            "data_template",
            "Data Template",
            "{text}",
            advanced=True,
            info="Template to convert Data to Text. If left empty, it will be dynamically set to the Data's text key.",
        ),
        BoolInput(
            "clean_data",
            "Basic Clean Data",
            True,
            advanced=True,
            info="Whether to clean data before converting to string.",
        ),
    ]
    outputs = [Output("message", "Output Message", "message_response", ["Message"])]

    def convert_to_string(self) -> str:
        value = self.input_value
        if isinstance(value, list):
            return "\n".join(safe_convert(item, self.clean_data) for item in value)
        if isinstance(value, (Message, Data, DataFrame, str)) or value is None:
            return safe_convert(value, self.clean_data)
        return safe_convert(value, self.clean_data)

    def message_response(self) -> Message:
        text = self.convert_to_string()
        if isinstance(self.input_value, Message) and not self.vertex.source_of_chat_input:
            message = self.input_value.copy()
            message.text = text
            message.id = None
            message.timestamp = Message().timestamp
        else:
            message = Message(text=text)
        message.sender = self.sender
        message.sender_name = self.sender_name
        message.session_id = self.session_id or self.context.session_id or ""
        message.context_id = self.context_id or ""
        message.flow_id = self.context.flow_id
        message.properties["source"] = {
            "id": self.vertex.id,
            "display_name": self.vertex.display_name,
            "source": self.vertex.display_name,
        }
        message.properties["icon"] = self.icon
        if message.session_id and self.should_store_message:
            message = self.send_message(message)
        self.status = message
        return message


class TextInput(Component):
    key = "TextInput"
    display_name = "Text Input"
    display_names = {"en": "Text Input", "fr": "Entrée de texte", "de": "Texteingabe", "es": "Entrada de texto"}
    description = "Get user text inputs."
    icon = "type"
    category = "input_output"
    documentation = "https://docs.service.org/components-io#text-input"
    legacy = True
    is_input = True
    inputs = [
        MultilineInput("input_value", "Text", "", info="Text to be passed as input."),
        BoolInput(
            "use_global_variable",
            "Use Global Variable",
            False,
            advanced=True,
            info="Enable to select from global variables (shows globe icon). Disable for multiline text editing.",
        ),
    ]
    outputs = [Output("text", "Output Text", "text_response", ["Message"])]

    def text_response(self) -> Message:
        message = Message(text=self.input_value or "")
        self.status = message.text
        return message


class TextOutput(Component):
    key = "TextOutput"
    display_name = "Text Output"
    display_names = {"en": "Text Output", "fr": "Sortie de texte", "de": "Textausgabe", "es": "Salida de texto"}
    description = "Sends text output via API."
    icon = "type"
    category = "input_output"
    documentation = "https://docs.service.org/components-io#text-output"
    legacy = True
    is_output = True
    inputs = [MultilineInput("input_value", "Inputs", "", info="Text to be passed as output.")]
    outputs = [Output("text", "Output Text", "text_response", ["Message"])]

    def text_response(self) -> Message:
        message = Message(text=self.input_value or "")
        self.status = message.text
        return message


class Webhook(Component):
    key = "Webhook"
    display_name = "Webhook"
    display_names = {"en": "Webhook", "fr": "Webhook", "de": "Webhook", "es": "Webhook"}
    description = "Defines a webhook trigger for the flow."
    icon = "webhook"
    category = "input_output"
    documentation = "https://docs.service.org/component-webhook"
    inputs = [
        MultilineInput(
            "data", "Payload", "", advanced=True, info="Receives a payload from external systems via HTTP POST."
        ),
        MultilineInput(
            "curl",
            "cURL",
            "CURL_WEBHOOK",
            input_types=[],
            advanced=True,
            info="cURL command template for calling this webhook.",
        ),
        MultilineInput("endpoint", "Endpoint", "BACKEND_URL", input_types=[], info="", copy_field=True),
    ]
    outputs = [Output("output_data", "JSON", "build_data", ["JSON"])]

    def build_data(self) -> Data:
        raw = self.data
        if not raw:
            self.status = "No data provided."
            return Data(data={})
        try:
            body = json.loads(raw.replace('"\n"', '"\\n"'))
        except ValueError:
            self.status = f"Invalid JSON payload. Please check the format.\n\n{raw}"
            return Data(data={"payload": raw})
        if not isinstance(body, dict):
            body = {"payload": body}
        data = Data(data=body)
        self.status = data
        return data


COMPONENTS = [ChatInput, ChatOutput, TextInput, TextOutput, Webhook]
