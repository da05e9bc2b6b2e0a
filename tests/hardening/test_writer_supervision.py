"""Writer supervision against the real server: no silent death, no silent loss, no endless wait.

No real input makes the writer fail (it owns every key and has converted every type), so these
tests use the documented, off-by-default `--fault-injection` setting, which the writer thread's
real code path checks (collector/faults.py): `write_error@N` fails the Nth batch's write as a
DuckDB constraint error would, `crash@N` raises an unexpected error with the Nth batch in hand,
`stall@N` blocks the writer on the Nth batch until the process stops.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from google.rpc import code_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agentload import PROTO, agent_task, mismatches, stored_spans
from serverproc import ServerProcess


def _post(client: httpx.Client, server: ServerProcess, body: bytes) -> httpx.Response:
    return client.post(server.traces_url, content=body, headers=PROTO)


def _health(server: ServerProcess) -> httpx.Response:
    return httpx.get(f"{server.api_url}/api/v1/health", timeout=10)


def _stored_once(server: ServerProcess, task) -> list[str]:
    with httpx.Client(timeout=30) as client:
        return mismatches(task, stored_spans(client, server.api_url, task.trace_id))


def test_internal_write_error_is_503_and_the_retry_is_stored_once(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ["--fault-injection", "write_error@1"]).start()
    task = agent_task(1, 0)
    try:
        with httpx.Client(timeout=30) as client:
            first = _post(client, server, task.body)
            # retryable, as the OTLP spec says exporters must retry: 503 + Retry-After, UNAVAILABLE
            assert first.status_code == 503 and first.headers["retry-after"] == "1"
            assert status_pb2.Status.FromString(first.content).code == code_pb2.UNAVAILABLE
            assert _post(client, server, task.body).status_code == 200
        assert _stored_once(server, task) == []
        ingest = _health(server).json()["ingest"]
        assert (ingest["failed_spans"], ingest["accepted_spans"]) == (5, 5)
    finally:
        assert server.stop() == 0
    # loud: the error and its traceback are in the log
    assert "writing 5 spans failed; answered 503" in server.log and "Traceback" in server.log


def test_grpc_exporter_retries_an_internal_write_error(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ["--fault-injection", "write_error@1"]).start()
    try:
        exporter = OTLPSpanExporter(endpoint=server.grpc_target, insecure=True, timeout=30)
        provider = TracerProvider(resource=Resource.create({"service.name": "grpc-agent"}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        with provider.get_tracer("supervision").start_as_current_span("POST /grpc") as root:
            pass
        provider.shutdown()
        trace_id = format(root.get_span_context().trace_id, "032x")
        with httpx.Client(timeout=30) as client:  # UNAVAILABLE made the exporter retry
            assert [s["name"] for s in stored_spans(client, server.api_url, trace_id)] == [
                "POST /grpc"]
    finally:
        assert server.stop() == 0


def test_writer_crash_answers_503_restarts_and_serves_on(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ["--fault-injection", "crash@2"]).start()
    a, b, c = (agent_task(2, seq) for seq in range(3))
    try:
        with httpx.Client(timeout=30) as client:
            assert _post(client, server, a.body).status_code == 200
            crashed = _post(client, server, b.body)  # the batch in hand when the writer failed
            assert crashed.status_code == 503 and "retry-after" in crashed.headers
            health = _health(server)
            assert health.status_code == 200
            writer = health.json()["writer"]
            assert writer["alive"] and writer["restarts"] == 1
            assert writer["last_error"].startswith("InjectedFault: fault_injection crash@2")
            assert _post(client, server, b.body).status_code == 200
            assert _post(client, server, c.body).status_code == 200
        assert [_stored_once(server, t) for t in (a, b, c)] == [[], [], []]
    finally:
        assert server.stop() == 0
    assert "the writer failed unexpectedly (1 in a row)" in server.log
    assert "Traceback" in server.log and "InjectedFault" in server.log


def test_writer_failing_again_and_again_exits_nonzero(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ["--fault-injection", "crash@1+",
                                      "--writer-max-restarts", "2"]).start()
    with httpx.Client(timeout=30) as client:
        statuses = []
        for seq in range(3):
            try:
                statuses.append(_post(client, server, agent_task(3, seq).body).status_code)
            except httpx.TransportError:  # the process may already be on its way out
                statuses.append(None)
    assert statuses[:2] == [503, 503] and statuses[2] in (503, None)
    # the third error in a row is one more than the two restarts allowed: exit 1
    assert server.proc.wait(30) == 1
    server.kill()  # collects the log of the exited process
    assert "the writer gave up after 3 unexpected errors in a row" in server.log


def test_stalled_writer_times_out_requests_and_turns_health_503(tmp_path: Path) -> None:
    # the first batch stalls: no earlier commit whose timing under load could shift the count
    args = ["--fault-injection", "stall@1", "--submit-timeout", "3s",
            "--writer-stall-timeout", "1s"]
    server = ServerProcess(tmp_path / "data", args).start()
    b, c = agent_task(4, 0), agent_task(4, 1)
    with httpx.Client(timeout=60) as client:
        began = time.monotonic()
        stuck = _post(client, server, b.body)  # the writer holds b and never returns
        assert stuck.status_code == 503 and stuck.headers["retry-after"] == "1"
        assert time.monotonic() - began >= 3.0  # answered at the bound, not before
        assert "not committed within 3 s" in status_pb2.Status.FromString(stuck.content).message
        assert _post(client, server, c.body).status_code == 503  # queued behind b, withdrawn
    health = _health(server)
    assert health.status_code == 503, health.text
    body = health.json()
    assert body["status"] == "unavailable" and body["writer"]["stalled"]
    assert body["writer"]["alive"] and body["writer"]["busy_s"] > 1.0
    assert server.stop() == 0  # shutdown releases the stall; b is committed then
    server = ServerProcess(tmp_path / "data").start()
    try:
        # b was in the writer's hands when answered 503: stored (once); c was withdrawn from
        # the queue at its 503 and never committed. The client's retry of b is a duplicate the
        # writer drops.
        assert _stored_once(server, b) == []
        with httpx.Client(timeout=30) as client:
            assert stored_spans(client, server.api_url, c.trace_id) == []
            assert _post(client, server, b.body).status_code == 200
        assert _stored_once(server, b) == []
        assert _health(server).json()["ingest"]["duplicate_spans"] == 5
    finally:
        assert server.stop() == 0


def test_health_reports_the_writer(server: ServerProcess) -> None:
    task = agent_task(5, 0)
    with httpx.Client(timeout=30) as client:
        assert _post(client, server, task.body).status_code == 200
    health = _health(server)
    assert health.status_code == 200 and health.json()["status"] == "ok"
    writer = health.json()["writer"]
    assert writer["alive"] and not writer["stalled"] and writer["restarts"] == 0
    assert writer["last_commit_ns"] > 0 and writer["last_error"] is None
    assert writer["queued_requests"] == 0 and writer["queued_bytes"] == 0
