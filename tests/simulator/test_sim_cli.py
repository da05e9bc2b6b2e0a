"""`agentsla simulate` over real OTLP (HTTP and gRPC) and `agentsla demo` against a stand-in."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent import futures
from http.server import ThreadingHTTPServer
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

import fake_server
from agentsla.cli import build_parser, main

FAKE = Path(fake_server.__file__)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_receiver():
    """An in-process OTLP/HTTP receiver counting spans."""
    fake_server.SPANS.update(count=0, authorization=None)
    server = ThreadingHTTPServer(("127.0.0.1", 0), fake_server.Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", fake_server.SPANS
    server.shutdown()
    server.server_close()


def _truth(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_simulate_exports_every_span_over_http(http_receiver, tmp_path, capsys) -> None:
    url, received = http_receiver
    truth = tmp_path / "truth.jsonl"
    rc = main(["simulate", "--scenario", "tool_no_timeout", "--tasks", "40", "--fast",
               "--seed", "5", "--endpoint", url, "--header", "Authorization=Bearer s3cret",
               "--truth", str(truth), "--quiet"])
    assert rc == 0
    lines = _truth(truth)
    assert lines[-1]["tasks"] == 40 and not lines[-1]["interrupted"]
    assert received["count"] == lines[-1]["spans"]  # force_flush + shutdown sent everything
    assert received["authorization"] == "Bearer s3cret"
    assert "40 tasks" in capsys.readouterr().out


def test_simulate_endpoint_from_the_environment(http_receiver) -> None:
    url, received = http_receiver
    args = build_parser().parse_args(["simulate", "--tasks", "5", "--fast", "--seed", "1",
                                      "--json"])
    assert args.run(args, {"OTEL_EXPORTER_OTLP_ENDPOINT": url}) == 0
    assert received["count"] > 0


class _Collector(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self) -> None:
        self.spans = 0

    def Export(self, request, context):  # noqa: N802
        self.spans += sum(len(ss.spans) for rs in request.resource_spans
                          for ss in rs.scope_spans)
        return trace_service_pb2.ExportTraceServiceResponse()


def test_simulate_exports_over_grpc(tmp_path) -> None:
    collector = _Collector()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        truth = tmp_path / "truth.jsonl"
        rc = main(["simulate", "--schedule", "baseline:10,runaway_loop:10", "--fast", "--seed",
                   "2", "--protocol", "grpc", "--endpoint", f"http://127.0.0.1:{port}",
                   "--truth", str(truth), "--quiet"])
        assert rc == 0
        assert collector.spans == _truth(truth)[-1]["spans"] > 0
    finally:
        server.stop(None)


def test_simulate_rejects_an_unknown_scenario(capsys) -> None:
    assert main(["simulate", "--scenario", "nope", "--tasks", "1", "--fast"]) == 2
    assert "unknown scenario" in capsys.readouterr().err


def _demo(data: Path, ports: dict, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "agentsla", "demo", "--data-dir", str(data), "--no-dashboard",
         "--otlp-http-port", str(ports["http"]), "--otlp-grpc-port", str(ports["grpc"]),
         "--api-port", str(ports["api"]), "--seed", "4", "--duration", "30", "--speed", "0",
         "--server-command", f"{sys.executable} {FAKE}", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _spans_seen(api_port: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            spans = httpx.get(f"http://127.0.0.1:{api_port}/api/v1/health").json()["spans"]
            if spans:
                return spans
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    return 0


def test_demo_plays_then_stops_cleanly_on_sigterm(tmp_path) -> None:
    ports = {"http": _free_port(), "grpc": _free_port(), "api": _free_port()}
    data = tmp_path / "demo-data"
    demo = _demo(data, ports)
    try:
        assert _spans_seen(ports["api"], 30) > 0
        demo.send_signal(signal.SIGTERM)
        out, _ = demo.communicate(timeout=30)
    finally:
        if demo.poll() is None:
            demo.kill()
    assert demo.returncode == 0, out.decode(errors="replace")
    with pytest.raises(httpx.HTTPError):  # the server went down with the demo
        httpx.get(f"http://127.0.0.1:{ports['api']}/api/v1/health", timeout=1)
    assert (data / "demo-truth.jsonl").exists()
    # Twice works: same data dir, reset first, and exit once the schedule has played.
    (data / "agentsla.duckdb").write_text("")
    again = _demo(data, ports, "--reset", "--exit-when-done")
    out, _ = again.communicate(timeout=60)
    assert again.returncode == 0, out.decode(errors="replace")
    assert not (data / "agentsla.duckdb").exists()
    assert _truth(data / "demo-truth.jsonl")[-1]["tasks"] > 0
