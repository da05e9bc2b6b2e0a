"""The real server on loopback, fed by the real OpenTelemetry exporters and by raw HTTP."""

from __future__ import annotations

import gzip
import json
import threading
import time
from pathlib import Path

import grpc
import httpx
import pytest
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentsla.collector.receivers.decode import zstd  # compression.zstd, or its backport
from serverproc import ServerProcess

FIXTURES = Path(__file__).parents[2] / "data" / "otlp"
ATTRIBUTES = {
    "task.type": "support_chat",
    "a.string": "héllo <b>",
    "a.bool": True,
    "a.int": -(2**62),
    "a.double": 3.25,
    "a.strings": ("x", "y"),
    "a.ints": (1, 2, 3),
    "a.doubles": (0.5, 1.5),
    "a.bools": (True, False),
}


def flatten(nodes: list[dict]) -> list[dict]:
    """Flatten a span tree as the API returns it (children nested under `children`)."""
    out: list[dict] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.get("children") or [])
    return out


def trace_spans(server: ServerProcess, trace_id: str) -> list[dict]:
    """Spans of a trace, through the API."""
    response = server.api(f"/api/v1/traces/{trace_id}")
    assert response.status_code == 200, response.text
    return flatten(response.json()["spans"])


def emit_task(exporter, service: str) -> str:
    """Export one small agent task (gateway root, model child) and return its trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agentsla-tests")
    with tracer.start_as_current_span("POST /chat", kind=SpanKind.SERVER,
                                      attributes=ATTRIBUTES) as root:
        with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30}) as model:
            model.set_status(Status(StatusCode.ERROR, "read timed out"))
            model.set_attribute("error.type", "openai.APITimeoutError")
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id


@pytest.mark.parametrize("make_exporter", [
    # protobuf over HTTP, uncompressed
    lambda s: HttpExporter(endpoint=s.traces_url),
    # protobuf over HTTP, gzip
    lambda s: HttpExporter(endpoint=s.traces_url, compression=Compression.Gzip),
    # gRPC
    lambda s: GrpcExporter(endpoint=s.grpc_target, insecure=True),
], ids=["http-protobuf", "http-gzip", "grpc"])
def test_sdk_exporters_store_every_attribute_type(server: ServerProcess, make_exporter) -> None:
    trace_id = emit_task(make_exporter(server), "checkout-agent")
    spans = {s["name"]: s for s in trace_spans(server, trace_id)}
    assert set(spans) == {"POST /chat", "chat gpt-4o"}
    root = spans["POST /chat"]
    assert root["attributes"]["a.string"] == "héllo <b>"
    assert root["attributes"]["a.bool"] is True
    assert root["attributes"]["a.int"] == -(2**62)
    assert root["attributes"]["a.double"] == 3.25
    assert root["attributes"]["a.strings"] == ["x", "y"]
    assert root["attributes"]["a.ints"] == [1, 2, 3]
    assert root["attributes"]["a.doubles"] == [0.5, 1.5]
    assert root["attributes"]["a.bools"] == [True, False]
    assert root["hop_kind"] == "gateway"
    assert spans["chat gpt-4o"]["hop_kind"] == "model"
    assert spans["chat gpt-4o"]["error_type"] == "timeout"
    task = server.api(f"/api/v1/tasks/{trace_id}").json()
    assert task["outcome"] == "success"  # the root did not fail: the agent recovered


@pytest.mark.parametrize("name", ["trace.json", "trace-numeric-nanos.json"])
def test_published_json_fixtures_are_accepted_unchanged(server: ServerProcess, name: str) -> None:
    body = (FIXTURES / name).read_bytes()
    response = httpx.post(server.traces_url, content=body,
                          headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert "rejectedSpans" not in response.text
    sent = json.loads(body)
    trace_id = sent["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"].lower()
    stored = trace_spans(server, trace_id)
    sent_spans = [s for r in sent["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
    assert len(stored) == len(sent_spans)
    for span in sent_spans:
        match = next(s for s in stored if s["span_id"] == span["spanId"].lower())
        for attr in span.get("attributes", []):
            assert attr["key"] in match["attributes"]


#: Recent span times: spans older than `retention` (30 days) are deleted by the writer's sweep,
#: which runs 10 s after the start, within a module-scoped server's life.
_START_NS = time.time_ns() - 3600 * 10**9


def _valid_request(span_id: bytes = b"\x01" * 8) -> bytes:
    request = trace_service_pb2.ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id = b"\x0a" * 16
    span.span_id = span_id
    span.name = "root"
    span.start_time_unix_nano = _START_NS
    span.end_time_unix_nano = _START_NS + 10**9
    return request.SerializeToString()


def _bomb(size: int) -> bytes:
    return gzip.compress(b"\0" * size, compresslevel=9)


PROTO = {"Content-Type": "application/x-protobuf"}
STATUS_CASES = [
    # a valid request: 200, protobuf answer
    ("post", _valid_request(), PROTO, 200),
    # truncated protobuf: 400 with a google.rpc.Status body
    ("post", _valid_request()[:-7], PROTO, 400),
    # JSON with a wrong type where a list belongs
    ("post", b'{"resourceSpans": 5}', {"Content-Type": "application/json"}, 400),
    # not JSON at all
    ("post", b"{nope", {"Content-Type": "application/json"}, 400),
    # unknown media type
    ("post", b"hello", {"Content-Type": "text/plain"}, 415),
    # wrong method
    ("get", b"", {}, 405),
    # over the configured 1 MiB body limit
    ("post", b"\0" * (1024**2 + 1), PROTO, 413),
    # gzip bomb: 64 MiB of zeros in about 64 KiB; refused after decompression
    ("post", _bomb(64 * 1024**2), {**PROTO, "Content-Encoding": "gzip"}, 413),
    # corrupt gzip
    ("post", b"\x1f\x8bnot gzip at all", {**PROTO, "Content-Encoding": "gzip"}, 400),
    # zstd, as the Collector's otlphttp exporter sends with `compression: zstd`
    ("post", zstd.compress(_valid_request()), {**PROTO, "Content-Encoding": "zstd"}, 200),
    # zstd bomb: 64 MiB of zeros; refused at the limit
    ("post", zstd.compress(b"\0" * 64 * 1024**2), {**PROTO, "Content-Encoding": "zstd"}, 413),
    # truncated zstd
    ("post", zstd.compress(_valid_request())[:-4], {**PROTO, "Content-Encoding": "zstd"}, 400),
]


#: `serve` flags per receiver layout: in the writer's process, and two receiver processes.
RECEIVERS = pytest.mark.parametrize("receivers", [[], ["--receivers", "2"]],
                                    ids=["in-process", "2-receiver-processes"])


@pytest.fixture(scope="module", params=[[], ["--receivers", "2"]],
                ids=["in-process", "2-receiver-processes"])
def small_server(tmp_path_factory, request):
    proc = ServerProcess(tmp_path_factory.mktemp("small"),
                         ["--max-body-bytes", "1MiB", *request.param]).start()
    yield proc
    proc.stop()


@pytest.mark.parametrize("method,body,headers,status", STATUS_CASES,
                         ids=["ok", "truncated", "json-wrong-type", "json-garbage", "media-type",
                              "method", "too-large", "gzip-bomb", "corrupt-gzip", "zstd",
                              "zstd-bomb", "truncated-zstd"])
def test_http_status_codes(small_server: ServerProcess, method, body, headers, status) -> None:
    response = httpx.request(method, small_server.traces_url, content=body or None,
                             headers=headers, timeout=30)
    assert response.status_code == status, response.text
    if status in (400, 413) and headers.get("Content-Type") == "application/x-protobuf":
        rpc = status_pb2.Status.FromString(response.content)
        assert rpc.message  # a precise reason, not an empty body


def test_partial_success_rejects_only_bad_spans(small_server: ServerProcess) -> None:
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(_valid_request(b"\x02" * 8))
    bad = request.resource_spans[0].scope_spans[0].spans.add()
    bad.CopyFrom(request.resource_spans[0].scope_spans[0].spans[0])
    bad.span_id = b"\x00" * 8  # an all-zero span id is invalid
    response = httpx.post(small_server.traces_url, content=request.SerializeToString(),
                          headers=PROTO)
    assert response.status_code == 200
    answer = trace_service_pb2.ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 1
    assert answer.partial_success.error_message
    stored = trace_spans(small_server, "0a" * 16)
    assert "02" * 8 in {s["span_id"] for s in stored}


def _deep_request(trace: bytes) -> trace_service_pb2.ExportTraceServiceRequest:
    """Spans 01 and 03 are fine; span 02 carries a value 60 arrays deep (past protobuf's limit)."""
    request = trace_service_pb2.ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for i in (1, 2, 3):
        scope.spans.add(trace_id=trace, span_id=bytes([i]) * 8, name=f"s{i}",
                        start_time_unix_nano=_START_NS, end_time_unix_nano=_START_NS + 10**9)
    value = scope.spans[1].attributes.add(key="deep").value
    for _ in range(60):
        value = value.array_value.values.add()
    value.string_value = "bottom"
    return request


def _stored_ids(server: ServerProcess, trace: bytes) -> set[str]:
    return {s["span_id"] for s in trace_spans(server, trace.hex())}


def test_a_span_nested_too_deep_is_rejected_alone_over_http(small_server: ServerProcess) -> None:
    trace = b"\x0d" * 16
    response = httpx.post(small_server.traces_url,
                          content=_deep_request(trace).SerializeToString(), headers=PROTO)
    assert response.status_code == 200
    answer = trace_service_pb2.ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 1
    assert "nested deeper" in answer.partial_success.error_message
    assert _stored_ids(small_server, trace) == {"01" * 8, "03" * 8}


def test_a_span_nested_too_deep_is_rejected_alone_over_grpc(small_server: ServerProcess) -> None:
    trace = b"\x0e" * 16
    with grpc.insecure_channel(small_server.grpc_target) as channel:
        answer = trace_service_pb2_grpc.TraceServiceStub(channel).Export(_deep_request(trace))
    assert answer.partial_success.rejected_spans == 1
    assert "nested deeper" in answer.partial_success.error_message
    assert _stored_ids(small_server, trace) == {"01" * 8, "03" * 8}


def test_undecodable_grpc_request_is_invalid_argument(small_server: ServerProcess) -> None:
    with grpc.insecure_channel(small_server.grpc_target) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        with pytest.raises(grpc.RpcError) as refused:
            export(_valid_request()[:-3])  # truncated
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "cannot decode OTLP protobuf" in refused.value.details()


def test_chunked_body_without_content_length(small_server: ServerProcess) -> None:
    body = _valid_request(b"\x03" * 8)
    response = httpx.post(small_server.traces_url, content=iter([body[:10], body[10:]]),
                          headers=PROTO)
    assert response.status_code == 200
    assert "transfer-encoding" not in response.request.headers or \
        response.request.headers["transfer-encoding"] == "chunked"


@RECEIVERS
def test_bearer_token_required_when_configured(tmp_path: Path, receivers: list[str]) -> None:
    server = ServerProcess(tmp_path, ["--ingest-token", "s3cret", *receivers]).start()
    try:
        refused = httpx.post(server.traces_url, content=_valid_request(), headers=PROTO)
        assert refused.status_code == 401
        assert server.api("/api/v1/traces/" + "0a" * 16).status_code == 404  # nothing stored
        accepted = httpx.post(server.traces_url, content=_valid_request(),
                              headers={**PROTO, "Authorization": "Bearer s3cret"})
        assert accepted.status_code == 200
        channel = grpc.insecure_channel(server.grpc_target)
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused_grpc:
            stub.Export(trace_service_pb2.ExportTraceServiceRequest.FromString(_valid_request()))
        assert refused_grpc.value.code() == grpc.StatusCode.UNAUTHENTICATED
        channel.close()
    finally:
        server.stop()


@RECEIVERS
def test_full_queue_answers_429_with_retry_after_and_loses_nothing(tmp_path: Path,
                                                                   receivers: list[str]) -> None:
    # A 1-byte queue holds one request at a time: concurrent senders must be told to back off.
    server = ServerProcess(tmp_path, ["--queue-max-bytes", "1", *receivers]).start()
    results: list[tuple[int, str | None, bytes]] = []

    def send(i: int) -> None:
        request = trace_service_pb2.ExportTraceServiceRequest()
        scope = request.resource_spans.add().scope_spans.add()
        for j in range(300):
            span = scope.spans.add()
            span.trace_id = i.to_bytes(16, "big")
            span.span_id = (j + 1).to_bytes(8, "big")
            span.parent_span_id = b"" if j == 0 else (1).to_bytes(8, "big")
            span.name = f"s{j}"
            span.start_time_unix_nano = _START_NS + j
            span.end_time_unix_nano = _START_NS + 10**9
        response = httpx.post(server.traces_url, content=request.SerializeToString(),
                              headers=PROTO, timeout=60)
        results.append((response.status_code, response.headers.get("retry-after"),
                        span.trace_id))

    try:
        threads = [threading.Thread(target=send, args=(i + 1,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = [r[0] for r in results]
        assert set(statuses) <= {200, 429}
        assert 429 in statuses and 200 in statuses
        assert all(r[1] for r in results if r[0] == 429)
        for status, _, trace_id in results:
            stored = server.api(f"/api/v1/traces/{trace_id.hex()}")
            expected = 300 if status == 200 else 0
            count = len(flatten(stored.json()["spans"])) if stored.status_code == 200 else 0
            assert count == expected
    finally:
        server.stop()


@RECEIVERS
def test_acknowledged_spans_survive_sigkill(tmp_path: Path, receivers: list[str]) -> None:
    server = ServerProcess(tmp_path, receivers).start()
    acked = []
    for i in range(20):
        response = httpx.post(server.traces_url, content=_valid_request((i + 1).to_bytes(8, "big")),
                              headers=PROTO)
        assert response.status_code == 200
        acked.append((i + 1).to_bytes(8, "big").hex())
    server.kill()
    restarted = server.restarted().start()
    try:
        stored = {s["span_id"] for s in trace_spans(restarted, "0a" * 16)}
        assert stored == set(acked)
    finally:
        assert restarted.stop() == 0
    assert "stopped cleanly" in restarted.log
