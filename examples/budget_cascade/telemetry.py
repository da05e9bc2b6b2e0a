"""Tracing for one process of the chain: OTLP/HTTP to agentsla, with or without agentsla-budget."""

from __future__ import annotations

from opentelemetry import propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agentsla_budget import BudgetPropagator, BudgetSpanProcessor

MODES = ("before", "after")


def setup(service: str, otlp_url: str, mode: str) -> trace.Tracer:
    """Export this process's spans to otlp_url; in the `after` mode, with the budget library."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    propagators = [TraceContextTextMapPropagator()]
    if mode == "after":
        provider.add_span_processor(BudgetSpanProcessor())
        propagators.append(BudgetPropagator())
    provider.add_span_processor(BatchSpanProcessor(
        OTLPSpanExporter(endpoint=f"{otlp_url}/v1/traces"), schedule_delay_millis=200))
    trace.set_tracer_provider(provider)
    propagate.set_global_textmap(CompositePropagator(propagators))
    return trace.get_tracer(service)
