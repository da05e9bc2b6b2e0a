"""The Node cases: real Node packages (the OpenTelemetry Node SDK and OTLP/protobuf exporter, its
HTTP instrumentation, the Vercel AI SDK's own telemetry) writing the spans of a Node agent.

Each case is a script in tests/corpus/node run against the fake LLM server (CASES). `capture(name)`
runs it with its exporter pointed at a local receiver that keeps the protobuf bodies;
`send(name, endpoint)` points it at a real OTLP/HTTP endpoint. Needs node and `npm ci` in
tests/corpus/node (not at test time: the fixtures are committed; the live test skips without them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from fake_llm import FakeLLM

HERE = Path(__file__).parent / "node"
_SDK = ("@opentelemetry/sdk-trace-node", "@opentelemetry/exporter-trace-otlp-proto")


@dataclass(frozen=True)
class NodeCase:
    """A Node case: its script and argument, the fake server's script, the packages it shows."""

    script: tuple[str, ...]
    llm: tuple[str, ...]
    packages: tuple[str, ...]


CASES = {
    # trace.js: a hand-instrumented agent; the model answers 429, the agent retries once.
    "node_agent_retried_429": NodeCase(("trace.js",), ("429", "ok"),
                                       _SDK + ("@opentelemetry/instrumentation-http",)),
    # vercel_ai.js: generateText with a tool; the model asks for search_kb, then answers.
    "vercel_ai_tool_ok": NodeCase(("vercel_ai.js", "ok"), ("tool:search_kb", "ok"),
                                  _SDK + ("ai", "@ai-sdk/openai")),
    # vercel_ai.js: the model answers 429 to the call and to the SDK's two retries.
    "vercel_ai_rate_limited": NodeCase(("vercel_ai.js", "rate_limited"), ("429", "429", "429"),
                                       _SDK + ("ai", "@ai-sdk/openai")),
}


def available() -> bool:
    """Tell whether node and the cases' npm packages are installed here."""
    return shutil.which("node") is not None and (HERE / "node_modules").is_dir()


def versions(name: str) -> dict[str, str]:
    """The installed versions of the packages a case uses."""
    return {p: json.loads((HERE / "node_modules" / p / "package.json").read_text())["version"]
            for p in CASES[name].packages}


def _run(name: str, traces_url: str) -> str:
    """Run a case's script against a fresh fake server; return the trace id it printed."""
    case = CASES[name]
    with FakeLLM(case.llm) as llm:
        env = dict(os.environ, LLM_URL=llm.url, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=traces_url)
        done = subprocess.run(["node", *case.script], cwd=HERE, env=env, capture_output=True,
                              text=True, timeout=120, check=True)
    return json.loads(done.stdout.splitlines()[-1])["trace_id"]


def send(name: str, endpoint: str) -> str:
    """Play a case to an OTLP/HTTP endpoint; return its trace id."""
    return _run(name, endpoint.rstrip("/") + "/v1/traces")


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("content-length"):
        return handler.rfile.read(int(handler.headers["content-length"]))
    body = b""  # Node's exporter sends chunked bodies
    while size := int(handler.rfile.readline().strip(), 16):
        body += handler.rfile.read(size)
        handler.rfile.readline()
    handler.rfile.readline()
    return body


def capture(name: str) -> tuple[ExportTraceServiceRequest, str]:
    """Play a case into a local receiver; return every exported span as one request."""
    merged = ExportTraceServiceRequest()

    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            """Keep output quiet."""

        def do_POST(self) -> None:
            """Keep one export and acknowledge it."""
            merged.resource_spans.extend(
                ExportTraceServiceRequest.FromString(_read_body(self)).resource_spans)
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        trace_id = _run(name, f"http://127.0.0.1:{server.server_address[1]}/v1/traces")
    finally:
        server.shutdown()
        server.server_close()
    return merged, trace_id
