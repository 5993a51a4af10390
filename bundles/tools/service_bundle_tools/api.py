"""What every tool of this bundle shares: JSON over the core egress helper, result shaping, the tool outputs.

Endpoints are module constants of each tool module (``SERPAPI_URL``, ...): a deployment
behind a gateway, and the tests' local servers, point them elsewhere.
"""

from __future__ import annotations

import json
from typing import Any

from core.engine import Component, ComponentError, Data, Output
from core.engine.egress import EgressError, request
from core.engine.tools import Tool, string_tool
from core.engine.types import to_text

DEFAULT_TIMEOUT = 15.0


def get_json(
    component: Component,
    url: str,
    *,
    method: str = "GET",
    params: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    body: Any = None,
    secret: str = "",
) -> Any:
    """Call a JSON API through the egress helper; errors name the status, never the secret."""
    ctx = component.context
    send_headers = {"Accept": "application/json", **(headers or {})}
    payload = None
    if body is not None:
        payload = json.dumps(body)
        send_headers["Content-Type"] = "application/json"
    try:
        resp = request(
            method,
            url,
            policy=ctx.egress,
            params=params,
            headers=send_headers,
            body=payload,
            timeout=DEFAULT_TIMEOUT,
            follow_redirects=True,
            deadline=ctx.deadline,
        )
    except EgressError as exc:
        raise ComponentError(_hide(f"Request to {url} failed: {exc}", secret)) from None
    if resp.status_code >= 400:
        detail = _error_detail(resp.text)
        raise ComponentError(_hide(f"{url} answered HTTP {resp.status_code}{': ' + detail if detail else ''}", secret))
    try:
        return json.loads(resp.content or b"null")
    except ValueError:
        raise ComponentError(f"{url} did not answer JSON") from None


def _error_detail(text: str) -> str:
    try:
        body = json.loads(text)
    except ValueError:
        return ""
    if isinstance(body, dict):
        err = body.get("error") or body.get("message") or body.get("detail")
        if isinstance(err, dict):
            err = err.get("message") or err.get("info")
        return to_text(err)[:200] if err else ""
    return ""


def _hide(text: str, secret: str) -> str:
    # keys shorter than 4 characters are not real keys, and masking them would garble the message
    return text.replace(secret, "***") if len(secret) >= 4 else text


def require(value: Any, what: str) -> str:
    text = to_text(value).strip()
    if not text:
        raise ValueError(f"{what} is required.")
    return text


def truncate(text: Any, limit: int) -> str:
    """The first ``limit`` characters (all of them when ``limit`` is 0), cut as the reference cuts: no ellipsis."""
    value = to_text(text)
    return value[:limit] if limit and limit > 0 else value


def tool_outputs() -> list[Output]:
    """The reference's two outputs of legacy LangChain tools."""
    return [
        Output("api_run_model", "Data", "run_model", ["JSON"]),
        Output("api_build_tool", "Tool", "build_tool", ["Tool"]),
    ]


class SearchTool(Component):
    """A legacy tool: ``run_model`` searches ``self.<query_field>``; ``build_tool`` offers the same search."""

    category = "tools"
    legacy = True
    io_bound = True
    query_field = "input_value"
    tool_name = "search"
    tool_description = "Search the web."

    def search(self, query: str) -> list[Data]:  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    def run_model(self) -> list[Data]:
        results = self.search(require(getattr(self, self.query_field), "A search query"))
        self.status = results
        return results

    def build_tool(self) -> Tool:
        def run(query: str) -> str:
            return json.dumps([d.data for d in self.search(require(query, "A search query"))], ensure_ascii=False)

        return string_tool(self.tool_name, self.tool_description, run, arg="query")
