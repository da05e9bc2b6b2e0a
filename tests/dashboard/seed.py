"""Post a small, varied agent workload to a running server as OTLP/HTTP protobuf.

Each task is a gateway root (SERVER span with HTTP status, task type, tenant, budget) over an
agent, model and tool calls. Shapes: success, degraded (429s retried, then a backup model),
failed (a tool timeout), budget exhausted (a slow model under a small budget). Task ends are
spread over the last 50 minutes, so a 1h window with 1m steps has a series. Every task's spans
come from SERVICE except one success of OTHER_SERVICE, for the service filter.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from otlpvalues import av

MS = 1_000_000
#: The Streamlit entry point the AppTests run.
APP = Path(__file__).parents[2] / "dashboard" / "app.py"
_ids = itertools.count(1)


@dataclass
class TaskBuilder:
    """Spans of one task, with times in ms relative to the task start."""

    start_ns: int
    trace_id: bytes = field(default_factory=lambda: os.urandom(16))
    spans: list[Span] = field(default_factory=list)

    def span(self, name: str, start_ms: float, end_ms: float, parent: Span | None = None,
             kind: int = Span.SPAN_KIND_INTERNAL, error: bool = False, **attrs) -> Span:
        """Add one span; attribute names use `__` for dots (hop__kind -> hop.kind)."""
        span = Span(trace_id=self.trace_id, span_id=next(_ids).to_bytes(8, "big"), name=name,
                    kind=kind, start_time_unix_nano=self.start_ns + int(start_ms * MS),
                    end_time_unix_nano=self.start_ns + int(end_ms * MS),
                    parent_span_id=parent.span_id if parent is not None else b"",
                    attributes=[KeyValue(key=k.replace("__", "."), value=av(v))
                                for k, v in attrs.items()])
        if error:
            span.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message=name + " failed"))
        self.spans.append(span)
        return span


def _root(t: TaskBuilder, task_type: str, tenant: str, end_ms: float, status: int,
          budget_ms: float, **attrs) -> Span:
    return t.span("POST /v1/agent", 0, end_ms, kind=Span.SPAN_KIND_SERVER, error=status >= 500,
                  task__type=task_type, tenant__id=tenant, hop__kind="gateway",
                  http__response__status_code=status, budget__total_ms=budget_ms,
                  budget__remaining_ms=budget_ms, **attrs)


def success(t: TaskBuilder, task_type: str, tenant: str) -> None:
    root = _root(t, task_type, tenant, 2400, 200, 30000)
    agent = t.span("invoke_agent planner", 20, 2380, root, gen_ai__operation__name="invoke_agent",
                   gen_ai__agent__name="planner", budget__remaining_ms=29980)
    t.span("chat gpt-4o", 40, 1200, agent, hop__kind="model", gen_ai__request__model="gpt-4o",
           gen_ai__usage__input_tokens=1200, gen_ai__usage__output_tokens=180,
           gen_ai__response__time_to_first_chunk=0.35, hop__timeout_ms=20000,
           budget__remaining_ms=29960)
    t.span("execute_tool search", 1220, 2300, agent, hop__kind="tool", gen_ai__tool__name="search",
           hop__timeout_ms=5000, budget__remaining_ms=28780)


def degraded(t: TaskBuilder, task_type: str, tenant: str) -> None:
    root = _root(t, task_type, tenant, 5200, 200, 30000)
    agent = t.span("invoke_agent planner", 20, 5180, root, gen_ai__operation__name="invoke_agent",
                   gen_ai__agent__name="planner")
    for attempt, (a, b) in enumerate(((40, 900), (950, 1900))):
        t.span("chat gpt-4o", a, b, agent, error=True, hop__kind="model",
               gen_ai__request__model="gpt-4o", error__type="rate_limited",
               http__response__status_code=429, retry__attempt=attempt, retry__max=1,
               hop__timeout_ms=20000, budget__remaining_ms=30000 - a)
    t.span("chat claude-backup", 1950, 5100, agent, hop__kind="model",
           gen_ai__request__model="claude-backup", fallback__used=True,
           fallback__kind="backup_model", fallback__from="gpt-4o", fallback__to="claude-backup",
           budget__remaining_ms=28050)


def failed(t: TaskBuilder, task_type: str, tenant: str) -> None:
    root = _root(t, task_type, tenant, 8200, 500, 30000, error__type="server_error")
    agent = t.span("invoke_agent planner", 20, 8150, root, error=True,
                   gen_ai__operation__name="invoke_agent", gen_ai__agent__name="planner")
    t.span("chat gpt-4o", 40, 900, agent, hop__kind="model", gen_ai__request__model="gpt-4o")
    t.span("execute_tool crm.lookup", 950, 8100, agent, error=True, hop__kind="tool",
           gen_ai__tool__name="crm.lookup", error__type="timeout", hop__timeout_ms=0,
           budget__remaining_ms=29050)


def exhausted(t: TaskBuilder, task_type: str, tenant: str) -> None:
    root = _root(t, task_type, tenant, 6100, 504, 6000, error__type="budget_exhausted",
                 budget__exhausted=True)
    agent = t.span("invoke_agent researcher", 20, 6050, root, error=True,
                   gen_ai__operation__name="invoke_agent", gen_ai__agent__name="researcher")
    t.span("chat gpt-4o", 40, 6040, agent, error=True, hop__kind="model",
           gen_ai__request__model="gpt-4o", error__type="timeout", hop__timeout_ms=45000,
           retry__max=2, budget__remaining_ms=5960)


SERVICE, OTHER_SERVICE = "agent-gateway", "billing-gateway"
#: (shape, task type, tenant, how many, service.name).
WORKLOAD = ((success, "chat", "acme", 14, SERVICE), (success, "research", "globex", 5, SERVICE),
            (degraded, "chat", "acme", 3, SERVICE), (failed, "chat", "globex", 2, SERVICE),
            (exhausted, "research", "acme", 1, SERVICE),
            (success, "research", "globex", 1, OTHER_SERVICE))


def build(now_ns: int | None = None) -> tuple[ExportTraceServiceRequest, int]:
    """Build one request holding the whole workload; return it and the number of tasks."""
    now_ns = now_ns or time.time_ns()
    tasks = [(shape, ttype, tenant, service) for shape, ttype, tenant, n, service in WORKLOAD
             for _ in range(n)]
    scopes: dict[str, ScopeSpans] = {}
    for i, (shape, ttype, tenant, service) in enumerate(tasks):
        # ends spread over the last 50 minutes; each task lasts at most ~8 s
        builder = TaskBuilder(start_ns=now_ns - (3000 - i * 3000 // len(tasks)) * 1000 * MS)
        shape(builder, ttype, tenant)
        scopes.setdefault(service, ScopeSpans()).spans.extend(builder.spans)
    request = ExportTraceServiceRequest(resource_spans=[
        ResourceSpans(resource=Resource(attributes=[
            KeyValue(key="service.name", value=av(service))]), scope_spans=[scope])
        for service, scope in scopes.items()])
    return request, len(tasks)


def post(traces_url: str, api_url: str, timeout: float = 30.0) -> int:
    """Post the workload and wait until the API has materialized every task; return the count."""
    request, count = build()
    response = httpx.post(traces_url, content=request.SerializeToString(), timeout=timeout,
                          headers={"Content-Type": "application/x-protobuf"})
    response.raise_for_status()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        totals = httpx.get(f"{api_url}/api/v1/sla", params={"window": "1h"}, timeout=10).json()
        if totals["totals"]["finished"] >= count:
            return count
        time.sleep(0.2)
    raise TimeoutError(f"the server did not materialize {count} tasks in {timeout} s")
