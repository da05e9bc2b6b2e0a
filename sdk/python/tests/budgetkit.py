"""Real local servers and an in-memory span pipeline for the agentsla-budget tests."""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator
from urllib.parse import parse_qs, urlparse

import uvicorn
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentsla_budget import BudgetSpanProcessor, wire


@dataclass
class Spans:
    """A tracer whose ended spans are kept in memory."""

    provider: TracerProvider
    exporter: InMemorySpanExporter

    @property
    def tracer(self):
        """Return a tracer of this provider."""
        return self.provider.get_tracer("budget-tests")

    def ended(self) -> list[ReadableSpan]:
        """Return the spans ended so far, in end order."""
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        """Return the ended spans called name."""
        return [span for span in self.ended() if span.name == name]

    def one(self, name: str, timeout_s: float = 10) -> ReadableSpan:
        """Return the one span called name, waiting for a server to end it after answering."""
        deadline = time.monotonic() + timeout_s
        while not self.named(name) and time.monotonic() < deadline:
            time.sleep(0.01)
        (span,) = self.named(name)
        return span


def span_pipeline() -> Spans:
    """Return a provider stamping budgets (BudgetSpanProcessor) and keeping spans in memory."""
    provider = TracerProvider()
    provider.add_span_processor(BudgetSpanProcessor())
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Spans(provider, exporter)


@dataclass
class Seen:
    """What one request to the test server carried."""

    path: str
    headers: dict[str, str]
    body: bytes

    def budget(self) -> wire.WireBudget | None:
        """Return the decoded agentsla-budget header, if it came."""
        value = self.headers.get(wire.HEADER)
        return wire.decode(value) if value is not None else None


@dataclass
class SlowServer:
    """An http.server on loopback: `?delay=S` sleeps, `?status=N` answers N; keeps every request."""

    url: str
    seen: list[Seen] = field(default_factory=list)


def _completion() -> bytes:
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 0,
                       "model": "tail-model", "choices": [{
                           "index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "ok"}}]}).encode()


def _handler(server: SlowServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            url = urlparse(self.path)
            server.seen.append(Seen(url.path, {k.lower(): v for k, v in self.headers.items()},
                                    body))
            query = parse_qs(url.query)
            time.sleep(float(query.get("delay", ["0"])[0]))
            if "slow" in url.path:
                time.sleep(5)
            status = int(query.get("status", ["200"])[0])
            payload = _completion() if url.path.endswith("/chat/completions") else b'{"ok": true}'
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up: that is what the budget is for

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:
            """Keep the test output quiet."""
    return Handler


@contextmanager
def slow_server() -> Iterator[SlowServer]:
    """Run a SlowServer on a free loopback port; paths containing `slow` take 5 s."""
    server = SlowServer(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextmanager
def asgi_server(app: Any) -> Iterator[str]:
    """Serve an ASGI app under uvicorn on a free loopback port in a thread; yield its URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
