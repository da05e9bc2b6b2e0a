"""Logical calls end to end: the real OpenTelemetry SDK exports one agent task to a real
`agentsla serve`; the task and /api/v1/hops count unnumbered retries and HTTP resends as
attempts of one call, and a later call of the same model as a call of its own."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}


def _chat(tracer, status: int) -> None:
    with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT, attributes={
            **CHAT, "http.response.status_code": status}) as call:
        if status >= 400:
            call.set_status(Status(StatusCode.ERROR, f"Error code: {status}"))


def _http_get(tracer, status: int, resend: int | None) -> None:
    attributes = {"http.request.method": "GET", "http.response.status_code": status}
    if resend is not None:  # OTel HTTP semconv: set on resends only
        attributes["http.request.resend_count"] = resend
    with tracer.start_as_current_span("GET", kind=SpanKind.CLIENT, attributes=attributes) as span:
        if status >= 500:
            span.set_status(Status(StatusCode.ERROR))


def emit_agent_task(exporter) -> str:
    """One task: a model call answered 429, 429, 200 (no retry numbers), a second model call
    later in the loop, and a tool whose HTTP request got a 503 and was resent once."""
    provider = TracerProvider(resource=Resource.create({"service.name": "agents"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agentsla-tests")
    with tracer.start_as_current_span("POST /chat", kind=SpanKind.SERVER,
                                      attributes={"http.response.status_code": 200}) as root:
        with tracer.start_as_current_span("invoke_agent planner", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}):
            for status in (429, 429, 200):
                _chat(tracer, status)
            with tracer.start_as_current_span("execute_tool search", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}):
                _http_get(tracer, 503, None)
                _http_get(tracer, 200, 1)
            _chat(tracer, 200)
    provider.shutdown()
    return format(root.get_span_context().trace_id, "032x")


def test_unnumbered_retries_and_resends_are_attempts_of_one_call(server) -> None:
    trace_id = emit_agent_task(OTLPSpanExporter(endpoint=server.traces_url))
    task = server.api(f"/api/v1/tasks/{trace_id}").json()
    # both 429s and the 503 were recovered by their retries: success, three retries
    assert (task["outcome"], task["retries"], task["first_failing_hop"]) == ("success", 3, None)
    hops = {(h["hop_kind"], h["hop_name"]): h for h in server.api("/api/v1/hops").json()["hops"]}
    # four model spans: one call of three attempts, then the loop's second call
    model = hops[("model", "gpt-4o")]
    assert (model["calls"], model["logical_calls"], model["rate_limited"]) == (4, 2, 2)
    # the HTTP request and its resend: one logical call of two attempts
    http = hops[("other", "GET")]
    assert (http["calls"], http["logical_calls"], http["attempts_per_call"]) == (2, 1, 2.0)
