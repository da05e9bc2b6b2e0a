"""deploy/grafana/agentsla.json queries only metrics a real `agentsla serve` exposes on /metrics.

Two tasks (one succeeds, one fails at a tool that times out) go through the real OpenTelemetry
SDK and OTLP/HTTP exporter into a real server; then every PromQL expression of the dashboard,
its panels and its variables, is read for metric names, and each must have samples on /metrics.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from serverproc import ServerProcess

DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "agentsla.json"
#: PromQL words that are not metric names (operators, modifiers, grouping).
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
             "group_left", "group_right", "inf", "nan"}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (functions, labels and keywords left out)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)            # string literals
    text = re.sub(r"\{[^}]*\}", "", text)                        # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)                       # range and subquery windows
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set()
    for match in re.finditer(r"(?<![A-Za-z0-9_:.])[A-Za-z_:][A-Za-z0-9_:]*", text):  # not `5m`
        if text[match.end():].lstrip().startswith("(") or match.group() in _KEYWORDS:
            continue  # a function call, or an operator word
        names.add(match.group())
    return names


def dashboard_exprs(doc: dict) -> list[str]:
    """Every PromQL expression of the dashboard: panel targets and query variables."""
    exprs = [t["expr"] for p in doc["panels"] for t in p.get("targets", [])]
    for var in doc["templating"]["list"]:
        if var["type"] == "query":
            query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            exprs.append(re.fullmatch(r"label_values\((.+),\s*\w+\)", query).group(1))
    return exprs


@pytest.mark.parametrize("expr, names", [
    ('topk(10, histogram_quantile(0.95, sum by (hop_name, le) '
     '(rate(agentsla_hop_duration_seconds_bucket{hop_kind=~"$hop_kind"}[5m]))))',
     {"agentsla_hop_duration_seconds_bucket"}),
    ('(1 - a{outcome="success"} / b) / on (task_type) (1 - c)', {"a", "b", "c"}),
    ("rate(agentsla_ingest_accepted_spans_total[5m])", {"agentsla_ingest_accepted_spans_total"}),
    ('sum by (task_type) (a{x="by(y)"}) / on (task_type) group_left b', {"a", "b"}),
    ("a and bool b offset 5m", {"a", "b"}),
])
def test_metric_names_are_read_from_promql(expr, names):
    assert metric_names(expr) == names


def _emit_two_tasks(server: ServerProcess) -> None:
    """Two tasks that ended 10 minutes ago: in the settled minutes /metrics starts from."""
    provider = TracerProvider(resource=Resource.create({"service.name": "support-api"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.traces_url)))
    tracer = provider.get_tracer("agentsla-tests")
    t0 = time.time_ns() - 10 * 60 * 10**9
    for task_id, fails in (("grafana-ok", False), ("grafana-fail", True)):
        root = tracer.start_span("POST /chat", kind=SpanKind.SERVER, start_time=t0, attributes={
            "task.id": task_id, "task.type": "support", "hop.kind": "gateway"})
        inside = trace.set_span_in_context(root)
        model = tracer.start_span("chat gpt-4o", context=inside, start_time=t0 + 10**6,
                                  attributes={"hop.kind": "model", "gen_ai.request.model": "gpt-4o"})
        model.end(end_time=t0 + 2 * 10**8)
        tool = tracer.start_span("search", context=inside, start_time=t0 + 3 * 10**8,
                                 attributes={"hop.kind": "tool", "gen_ai.tool.name": "search"})
        if fails:
            tool.set_attribute("error.type", "timeout")
            tool.set_status(Status(StatusCode.ERROR, "read timeout"))
            root.set_status(Status(StatusCode.ERROR))
        tool.end(end_time=t0 + 4 * 10**8)
        root.end(end_time=t0 + 5 * 10**8)
    provider.shutdown()  # SimpleSpanProcessor: every export was answered (committed) by now


def _sampled(metrics_text: str) -> set[str]:
    return {line.split("{")[0].split(" ")[0] for line in metrics_text.splitlines()
            if line and not line.startswith("#")}


def test_every_dashboard_metric_is_on_metrics(server: ServerProcess):
    doc = json.loads(DASHBOARD.read_text())
    _emit_two_tasks(server)
    response = server.api("/metrics")
    assert response.status_code == 200
    sampled = _sampled(response.text)
    exprs = dashboard_exprs(doc)
    assert len(exprs) >= 15
    missing = {}
    for expr in exprs:
        names = metric_names(expr)
        assert names, f"no metric read by {expr!r}"
        if names - sampled:
            missing[expr] = sorted(names - sampled)
    assert missing == {}, f"queried but not on /metrics: {missing}"


def test_panels_use_the_datasource_variable():
    doc = json.loads(DASHBOARD.read_text())
    panels = [p for p in doc["panels"] if p["type"] != "row"]
    assert {p["datasource"]["uid"] for p in panels} == {"${datasource}"}
    assert len({p["id"] for p in doc["panels"]}) == len(doc["panels"])
    titles = {p["title"] for p in panels}
    assert {"Task success vs gateway success", "Outcome rates", "Error-budget burn rate",
            "Hop latency p95 (slowest 10)"} <= titles
