"""`agentsla serve --store chdb:///path`: every role in one process over the ClickHouse engine.

A real server on loopback takes spans from the OpenTelemetry SDK's OTLP/HTTP exporter, writes
them into the exporter-format otel_traces table, materializes them on its own thread, and
answers the task API from ClickHouse SQL. A bad store is an error at start.
"""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from serverproc import ServerProcess


@pytest.fixture
def chdb_server(tmp_path):
    """A real `agentsla serve` over chdb, materializing every 0.2 s."""
    proc = ServerProcess(tmp_path / "data", extra_args=[
        "--store", f"chdb://{tmp_path / 'chdb'}", "--materialize-interval", "0.2",
        "--root-grace", "0"]).start(timeout=60)
    yield proc
    if proc.proc and proc.proc.poll() is None:
        proc.stop()


def _send(url: str) -> None:
    """One task, as an SDK exports it: a gateway over a tool call that times out."""
    provider = TracerProvider(resource=Resource.create({"service.name": "gw"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url)))
    tracer = provider.get_tracer("test")
    root_attrs = {"task.id": "served", "tenant.id": "acme"}
    with tracer.start_as_current_span("POST /ask", kind=SpanKind.SERVER,
                                      attributes=root_attrs) as root:
        with tracer.start_as_current_span("search", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
                "error.type": "timeout", "hop.timeout_ms": 5000}) as tool:
            tool.set_status(Status(StatusCode.ERROR, "timed out"))
        root.set_status(Status(StatusCode.ERROR))
    provider.shutdown()


def _task(api: str, deadline_s: float = 30.0) -> dict:
    """The task once the materializer has judged it (bounded wait, not a timing assertion)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        answer = httpx.get(f"{api}/api/v1/tasks/served", timeout=5)
        if answer.status_code == 200 and answer.json().get("finished"):
            return answer.json()
        time.sleep(0.2)
    raise AssertionError(f"task never finished: {answer.status_code} {answer.text}")


def test_serve_over_chdb_ingests_materializes_and_answers(chdb_server):
    _send(chdb_server.traces_url)
    task = _task(chdb_server.api_url)
    assert (task["outcome"], task["tenant_id"], task["span_count"]) == ("failed", "acme", 2)
    assert task["first_failing_hop"]["kind"] == "tool"
    assert (task["first_failing_hop"]["name"], task["first_failing_hop"]["reason"]) == \
        ("search", "timeout")
    health = httpx.get(f"{chdb_server.api_url}/api/v1/health", timeout=5).json()
    assert health["materializer"]["failed_passes"] == 0 and health["store"].startswith("chdb")


def test_a_bad_store_fails_at_start(tmp_path):
    """A relative chdb path is refused with the reason, before any listener opens."""
    done = subprocess.run([sys.executable, "-m", "agentsla", "serve", "--data-dir",
                           str(tmp_path), "--store", "chdb://relative"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "three slashes" in done.stderr
