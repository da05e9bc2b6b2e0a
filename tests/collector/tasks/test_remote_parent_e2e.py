"""A platform behind a traceparent-propagating upstream, end to end through `agentsla serve`.

The real OpenTelemetry SDK extracts a `traceparent` (a remote SpanContext, as behind an
instrumented load balancer that exports elsewhere) and its OTLP exporters (HTTP and gRPC) send
the spans with the is_remote flags; a raw protobuf request without flags stands for older SDKs.
"""

from __future__ import annotations

import time

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status as PbStatus
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from serverproc import ServerProcess

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
UPSTREAM_SPAN = "b7ad6b7169203331"  # the load balancer's span: never sent to agentsla


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    proc = ServerProcess(tmp_path_factory.mktemp("remote") / "data",
                         extra_args=["--root-grace", "1s"]).start()
    yield proc
    proc.stop()


def finished_task(server: ServerProcess, task_id: str, wait_s: float = 60.0) -> dict:
    """Poll the task until it is finished (the root-grace sweep runs every 10 s at least)."""
    deadline = time.monotonic() + wait_s
    while True:
        response = server.api(f"/api/v1/tasks/{task_id}")
        if response.status_code == 200 and response.json()["finished"]:
            return response.json()
        assert time.monotonic() < deadline, f"task {task_id} not finished: {response.text}"
        time.sleep(0.5)


def emit_behind_load_balancer(exporter, trace_id: str) -> None:
    """Serve one request whose traceparent came from upstream; the model call is rate limited."""
    provider = TracerProvider(resource=Resource.create({"service.name": "chat-api"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agentsla-tests")
    upstream = TraceContextTextMapPropagator().extract(
        {"traceparent": f"00-{trace_id}-{UPSTREAM_SPAN}-01"})
    with tracer.start_as_current_span("POST /chat", context=upstream, kind=SpanKind.SERVER,
                                      attributes={"http.response.status_code": 503}) as root:
        with tracer.start_as_current_span("invoke_agent planner", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}):
            with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT, attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}) as call:
                call.set_status(Status(StatusCode.ERROR, "Error code: 429"))
        root.set_status(Status(StatusCode.ERROR))
    provider.shutdown()


@pytest.mark.parametrize(("make_exporter", "trace_id"), [
    # OTLP/HTTP protobuf
    (lambda s: HttpExporter(endpoint=s.traces_url), "1" * 31 + "a"),
    # OTLP/gRPC
    (lambda s: GrpcExporter(endpoint=s.grpc_target, insecure=True), "2" * 31 + "b"),
])
def test_root_with_remote_parent_finishes_the_task(server, make_exporter, trace_id) -> None:
    emit_behind_load_balancer(make_exporter(server), trace_id)
    task = finished_task(server, trace_id, wait_s=20.0)
    assert task["outcome"] == "failed" and task["root_name"] == "POST /chat"
    assert task["first_failing_hop"]["kind"] == "model"
    assert task["first_failing_hop"]["name"] == "gpt-4o"
    assert task["first_failing_hop"]["reason"] == "rate_limited"


def pb_span(span_id: str, parent: str, name: str, kind: int, start_ms: int, end_ms: int,
            error: str | None = None) -> Span:
    t0 = time.time_ns() - 10**9
    return Span(trace_id=bytes.fromhex(TRACE_ID), span_id=bytes.fromhex(span_id),
                parent_span_id=bytes.fromhex(parent), name=name, kind=kind,
                start_time_unix_nano=t0 + start_ms * 10**6, end_time_unix_nano=t0 + end_ms * 10**6,
                status=PbStatus(code=PbStatus.STATUS_CODE_ERROR, message=error) if error else None)


def test_server_span_without_flags_becomes_root_after_the_grace(server) -> None:
    # An older SDK: no flags at all. The SERVER span's parent (upstream) never arrives.
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    scope.spans.extend([
        pb_span("00000000000000a1", UPSTREAM_SPAN, "POST /chat", Span.SPAN_KIND_SERVER, 0, 900,
                error="upstream tool failed"),
        pb_span("00000000000000a2", "00000000000000a1", "search", Span.SPAN_KIND_CLIENT, 10, 800,
                error="ReadTimeout"),
    ])
    scope.spans[1].attributes.add(key="gen_ai.tool.name").value.string_value = "web_search"
    scope.spans[1].attributes.add(key="gen_ai.operation.name").value.string_value = "execute_tool"
    response = httpx.post(server.traces_url, content=request.SerializeToString(),
                          headers={"Content-Type": "application/x-protobuf"}, timeout=10)
    assert response.status_code == 200, response.text
    task = finished_task(server, TRACE_ID)
    assert task["outcome"] == "failed" and task["root_span_id"] == "00000000000000a1"
    assert task["first_failing_hop"]["kind"] == "tool"
    assert task["first_failing_hop"]["name"] == "web_search"
    assert task["first_failing_hop"]["reason"] == "timeout"
