"""A small local stand-in for an OpenAI-compatible and an Anthropic API, and for a tool server.

It answers from a script: each request takes the next step (`ok`, `429`, `500`, `503`, `529`,
`slow:SECONDS`, `tool:NAME`), and `ok` once the script is used up. OpenAI's
/v1/chat/completions and Anthropic's /v1/messages answer in their own shapes (errors too, so
the real SDKs raise their real exceptions); any other path is a tool answering JSON.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable

#: Error answers per status: (OpenAI error type, Anthropic error type, message).
_ERRORS = {429: ("rate_limit_exceeded", "rate_limit_error", "Rate limit reached"),
           500: ("server_error", "api_error", "The server had an error"),
           503: ("server_error", "api_error", "Service unavailable"),
           529: ("server_error", "overloaded_error", "Overloaded")}


def _openai_ok(model: str, tool: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "Here is your answer."}
    if tool:
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": tool, "arguments": json.dumps({"query": "refund policy"})}}]}
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": "fp_local",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if tool else "stop"}],
            "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28}}


def _anthropic_ok(model: str) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": "Here is your answer."}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 21, "output_tokens": 7}}


def _error_body(path: str, status: int) -> dict[str, Any]:
    openai_type, anthropic_type, message = _ERRORS[status]
    if path.endswith("/messages"):
        return {"type": "error", "error": {"type": anthropic_type, "message": message}}
    return {"error": {"message": message, "type": openai_type, "param": None,
                      "code": openai_type}}


class FakeLLM:
    """The server on a free loopback port; `with FakeLLM(["429", "ok"]) as llm: llm.url`."""

    def __init__(self, script: Iterable[str] = ()) -> None:
        self.steps: deque[str] = deque(script)
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:PORT."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def next_step(self, path: str) -> str:
        """Take the next scripted step for a request to path."""
        with self._lock:
            self.requests.append(path)
            return self.steps.popleft() if self.steps else "ok"

    def __enter__(self) -> "FakeLLM":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(llm: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            """Keep test output quiet."""

        def do_GET(self) -> None:
            """Answer a tool request."""
            self._answer({})

        def do_POST(self) -> None:
            """Answer a model or tool request."""
            length = int(self.headers.get("content-length") or 0)
            self._answer(json.loads(self.rfile.read(length) or b"{}"))

        def _answer(self, body: dict[str, Any]) -> None:
            step = llm.next_step(self.path)
            kind, _, arg = step.partition(":")
            if kind == "slow":
                time.sleep(float(arg))
            if kind.isdigit():
                return self._send(int(kind), _error_body(self.path, int(kind)))
            model = body.get("model", "unknown")
            if self.path.endswith("/chat/completions"):
                return self._send(200, _openai_ok(model, arg if kind == "tool" else None))
            if self.path.endswith("/messages"):
                return self._send(200, _anthropic_ok(model))
            return self._send(200, {"ok": True, "path": self.path})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                # SDKs honour these: their retries wait 10 ms, not seconds.
                self.send_header("retry-after-ms", "10")
                self.send_header("x-request-id", "req_local")
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and left: nothing to answer

    return Handler
