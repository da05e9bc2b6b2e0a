"""A stand-in for `agentsla serve` in tests: OTLP/HTTP /v1/traces and GET /api/v1/health.

Takes the serve flags the demo passes; health reports how many spans it received.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse)

SPANS: dict = {"count": 0, "authorization": None}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    """Answers OTLP exports and health checks."""

    def log_message(self, *args: object) -> None:
        """Stay quiet."""

    def _reply(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        """Decode an OTLP/HTTP protobuf export and count its spans."""
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        request = ExportTraceServiceRequest.FromString(body)
        n = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
        with LOCK:
            SPANS["count"] += n
            SPANS["authorization"] = self.headers.get("Authorization")
        self._reply(200, ExportTraceServiceResponse().SerializeToString(),
                    "application/x-protobuf")

    def do_GET(self) -> None:  # noqa: N802
        """Health: ok and the number of spans received."""
        with LOCK:
            body = json.dumps({"status": "ok", "spans": SPANS["count"]}).encode()
        self._reply(200 if self.path == "/api/v1/health" else 404, body, "application/json")


def main() -> None:
    """Serve until SIGTERM."""
    parser = argparse.ArgumentParser()
    for flag in ("--data-dir", "--host", "--otlp-http-port", "--otlp-grpc-port", "--api-port",
                 "--config"):
        parser.add_argument(flag)
    args, _ = parser.parse_known_args()
    servers = [ThreadingHTTPServer((args.host, int(port)), Handler)
               for port in (args.otlp_http_port, args.api_port)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    for server in servers:
        server.shutdown()
    sys.exit(0)


if __name__ == "__main__":
    main()
