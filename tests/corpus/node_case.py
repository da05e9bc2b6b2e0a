"""The Node case: the OpenTelemetry Node SDK, its HTTP instrumentation and OTLP/protobuf exporter.

tests/corpus/node/trace.js is a hand-instrumented Node agent whose HTTP calls the real
@opentelemetry/instrumentation-http records. `capture()` runs it against the fake LLM server with
its exporter pointed at a local receiver that keeps the protobuf bodies; `send(endpoint)` points
it at a real OTLP/HTTP endpoint. Needs node and `npm ci` in tests/corpus/node (not at test time:
the fixture is committed; the live test skips without them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from fake_llm import FakeLLM

NAME = "node_agent_retried_429"
SCRIPT = ("429", "ok")
HERE = Path(__file__).parent / "node"
PACKAGES = ("@opentelemetry/sdk-trace-node", "@opentelemetry/exporter-trace-otlp-proto",
            "@opentelemetry/instrumentation-http")


def available() -> bool:
    """Tell whether node and the case's npm packages are installed here."""
    return shutil.which("node") is not None and (HERE / "node_modules").is_dir()


def versions() -> dict[str, str]:
    """The installed versions of the packages the case uses."""
    return {p: json.loads((HERE / "node_modules" / p / "package.json").read_text())["version"]
            for p in PACKAGES}


def _run(traces_url: str) -> str:
    """Run trace.js against a fresh fake server; return the trace id it printed."""
    with FakeLLM(SCRIPT) as llm:
        env = dict(os.environ, LLM_URL=llm.url, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=traces_url)
        done = subprocess.run(["node", "trace.js"], cwd=HERE, env=env, capture_output=True,
                              text=True, timeout=120, check=True)
    return json.loads(done.stdout.splitlines()[-1])["trace_id"]


def send(endpoint: str) -> str:
    """Play the case to an OTLP/HTTP endpoint; return its trace id."""
    return _run(endpoint.rstrip("/") + "/v1/traces")


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("content-length"):
        return handler.rfile.read(int(handler.headers["content-length"]))
    body = b""  # Node's exporter sends chunked bodies
    while size := int(handler.rfile.readline().strip(), 16):
        body += handler.rfile.read(size)
        handler.rfile.readline()
    handler.rfile.readline()
    return body


def capture() -> tuple[ExportTraceServiceRequest, str]:
    """Play the case into a local receiver; return every exported span as one request."""
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
        trace_id = _run(f"http://127.0.0.1:{server.server_address[1]}/v1/traces")
    finally:
        server.shutdown()
        server.server_close()
    return merged, trace_id
