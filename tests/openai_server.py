"""A small OpenAI-compatible server for the tests: the real wire protocol, scripted per test, on loopback.

``GET /v1/models``, ``POST /v1/chat/completions`` (JSON or server-sent events,
tool calls) and ``POST /v1/embeddings``. A test queues replies with
:meth:`OpenAIServer.reply` (text, tool calls, an HTTP error status, a delay);
with nothing queued the server answers ``echo: <last user message>`` (a request asking for a
JSON schema, ``response_format`` ``json_schema``, gets the smallest instance of it instead).
Every request body is kept in :attr:`OpenAIServer.requests`.

Hand-written on ``http.server`` on purpose: a test double must not depend on
the code under test, and the protocol parts it needs are small.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OpenAIServer:
    def __init__(self, models: list[str] | None = None, api_key: str | None = None):
        self.models = list(models or ["test-model", "test-model-large"])
        self.api_key = api_key
        self.replies: deque[dict[str, Any]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.model_lists = 0
        self.lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- scripting --------------------------------------------------------
    def reply(
        self,
        text: str = "",
        *,
        tool_calls: list[tuple[str, dict[str, Any]]] | None = None,
        status: int = 200,
        delay: float = 0.0,
        usage: dict[str, int] | None = None,
    ) -> None:
        """Queue the next chat completion: ``text``, or ``tool_calls`` [(name, arguments)], or an error ``status``."""
        self.replies.append(
            {"text": text, "tool_calls": tool_calls or [], "status": status, "delay": delay, "usage": usage}
        )

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    # -- lifecycle ----------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> OpenAIServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _instance(schema: dict[str, Any], text: str) -> Any:
    """The smallest value of a JSON schema (strings say ``text``): what a model asked for structure answers."""
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: _instance(sub, text) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [_instance(schema.get("items") or {}, text)]
    return {"integer": 0, "number": 0, "boolean": False, "null": None}.get(str(kind), text)


def _vector(text: str, dims: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [round(b / 255, 6) for b in digest[:dims]]


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        if self.owner.api_key is None:
            return True
        if self.headers.get("Authorization") == f"Bearer {self.owner.api_key}":
            return True
        self._json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
        return False

    def do_GET(self) -> None:
        with self.owner.lock:
            self.owner.requests.append({"path": self.path, "body": None, "headers": dict(self.headers)})
        if not self._authorised():
            return
        if self.path.rstrip("/").endswith("/models"):
            self.owner.model_lists += 1
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in self.owner.models]
            self._json(200, {"object": "list", "data": data})
            return
        self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.owner.lock:
            self.owner.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
        if not self._authorised():
            return
        if self.path.endswith("/embeddings"):
            inputs = body.get("input")
            items = inputs if isinstance(inputs, list) else [inputs]
            data = [{"object": "embedding", "index": i, "embedding": _vector(str(t))} for i, t in enumerate(items)]
            usage = {"prompt_tokens": len(items), "total_tokens": len(items)}
            self._json(200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage})
            return
        if not self.path.endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        if body.get("model") not in self.owner.models:
            msg = f"The model `{body.get('model')}` does not exist"
            self._json(404, {"error": {"message": msg, "type": "invalid_request_error", "code": "model_not_found"}})
            return
        with self.owner.lock:
            script = self.owner.replies.popleft() if self.owner.replies else None
        if script is None:
            last = next((m for m in reversed(body.get("messages") or []) if m.get("role") == "user"), {})
            wanted = (body.get("response_format") or {}).get("json_schema") or {}
            echo = f"echo: {last.get('content')}"
            script = {
                "text": json.dumps(_instance(wanted.get("schema") or {}, echo)) if wanted else echo,
                "tool_calls": [],
                "status": 200,
                "delay": 0,
                "usage": None,
            }
        if script["delay"]:
            time.sleep(script["delay"])
        if script["status"] != 200:
            self._json(script["status"], {"error": {"message": f"scripted {script['status']}", "type": "server_error"}})
            return
        calls = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": n, "arguments": json.dumps(a)},
            }
            for n, a in script["tool_calls"]
        ]
        text = script["text"]
        usage = script["usage"] or {
            "prompt_tokens": 11,
            "completion_tokens": max(1, len(text.split())),
            "total_tokens": 0,
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        cid = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text if not calls else None}
            if calls:
                message["tool_calls"] = calls
            choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            self._json(
                200,
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [choice],
                    "usage": usage,
                },
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def chunk(delta: dict[str, Any], finish_reason: str | None = None, with_usage: bool = False) -> None:
            frame: dict[str, Any] = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]
                if not with_usage
                else [],
            }
            if with_usage:
                frame["usage"] = usage
            self.wfile.write(f"data: {json.dumps(frame)}\n\n".encode())
            self.wfile.flush()

        chunk({"role": "assistant", "content": ""})
        if calls:
            for index, call in enumerate(calls):
                head = {"index": index, "id": call["id"], "type": "function"}
                chunk({"tool_calls": [{**head, "function": {"name": call["function"]["name"], "arguments": ""}}]})
                args = call["function"]["arguments"]
                half = len(args) // 2
                for part in (args[:half], args[half:]):
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
        else:
            words = text.split(" ")
            for i, word in enumerate(words):
                chunk({"content": word if i == 0 else " " + word})
        chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            chunk({}, with_usage=True)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True
