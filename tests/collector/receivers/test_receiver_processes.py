"""`serve --receivers N`: OTLP/HTTP in receiver processes in front of the writer process.

The real server with real exporters (OTLP/HTTP and OTLP/gRPC, both served by the receiver
processes) and raw protobuf: spans are stored and counted as in-process; a receiver killed with SIGKILL is replaced; when the writer process dies, the
request it held is answered 503 and the receivers exit, so that a restart owns the port.
(The status-code, partial-success, back-pressure and SIGKILL tests of test_receivers_e2e.py
run against two receiver processes too.)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

from serverproc import ServerProcess

PROTO = {"Content-Type": "application/x-protobuf"}
_START_NS = time.time_ns() - 600 * 10**9


def _receiver_pids(server: ServerProcess) -> list[int]:
    """Pids of the server's receiver processes (its multiprocessing children)."""
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text()
    return [int(pid) for pid in children.split()
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(condition, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def _request(trace: int, span_ids: list[bytes]) -> bytes:
    request = trace_service_pb2.ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for span_id in span_ids:
        span = scope.spans.add()
        span.trace_id = trace.to_bytes(16, "big")
        span.span_id = span_id
        span.name = "root"
        span.start_time_unix_nano = _START_NS
        span.end_time_unix_nano = _START_NS + 10**9
    return request.SerializeToString()


def _stored_span_ids(server: ServerProcess, trace: int) -> set[str]:
    response = server.api(f"/api/v1/traces/{trace.to_bytes(16, 'big').hex()}")
    if response.status_code == 404:
        return set()
    stack, found = list(response.json()["spans"]), set()
    while stack:
        node = stack.pop()
        found.add(node["span_id"])
        stack.extend(node.get("children") or [])
    return found


def test_sdk_exporters_spans_are_stored_through_receiver_processes(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ["--receivers", "2"]).start()
    try:
        trace_ids = []
        for exporter in (OTLPSpanExporter(endpoint=server.traces_url),
                         OTLPSpanExporter(endpoint=server.traces_url,
                                          compression=Compression.Gzip),
                         GrpcExporter(endpoint=server.grpc_target, insecure=True)):
            provider = TracerProvider(resource=Resource.create({"service.name": "agent"}))
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            tracer = provider.get_tracer("receivers")
            with tracer.start_as_current_span("POST /chat", kind=SpanKind.SERVER,
                                              attributes={"task.type": "chat"}) as root:
                with tracer.start_as_current_span("chat gpt-4o", attributes={
                        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}):
                    pass
            provider.shutdown()
            trace_ids.append(format(root.get_span_context().trace_id, "032x"))
        for trace_id in trace_ids:
            task = server.api(f"/api/v1/tasks/{trace_id}").json()
            assert (task["span_count"], task["task_type"]) == (2, "chat")
        health = server.api("/api/v1/health").json()
        assert health["receivers"] == {"processes": 2, "alive": 2, "restarts": 0}
        assert health["ingest"]["accepted_spans"] == 6
    finally:
        assert server.stop() == 0
    assert "stopped cleanly" in server.log


def test_rejected_spans_of_every_receiver_process_are_counted(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ["--receivers", "2"]).start()
    try:
        for i in range(4):  # a new connection each: the kernel spreads them over the processes
            body = _request(i + 1, [b"\x01" * 8, b"\x00" * 8])  # the all-zero span id is bad
            answer = httpx.post(server.traces_url, content=body, headers=PROTO)
            assert answer.status_code == 200
            partial = trace_service_pb2.ExportTraceServiceResponse.FromString(answer.content)
            assert partial.partial_success.rejected_spans == 1
        # a request of nothing but a bad span is counted too
        answer = httpx.post(server.traces_url, content=_request(9, [b"\x00" * 8]), headers=PROTO)
        assert answer.status_code == 200
        ingest = server.api("/api/v1/health").json()["ingest"]
        assert (ingest["accepted_spans"], ingest["rejected_spans"]) == (4, 5)
        assert "agentsla_ingest_rejected_spans_total 5" in server.api("/metrics").text
    finally:
        assert server.stop() == 0


def test_a_killed_receiver_process_is_replaced(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ["--receivers", "2"]).start()
    try:
        victim = _receiver_pids(server)[0]
        os.kill(victim, signal.SIGKILL)
        assert _wait_for(lambda: server.api("/api/v1/health").json()["receivers"] == {
            "processes": 2, "alive": 2, "restarts": 1})
        assert victim not in _receiver_pids(server)
        span_ids = [(i + 1).to_bytes(8, "big") for i in range(10)]
        for span_id in span_ids:
            answer = httpx.post(server.traces_url, content=_request(7, [span_id]), headers=PROTO)
            assert answer.status_code == 200
        assert _stored_span_ids(server, 7) == {s.hex() for s in span_ids}
    finally:
        assert server.stop() == 0
    assert "starting it again" in server.log


def test_writer_process_killed_answers_503_and_the_receivers_exit(tmp_path: Path) -> None:
    # the writer stalls on its first batch: that request is in flight when the process dies
    server = ServerProcess(tmp_path, ["--receivers", "1", "--fault-injection", "stall@1"]).start()
    receivers = _receiver_pids(server)
    answers: list[httpx.Response] = []
    sender = threading.Thread(target=lambda: answers.append(httpx.post(
        server.traces_url, content=_request(5, [b"\x05" * 8]), headers=PROTO, timeout=30)))
    sender.start()
    assert _wait_for(lambda: server.api("/api/v1/health").json()["writer"]["busy_s"] is not None)
    server.kill()
    sender.join(30)
    assert answers[0].status_code == 503 and answers[0].headers["retry-after"] == "1"
    # the client must reconnect (to the restarted server), not retry on this receiver
    assert answers[0].headers["connection"] == "close"
    assert _wait_for(lambda: not any(map(_alive, receivers)), timeout=15)
    restarted = server.restarted(["--receivers", "1"]).start()
    try:
        answer = httpx.post(restarted.traces_url, content=_request(5, [b"\x05" * 8]),
                            headers=PROTO)
        assert answer.status_code == 200
        assert _stored_span_ids(restarted, 5) == {"05" * 8}
    finally:
        assert restarted.stop() == 0


def test_receivers_of_a_killed_writer_exit_while_a_client_still_sends_its_body(
        tmp_path: Path) -> None:
    # a body trickled a byte a second keeps its request in flight far beyond the exit bound:
    # without a writer nothing can commit, so the receiver does not wait for it (read_timeout)
    server = ServerProcess(tmp_path, ["--receivers", "1", "--read-timeout", "300"]).start()
    receivers = _receiver_pids(server)
    stop = threading.Event()

    def trickle() -> None:
        with socket.create_connection(("127.0.0.1", server.http_port)) as conn:
            conn.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n")
            while not stop.wait(1.0):
                try:
                    conn.sendall(b"\x00")
                except OSError:
                    return

    sender = threading.Thread(target=trickle)
    sender.start()
    try:
        time.sleep(1.5)
        server.kill()
        assert _wait_for(lambda: not any(map(_alive, receivers)), timeout=30)
    finally:
        stop.set()
        sender.join(10)


def test_a_writer_that_gives_up_answers_503_through_the_receivers(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ["--receivers", "2", "--fault-injection", "crash@1+",
                                      "--writer-max-restarts", "0"]).start()
    receivers = _receiver_pids(server)
    answer = httpx.post(server.traces_url, content=_request(6, [b"\x06" * 8]), headers=PROTO)
    assert answer.status_code == 503 and "retry-after" in answer.headers
    assert server.proc.wait(30) == 1
    server.kill()  # collects the log
    assert not any(map(_alive, receivers))
    assert "the writer gave up after 1 unexpected errors in a row" in server.log


def _serve(server: ServerProcess, *flags: str) -> subprocess.Popen:
    """`agentsla serve` on the server's ports, its output readable line by line."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentsla", "serve", "--data-dir", str(server.data_dir),
         "--otlp-http-port", str(server.http_port), "--otlp-grpc-port", str(server.grpc_port),
         "--api-port", str(server.api_port), *flags],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _read_until(proc: subprocess.Popen, text: str) -> str:
    """The server's output up to the first line containing text (or its exit)."""
    seen = ""
    for line in proc.stdout:
        seen += line
        if text in line:
            break
    return seen


def test_a_start_waits_for_the_port_the_killed_servers_receivers_still_hold(
        tmp_path: Path) -> None:
    # a listening socket on the OTLP/HTTP port stands in for a killed writer's receiver
    # processes, which hold it until they exit; it goes once the server says it waits
    server = ServerProcess(tmp_path)
    holder = socket.create_server(("127.0.0.1", server.http_port))
    proc = _serve(server, "--receivers", "1", "--port-wait", "60")
    try:
        waiting = _read_until(proc, "is in use")
        holder.close()
        serving = _read_until(proc, "agentsla serving")
        assert "port_wait" in waiting and str(server.http_port) in waiting
        assert "agentsla serving" in serving
        answer = httpx.post(server.traces_url, content=_request(9, [b"\x09" * 8]),
                            headers=PROTO, timeout=30)
        assert answer.status_code == 200
    finally:
        holder.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0


def test_a_port_held_beyond_port_wait_is_a_clear_error(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path)
    with socket.create_server(("127.0.0.1", server.http_port)):
        proc = _serve(server, "--receivers", "1", "--port-wait", "1")
        output, _ = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "address already in use" in output.lower() and str(server.http_port) in output
