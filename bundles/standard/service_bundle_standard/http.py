"""Data sources: API Request and URL (through the engine's SSRF-safe egress), Load CSV, Load JSON."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shlex
from html.parser import HTMLParser
from typing import Any

from core.engine import Component, ComponentError, Data, DataFrame, Message, Output
from core.engine.egress import EgressError, request
from core.engine.inputs import (
    BoolInput,
    DataInput,
    DropdownInput,
    FileInput,
    IntInput,
    MessageTextInput,
    SliderInput,
    TabInput,
    TableInput,
)
from core.engine.types import to_text

METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"]


def _pairs(value: Any) -> dict[str, Any]:
    """Headers / body / query tables: ``[{key, value}]`` rows, a dict, or JSON text."""
    if value in (None, "", []):
        return {}
    if isinstance(value, Data):
        return dict(value.data)
    if isinstance(value, DataFrame):
        value = value.to_records()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("Expected a JSON object") from None
    if isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for row in value or []:
        if isinstance(row, Data):
            row = row.data
        if isinstance(row, dict):
            if "key" in row:
                if row.get("key"):
                    out[str(row["key"])] = row.get("value")
            else:
                out.update(row)
    return out


def parse_curl(command: str) -> dict[str, Any]:
    """Read method, URL, headers and body from a ``curl`` command line (no shell involved)."""
    try:
        args = shlex.split(command.replace("\\\n", " "))
    except ValueError as exc:
        raise ValueError(f"Invalid cURL command: {exc}") from None
    if not args or args[0] != "curl":
        raise ValueError("The cURL command must start with 'curl'.")
    out: dict[str, Any] = {"method": None, "url": "", "headers": {}, "body": None}
    i = 1
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a in ("-X", "--request"):
            out["method"] = nxt.upper()
            i += 2
        elif a in ("-H", "--header"):
            if ":" in nxt:
                k, v = nxt.split(":", 1)
                out["headers"][k.strip()] = v.strip()
            i += 2
        elif a in ("-d", "--data", "--data-raw", "--data-binary", "--json"):
            out["body"] = nxt
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            out["url"] = a
            i += 1
    out["method"] = out["method"] or ("POST" if out["body"] is not None else "GET")
    return out


class APIRequest(Component):
    key = "APIRequest"
    display_name = "API Request"
    display_names = {"en": "API Request", "fr": "Requête API", "de": "API-Anfrage", "es": "Solicitud API"}
    description = "Make HTTP requests using URL or cURL commands."
    icon = "Globe"
    category = "data_source"
    io_bound = True
    inputs = [
        MessageTextInput("url_input", "URL", "", info="Enter the URL for the request.", tool_mode=True),
        MessageTextInput(
            "curl_input", "cURL", "", advanced=True, show=False, info="Paste a curl command to populate the fields."
        ),
        DropdownInput(
            "method", "Method", "GET", options=list(METHODS), real_time_refresh=True, info="The HTTP method to use."
        ),
        TabInput(
            "mode",
            "Mode",
            "URL",
            options=["URL", "cURL"],
            info="Enable cURL mode to populate fields from a cURL command.",
        ),
        DataInput(
            "query_params", "Query Parameters", "", advanced=True, info="The query parameters to append to the URL."
        ),
        TableInput(
            "body",
            "Body",
            [],
            input_types=["Data", "JSON"],
            advanced=True,
            info="The body to send with the request as a dictionary (for POST, PATCH, PUT).",
        ),
        TableInput(
            "headers",
            "Headers",
            [{"key": "User-Agent", "value": "Service/1.0"}],
            input_types=["Data", "JSON"],
            advanced=True,
            info="The headers to send with the request",
        ),
        IntInput("timeout", "Timeout", 30, advanced=True, info="The timeout to use for the request."),
        BoolInput(
            "follow_redirects",
            "Follow Redirects",
            False,
            advanced=True,
            info="Whether to follow HTTP redirects (each hop is checked).",
        ),
        BoolInput(
            "save_to_file",
            "Save to File",
            False,
            advanced=True,
            info="Not available in this service: responses are returned, never written to server disk.",
        ),
        BoolInput(
            "include_httpx_metadata",
            "Include HTTPx Metadata",
            False,
            advanced=True,
            info=(
                "Include properties such as headers, status_code, response_headers, "
                "and redirection_history in the output."
            ),
        ),
    ]
    outputs = [Output("data", "API Response", "make_api_request", ["JSON"])]

    def make_api_request(self) -> Data:
        if self.mode == "cURL":
            parsed = parse_curl(to_text(self.curl_input))
            url, method, headers, body = parsed["url"], parsed["method"], parsed["headers"], parsed["body"]
        else:
            url, method = to_text(self.url_input).strip(), (self.method or "GET").upper()
            headers = {str(k): to_text(v) for k, v in _pairs(self.headers).items() if v is not None}
            body_pairs = _pairs(self.body)
            body = json.dumps(body_pairs) if body_pairs and method in ("POST", "PATCH", "PUT", "DELETE") else None
            if body is not None:
                headers.setdefault("Content-Type", "application/json")
        if method not in METHODS:
            raise ValueError(f"Unsupported method '{method}'")
        if not url:
            raise ValueError("URL is required.")
        if not re.match(r"^https?://", url, re.IGNORECASE):
            url = "https://" + url
        if self.timeout <= 0:
            raise ValueError("Timeout must be positive.")
        params = _pairs(self.query_params) if self.query_params else None
        try:
            resp = request(
                method,
                url,
                policy=self.context.egress,
                headers=headers,
                params=params,
                body=body,
                timeout=float(self.timeout),
                follow_redirects=self.follow_redirects,
                deadline=self.context.deadline,
            )
        except EgressError as exc:
            raise ComponentError(str(exc)) from None
        ctype = resp.headers.get("content-type", "")
        result: Any
        if "json" in ctype:
            try:
                result = json.loads(resp.text)
            except ValueError:
                result = resp.text
        else:
            result = resp.text
        # The reference's fields: source, status_code, response_headers, result (the decoded body),
        # redirection_history when redirected, headers with include_httpx_metadata.
        out: dict[str, Any] = {"source": url, "status_code": resp.status_code, "response_headers": dict(resp.headers)}
        if resp.redirects:
            out["redirection_history"] = [{"url": hop} for hop in resp.redirects]
        out["result"] = result
        if self.include_httpx_metadata:
            out["headers"] = headers
        if isinstance(result, dict):
            # Compatibility (not the reference's): our stored example flow (examples/api-request.json)
            # reads a JSON object's keys at the top level ({full_name}); the reference's keys win.
            out = {**result, **out}
        data = Data(out)
        self.status = data
        return data


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        self.description = ""
        self.language = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "noscript"):
            self._skip += 1
        if tag == "title":
            self._in_title = True
        if tag == "meta":
            a = dict(attrs)
            if (a.get("name") or "").lower() == "description":
                self.description = a.get("content") or ""
        if tag == "html":
            self.language = dict(attrs).get("lang") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "noscript") and self._skip:
            self._skip -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip and data.strip():
            self.parts.append(data.strip())


class URLComponent(Component):
    key = "URLComponent"
    display_name = "URL"
    display_names = {"en": "URL", "fr": "URL", "de": "URL", "es": "URL"}
    description = "Fetch content from one or more web pages."
    icon = "layout-template"
    category = "data_source"
    io_bound = True
    inputs = [
        MessageTextInput(
            "urls",
            "URLs",
            [],
            is_list=True,
            tool_mode=True,
            placeholder="Enter a URL...",
            info="Enter one or more URLs to crawl.",
        ),
        SliderInput("max_depth", "Depth", 1, info="Only depth 1 (the given pages) is supported."),
        BoolInput("prevent_outside", "Prevent Outside", True, advanced=True),
        BoolInput("use_async", "Use Async", True, advanced=True),
        BoolInput("follow_redirects", "Follow Redirects", True, advanced=True),
        DropdownInput("format", "Output Format", "Text", options=["Text", "HTML", "Markdown"], advanced=True),
        IntInput("timeout", "Timeout", 30, advanced=True),
        TableInput(
            "headers",
            "Headers",
            [{"key": "User-Agent", "value": None}],
            input_types=["DataFrame", "Table"],
            advanced=True,
        ),
        BoolInput("filter_text_html", "Filter Text/HTML", True, advanced=True),
        BoolInput("continue_on_failure", "Continue on Failure", True, advanced=True),
        BoolInput("check_response_status", "Check Response Status", False, advanced=True),
        BoolInput("autoset_encoding", "Autoset Encoding", True, advanced=True),
    ]
    outputs = [
        Output("page_results", "Extracted Pages", "fetch_content", ["Table"]),
        Output("raw_results", "Raw Content", "fetch_content_as_message", ["Message"]),
    ]

    def _fetch(self) -> DataFrame:
        if hasattr(self, "_frame"):
            return self._frame
        urls = [u.strip() for u in (self.urls or []) if u and u.strip()]
        if not urls:
            raise ValueError("No URLs provided.")
        headers = {str(k): to_text(v) for k, v in _pairs(self.headers).items() if v}
        rows = []
        for url in urls:
            if not re.match(r"^https?://", url, re.IGNORECASE):
                url = "https://" + url
            try:
                resp = request(
                    "GET",
                    url,
                    policy=self.context.egress,
                    headers=headers,
                    timeout=float(self.timeout or 30),
                    follow_redirects=self.follow_redirects,
                    deadline=self.context.deadline,
                )
                if self.check_response_status and resp.status_code >= 400:
                    raise EgressError(f"HTTP {resp.status_code} for {url}")
            except EgressError as exc:
                if not self.continue_on_failure:
                    raise ComponentError(str(exc)) from None
                self.log(str(exc))
                continue
            ctype = resp.headers.get("content-type", "")
            body = resp.text
            parser = _TextExtractor()
            if "html" in ctype or body.lstrip().startswith("<"):
                parser.feed(body)
            text = (
                body
                if self.format == "HTML"
                else ("\n".join(parser.parts) if parser.parts or "html" in ctype else body)
            )
            rows.append(
                {
                    "text": html.unescape(text) if self.format != "HTML" else text,
                    "url": resp.url,
                    "title": parser.title.strip(),
                    "description": parser.description,
                    "content_type": ctype,
                    "language": parser.language,
                }
            )
        self._frame = DataFrame(rows, columns=["text", "url", "title", "description", "content_type", "language"])
        return self._frame

    def fetch_content(self) -> DataFrame:
        frame = self._fetch()
        self.status = frame
        return frame

    def fetch_content_as_message(self) -> Message:
        rows = self._fetch().rows
        message = Message(text="\n\n".join(to_text(r.get("text")) for r in rows))
        message.data["data"] = [dict(r) for r in rows]  # the reference keeps the pages beside the text
        return message


def _read_source(component: Component, file_value: Any, path_value: str) -> str | None:
    target = path_value or (file_value if isinstance(file_value, str) else "")
    if not target:
        return None
    reader = component.context.read_file
    if reader is None:
        raise ComponentError("Reading files from the server is not available here; paste the content instead.")
    try:  # local paths: the user's workspace only by default (hardening.local_path, via the files plugin)
        return reader(target).decode("utf-8", "replace")
    except FileNotFoundError:
        raise ComponentError(f"File not found: {target}") from None


class CSVtoData(Component):
    key = "CSVtoData"
    display_name = "Load CSV"
    display_names = {"en": "Load CSV", "fr": "Charger un CSV", "de": "CSV laden", "es": "Cargar CSV"}
    description = (
        "Load a CSV file, CSV from a file path, or a valid CSV string and convert it to a list of JSON objects."
    )
    icon = "file-spreadsheet"
    category = "data_source"
    legacy = True
    inputs = [
        FileInput(
            "csv_file", "CSV File", "", info="Upload a CSV file to convert to a list of JSON objects", fileTypes=["csv"]
        ),
        MessageTextInput("csv_path", "CSV File Path", "", info="Provide the path to the CSV file as pure text"),
        MessageTextInput(
            "csv_string", "CSV String", "", info="Paste a CSV string directly to convert to a list of JSON objects"
        ),
        MessageTextInput(
            "text_key", "Text Key", "text", info="The key to use for the text column. Defaults to 'text'."
        ),
    ]
    outputs = [Output("data_list", "Data List", "load_csv_to_data", ["JSON"])]

    def load_csv_to_data(self) -> list[Data]:
        content = to_text(self.csv_string) or _read_source(self, self.csv_file, to_text(self.csv_path))
        if not content:
            raise ValueError("Provide a CSV file, a file path or a CSV string.")
        try:
            rows = list(csv.DictReader(io.StringIO(content)))
        except csv.Error as exc:
            raise ValueError(f"Invalid CSV: {exc}") from None
        out = [Data(dict(r), text_key=self.text_key or "text") for r in rows]
        self.status = out
        return out


class JSONtoData(Component):
    key = "JSONtoData"
    display_name = "Load JSON"
    display_names = {"en": "Load JSON", "fr": "Charger un JSON", "de": "JSON laden", "es": "Cargar JSON"}
    description = "Convert a JSON file, JSON from a file path, or a JSON string to a JSON object or a list of them."
    icon = "braces"
    category = "data_source"
    legacy = True
    inputs = [
        FileInput("json_file", "JSON File", "", info="Upload a JSON file to convert", fileTypes=["json"]),
        MessageTextInput("json_path", "JSON File Path", "", info="Provide the path to the JSON file as pure text"),
        MessageTextInput("json_string", "JSON String", "", info="Enter a valid JSON string (object or array)"),
    ]
    outputs = [Output("data", "JSON", "convert_json_to_data", ["JSON"])]

    def convert_json_to_data(self) -> Data | list[Data]:
        content = to_text(self.json_string) or _read_source(self, self.json_file, to_text(self.json_path))
        if not content:
            raise ValueError("Provide a JSON file, a file path or a JSON string.")
        try:
            parsed = json.loads(content)
        except ValueError as exc:
            raise ValueError(f"Invalid JSON: {exc}") from None
        if isinstance(parsed, list):
            result: Data | list[Data] = [Data(x) if isinstance(x, dict) else Data({"value": x}) for x in parsed]
        elif isinstance(parsed, dict):
            result = Data(parsed)
        else:
            result = Data({"value": parsed})
        self.status = result
        return result


COMPONENTS = [APIRequest, URLComponent, CSVtoData, JSONtoData]
