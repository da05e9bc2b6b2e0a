"""A queue consumer that starts its own trace with a link to the producer, end to end through
`agentsla serve`, with the real OpenTelemetry SDK and both OTLP exporters.

The gateway (OTLP/HTTP) takes POST /v1/agents/run and queues the work; the worker (OTLP/gRPC)
takes the message in a new trace, as messaging instrumentations do (a CONSUMER span with no
parent and a link to the producer's span), and the model answers 429 three times; the gateway
answers 503. One request: one task, blamed on the model, whichever trace is exported first.
"""

from __future__ import annotations

import time

import pytest
from opentelemetry import context
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link, SpanKind, Status, StatusCode, set_span_in_context

from serverproc import ServerProcess

MS = 1_000_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    proc = ServerProcess(tmp_path_factory.mktemp("linked") / "data").start()
    yield proc
    proc.stop()


def _tracer(service: str, exporter):
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, provider.get_tracer("agentsla-tests")


def serve_one_request(server: ServerProcess, worker_first: bool) -> tuple[str, str]:
    """Play the story with explicit times; each span is exported as it ends, so the order of
    the end calls is the order the traces reach agentsla. Returns (gateway, worker) trace ids."""
    gw_provider, gw = _tracer("gateway", HttpExporter(endpoint=server.traces_url))
    wk_provider, wk = _tracer("worker", GrpcExporter(endpoint=server.grpc_target, insecure=True))
    t0 = time.time_ns() - 5_000 * MS
    root = gw.start_span("POST /v1/agents/run", kind=SpanKind.SERVER, start_time=t0,
                         attributes={"http.request.method": "POST",
                                     "http.route": "/v1/agents/run"})
    producer = gw.start_span("send tasks", kind=SpanKind.PRODUCER, start_time=t0 + 1 * MS,
                             context=set_span_in_context(root),
                             attributes={"messaging.system": "rabbitmq",
                                         "messaging.operation.type": "send",
                                         "messaging.destination.name": "tasks"})
    consumer = wk.start_span("process tasks", kind=SpanKind.CONSUMER, start_time=t0 + 5 * MS,
                             context=context.Context(), links=[Link(producer.get_span_context())],
                             attributes={"messaging.system": "rabbitmq",
                                         "messaging.operation.type": "process",
                                         "messaging.destination.name": "tasks"})

    def gateway_ends() -> None:
        producer.end(end_time=t0 + 2 * MS)
        root.set_attribute("http.response.status_code", 503)
        root.set_status(Status(StatusCode.ERROR))
        root.end(end_time=t0 + 3_600 * MS)

    if not worker_first:
        gateway_ends()
    for i in range(3):
        start = t0 + 10 * MS + i * 1_000 * MS
        call = wk.start_span("chat gpt-4o", kind=SpanKind.CLIENT, start_time=start,
                             context=set_span_in_context(consumer),
                             attributes={"gen_ai.operation.name": "chat",
                                         "gen_ai.request.model": "gpt-4o",
                                         "http.response.status_code": 429,
                                         "error.type": "RateLimitError"})
        call.set_status(Status(StatusCode.ERROR, "Error code: 429"))
        call.end(end_time=start + 200 * MS)
    consumer.set_status(Status(StatusCode.ERROR))
    consumer.end(end_time=t0 + 3_500 * MS)
    if worker_first:
        gateway_ends()
    gw_provider.shutdown()
    wk_provider.shutdown()
    return (f"{root.get_span_context().trace_id:032x}",
            f"{consumer.get_span_context().trace_id:032x}")


def settled_task(server: ServerProcess, task_id: str, spans: int, wait_s: float = 60.0) -> dict:
    """Poll the task until it is finished with every span in it."""
    deadline = time.monotonic() + wait_s
    while True:
        response = server.api(f"/api/v1/tasks/{task_id}")
        if response.status_code == 200 and response.json()["span_count"] == spans \
                and response.json()["finished"]:
            return response.json()
        assert time.monotonic() < deadline, f"task {task_id} not settled: {response.text}"
        time.sleep(0.3)


@pytest.mark.parametrize("worker_first", [False, True], ids=["gateway first", "worker first"])
def test_the_consumers_trace_joins_the_requests_task(server: ServerProcess,
                                                     worker_first: bool) -> None:
    gateway_trace, worker_trace = serve_one_request(server, worker_first)
    task = settled_task(server, gateway_trace, spans=6)
    assert (task["outcome"], task["root_name"], task["http_status"]) == \
        ("failed", "POST /v1/agents/run", 503)
    assert (task["ffh_kind"], task["ffh_name"], task["ffh_reason"]) == \
        ("model", "gpt-4o", "rate_limited")
    assert server.api(f"/api/v1/tasks/{worker_trace}").status_code == 404  # no second task
    # one tree: the worker's entry under the producer's span it links to
    [root] = task["spans"]
    [producer] = root["children"]
    [consumer] = producer["children"]
    assert (root["name"], producer["name"], consumer["name"], consumer["via_link"]) == \
        ("POST /v1/agents/run", "send tasks", "process tasks", True)
    assert [call["name"] for call in consumer["children"]] == ["chat gpt-4o"] * 3
    # the worker's trace, looked up by its id, belongs to the request's task
    assert server.api(f"/api/v1/traces/{worker_trace}").json()["task_ids"] == [gateway_trace]
