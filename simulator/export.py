"""Emit planned spans through the OpenTelemetry SDK: a tracer provider, real OTLP exporters."""

from __future__ import annotations

from typing import Mapping

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

from agentsla import __version__
from agentsla.errors import AgentslaError
from agentsla.simulator.model import SpanPlan, TaskPlan
from agentsla.simulator.vocabulary import attributes, check

DEFAULT_HTTP_ENDPOINT = "http://127.0.0.1:4318"
DEFAULT_GRPC_ENDPOINT = "http://127.0.0.1:4317"
#: Spans handed to the batch processor between two force_flush calls (keeps its queue bounded).
FLUSH_EVERY = 4096


class PlannedIdGenerator(IdGenerator):
    """Hands the SDK the ids the planner chose, so ids are deterministic for a seed."""

    def __init__(self) -> None:
        self.trace_id = 0
        self.span_id = 0

    def generate_trace_id(self) -> int:
        """Return the planned trace id of the root about to start."""
        return self.trace_id

    def generate_span_id(self) -> int:
        """Return the planned span id of the span about to start."""
        return self.span_id


def build_exporter(endpoint: str | None, protocol: str, headers: Mapping[str, str],
                   environ: Mapping[str, str]) -> SpanExporter:
    """Build the OTLP exporter; the endpoint defaults to OTEL_EXPORTER_OTLP_ENDPOINT or localhost."""
    if protocol not in ("http", "grpc"):
        raise AgentslaError(f"unknown protocol {protocol!r}; use http or grpc")
    base = endpoint or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or (
        DEFAULT_HTTP_ENDPOINT if protocol == "http" else DEFAULT_GRPC_ENDPOINT)
    if protocol == "http":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        url = base if base.rstrip("/").endswith("/v1/traces") else base.rstrip("/") + "/v1/traces"
        return OTLPSpanExporter(endpoint=url, headers=dict(headers), timeout=30)
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc
    insecure = not base.startswith("https://")
    target = base.split("://", 1)[-1].rstrip("/")
    return Grpc(endpoint=target, insecure=insecure, headers=dict(headers), timeout=30)


class Emitter:
    """Creates SDK spans with explicit timestamps from SpanPlans and exports them in batches."""

    def __init__(self, exporter: SpanExporter, anchor_ns: int,
                 vocabulary: str = "agentsla") -> None:
        self.anchor_ns = anchor_ns
        self.vocabulary = check(vocabulary)
        self.ids = PlannedIdGenerator()
        resource = Resource.create({"service.name": "agent-platform",
                                    "service.version": __version__,
                                    "deployment.environment.name": "simulation"})
        self.provider = TracerProvider(resource=resource, id_generator=self.ids)
        self.processor = BatchSpanProcessor(exporter, max_queue_size=4 * FLUSH_EVERY,
                                            schedule_delay_millis=500,
                                            max_export_batch_size=512,
                                            export_timeout_millis=30_000)
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer("agentsla.simulator", __version__)
        self.emitted = 0

    def ns(self, t: float) -> int:
        """Unix nanoseconds of virtual time t."""
        return self.anchor_ns + int(round(t * 1e9))

    def emit(self, task: TaskPlan, plan: SpanPlan) -> None:
        """Start and end one planned span in the SDK."""
        context = None
        if plan.parent is not None:
            parent = SpanContext(task.trace_id, plan.parent.span_id, is_remote=False,
                                 trace_flags=TraceFlags(TraceFlags.SAMPLED))
            context = trace.set_span_in_context(NonRecordingSpan(parent))
        self.ids.trace_id, self.ids.span_id = task.trace_id, plan.span_id
        span = self.tracer.start_span(plan.name, context=context, kind=plan.span_kind,
                                      attributes=attributes(plan, self.vocabulary),
                                      start_time=self.ns(plan.start))
        if plan.error is not None:
            if plan.exception:
                span.add_event("exception", {"exception.type": plan.exception[0],
                                             "exception.message": plan.exception[1]},
                               timestamp=self.ns(plan.end))
            span.set_status(Status(StatusCode.ERROR, plan.message or plan.error))
        span.end(end_time=self.ns(plan.end))
        self.emitted += 1
        if self.emitted % FLUSH_EVERY == 0:
            self.processor.force_flush()

    def close(self) -> None:
        """Flush everything still queued, then shut the exporter down."""
        self.provider.force_flush()
        self.provider.shutdown()
