"""The OpenAI-style wire protocol over the core egress helper (SSRF rules on every call).

We speak the protocol ourselves rather than through the ``openai`` SDK: the SDK's
HTTP client resolves and connects on its own, which would bypass the egress
helper's checked, pinned connection (no DNS rebinding window). The protocol parts
used here are small: ``GET /models``, ``POST /chat/completions`` (JSON and
server-sent events, tool calls) and ``POST /embeddings``.

Retries: 429 and 5xx answers and connection errors are retried with exponential
backoff (``Retry-After`` honoured, capped) up to ``max_retries`` times, within the
run's deadline. A streamed answer is never retried once a token was handed on.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core.engine.egress import EgressBlocked, EgressError, EgressPolicy, request, stream

__all__ = ["ChatResult", "ModelClient", "ProviderError"]

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
_MAX_BACKOFF = 8.0


class ProviderError(Exception):
    """The provider refused or failed (message names the provider's status and text)."""

    def __init__(self, message: str, status: int | None = None, *, blocked: bool = False):
        super().__init__(message)
        self.status = status
        self.blocked = blocked  # the egress rules refused the address


@dataclass
class ChatResult:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{id, name, arguments (str)}]
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    model: str = ""


@dataclass
class ModelClient:
    base_url: str
    api_key: str = ""
    policy: EgressPolicy = field(default_factory=EgressPolicy)
    timeout: float = 60.0
    max_retries: int = 3
    deadline: float | None = None
    backoff: float = 0.25  # first retry waits this long (doubles each time, with jitter)

    def _url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff * (2**attempt) * (1 + random.random() / 4)
        if retry_after:
            with contextlib.suppress(ValueError):
                delay = max(delay, float(retry_after))
        delay = min(delay, _MAX_BACKOFF)
        if self.deadline is not None and time.monotonic() + delay > self.deadline:
            raise ProviderError("Model call time limit exceeded")
        time.sleep(delay)

    @staticmethod
    def _error(status: int, content: bytes) -> ProviderError:
        try:
            body = json.loads(content)
            detail = (body.get("error") or {}).get("message") or body.get("detail") or ""
        except (ValueError, AttributeError):
            detail = content[:200].decode("utf-8", "replace")
        return ProviderError(f"Model provider answered {status}: {detail}".rstrip(": "), status)

    def _json(self, method: str, path: str, body: Any = None) -> Any:
        payload = json.dumps(body) if body is not None else None
        for attempt in range(self.max_retries + 1):
            try:
                resp = request(
                    method,
                    self._url(path),
                    policy=self.policy,
                    headers=self._headers(),
                    body=payload,
                    timeout=self.timeout,
                    deadline=self.deadline,
                )
            except EgressBlocked as exc:
                raise ProviderError(str(exc), blocked=True) from exc
            except EgressError as exc:
                if attempt >= self.max_retries:
                    raise ProviderError(str(exc)) from exc
                self._wait(attempt, None)
                continue
            if resp.status_code in RETRY_STATUSES and attempt < self.max_retries:
                self._wait(attempt, resp.headers.get("retry-after"))
                continue
            if resp.status_code >= 400:
                raise self._error(resp.status_code, resp.content)
            try:
                return json.loads(resp.content)
            except ValueError as exc:
                raise ProviderError("Model provider answered with invalid JSON") from exc
        raise ProviderError("Model provider kept failing")  # pragma: no cover (loop always returns or raises)

    # -- the three calls -------------------------------------------------------------------------------
    def list_models(self) -> list[str]:
        body = self._json("GET", "/models")
        data = body.get("data") if isinstance(body, dict) else body
        return sorted(str(m.get("id")) for m in data or [] if isinstance(m, dict) and m.get("id"))

    def embed(self, model: str, texts: list[str], dimensions: int | None = None) -> list[list[float]]:
        body: dict[str, Any] = {"model": model, "input": texts}
        if dimensions:
            body["dimensions"] = dimensions
        answer = self._json("POST", "/embeddings", body)
        rows = sorted(answer.get("data") or [], key=lambda r: r.get("index", 0))
        return [list(r.get("embedding") or []) for r in rows]

    def chat(self, body: dict[str, Any], on_token: Callable[[str], None] | None = None) -> ChatResult:
        """One chat completion; with ``on_token`` it streams and hands each text chunk on."""
        if on_token is None:
            answer = self._json("POST", "/chat/completions", {**body, "stream": False})
            return _parse_completion(answer)
        payload = json.dumps({**body, "stream": True, "stream_options": {"include_usage": True}})
        for attempt in range(self.max_retries + 1):
            try:
                with stream(
                    "POST",
                    self._url("/chat/completions"),
                    policy=self.policy,
                    headers={**self._headers(), "Accept": "text/event-stream"},
                    body=payload,
                    timeout=self.timeout,
                    deadline=self.deadline,
                ) as resp:
                    if resp.status_code in RETRY_STATUSES and attempt < self.max_retries:
                        resp.read()
                        self._wait(attempt, resp.headers.get("retry-after"))
                        continue
                    if resp.status_code >= 400:
                        raise self._error(resp.status_code, resp.read())
                    if "text/event-stream" not in resp.headers.get("content-type", ""):
                        return _parse_completion(json.loads(resp.read()))
                    return _read_stream(_sse_data(resp.lines()), on_token)
            except EgressBlocked as exc:
                raise ProviderError(str(exc), blocked=True) from exc
            except EgressError as exc:
                if attempt >= self.max_retries:
                    raise ProviderError(str(exc)) from exc
                self._wait(attempt, None)
        raise ProviderError("Model provider kept failing")


def _parse_completion(answer: dict[str, Any]) -> ChatResult:
    choice = (answer.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    calls = [
        {
            "id": str(c.get("id") or ""),
            "name": str((c.get("function") or {}).get("name") or ""),
            "arguments": str((c.get("function") or {}).get("arguments") or ""),
        }
        for c in message.get("tool_calls") or []
    ]
    return ChatResult(
        text=str(message.get("content") or ""),
        tool_calls=calls,
        usage=dict(answer.get("usage") or {}),
        finish_reason=choice.get("finish_reason"),
        model=str(answer.get("model") or ""),
    )


def _sse_data(lines: Iterator[bytes]) -> Iterator[str]:
    """The ``data`` of each server-sent event (multi-line data joined), until ``[DONE]``."""
    buf: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8", "replace")
        if not line:
            if buf:
                data = "\n".join(buf)
                buf = []
                if data.strip() == "[DONE]":
                    return
                yield data
            continue
        if line.startswith("data:"):
            buf.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
    if buf and "\n".join(buf).strip() != "[DONE]":
        yield "\n".join(buf)


def _read_stream(events: Iterator[str], on_token: Callable[[str], None]) -> ChatResult:
    result = ChatResult()
    parts: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for data in events:
        try:
            frame = json.loads(data)
        except ValueError:
            continue
        if frame.get("error"):
            raise ProviderError(f"Model provider failed: {(frame['error'] or {}).get('message')}")
        result.model = str(frame.get("model") or result.model)
        if frame.get("usage"):
            result.usage = dict(frame["usage"])
        for choice in frame.get("choices") or []:
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if text:
                parts.append(text)
                on_token(text)
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(call.get("index") or 0), {"id": "", "name": "", "arguments": ""})
                if call.get("id"):
                    slot["id"] = call["id"]
                fn = call.get("function") or {}
                if fn.get("name"):
                    slot["name"] += fn["name"]
                if fn.get("arguments"):
                    slot["arguments"] += fn["arguments"]
            if choice.get("finish_reason"):
                result.finish_reason = choice["finish_reason"]
    result.text = "".join(parts)
    result.tool_calls = [calls[i] for i in sorted(calls)]
    return result
