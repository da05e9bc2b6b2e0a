"""Both feeds in one traces table: the Collector's clickhouseexporter and agentsla's receivers.

`serve --store chdb://...` writes what its OTLP receivers take into otel_traces in the
exporter's format (agentsla.server's ClickHouse backend), so a Collector and agentsla can feed
one table. Here one task's root span comes through agentsla's real OTLP/HTTP receiver (sent
by the OpenTelemetry SDK's exporter) and its tool call as a row the Collector's exporter
writes, in each variant of the table; one materializer pass joins them into one task. The
backend runs in this process because chdb admits one data path per process.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode
from serverproc import serving

from agentsla.collector.receivers.export import Exporter
from agentsla.collector.receivers.http import create_otlp_http_app
from agentsla.collector.store.clickhouse import schema
from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.config import load_config
from agentsla.queries import tasks
from agentsla.queries.engines.clickhouse import ChdbRunner, ClickHouseStore
from agentsla.server import _ClickHouseBackend

MS = 10**6


def _collector_row(variant: str, trace_id: str, parent_id: str, start_ns: int) -> dict:
    """A tool call that timed out, as the exporter writes it: Map values as AsString text,
    JSON values of their own types with the key columns."""
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
             "error.type": "timeout", "hop.timeout_ms": 5000}
    row = {"Timestamp": f"{start_ns // 10**9}.{start_ns % 10**9:09d}", "TraceId": trace_id,
           "SpanId": "00000000000000aa", "ParentSpanId": parent_id, "SpanName": "search",
           "SpanKind": "SPAN_KIND_CLIENT", "ServiceName": "tools",
           "ResourceAttributes": {"service.name": "tools"}, "Duration": 40 * MS,
           "StatusCode": "STATUS_CODE_ERROR", "StatusMessage": "timed out"}
    if variant == schema.MAP:
        return {**row, "SpanAttributes": {k: str(v) for k, v in attrs.items()}}
    return {**row, "SpanAttributes": attrs, "SpanAttributesKeys": sorted(attrs),
            "ResourceAttributesKeys": ["service.name"]}


@pytest.mark.parametrize("variant", [schema.MAP, schema.JSON])
def test_a_task_joins_spans_from_the_receiver_and_from_the_collector(tmp_path, variant):
    url = parse_store_url(f"chdb://{tmp_path / 'chdb'}")
    made = ChdbRunner(url.path)  # the table as the exporter created it, before agentsla starts
    for statement in schema.otel_traces_ddl(url.database, url.table, variant):
        made.execute(statement)
    made.close()
    base = load_config(environ={})
    config = dataclasses.replace(
        base, server=dataclasses.replace(base.server, store=url),
        tasks=dataclasses.replace(base.tasks, materialize_interval=0.0, root_grace=0.0))
    backend = _ClickHouseBackend(config)
    try:
        assert backend.variant == variant
        app = create_otlp_http_app(Exporter(config.ingest, backend.submit))
        with serving(app) as otlp:
            provider = TracerProvider(resource=Resource.create({"service.name": "gw"}))
            provider.add_span_processor(SimpleSpanProcessor(
                OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")))
            with provider.get_tracer("test").start_as_current_span(
                    "POST /ask", kind=SpanKind.SERVER,
                    attributes={"task.id": "mixed", "tenant.id": "acme"}) as root:
                context = root.get_span_context()
                trace_id, root_id = f"{context.trace_id:032x}", f"{context.span_id:016x}"
                backend.runner.insert(f"{url.database}.{url.table}", [
                    _collector_row(variant, trace_id, root_id, time.time_ns())])
                root.set_status(Status(StatusCode.ERROR))
            provider.shutdown()  # the root went through agentsla's receiver
        run_pass(backend.runner, url.database, url.table, Shard(0, 1), config.tasks,
                 time.time_ns() + 1000 * MS)
        store = ClickHouseStore(backend.runner)
        task = tasks.get_task(store, "mixed")
    finally:
        backend.close()
    assert (task["outcome"], task["tenant_id"], task["span_count"]) == ("failed", "acme", 2)
    hop = task["first_failing_hop"]
    assert (hop["kind"], hop["name"], hop["reason"]) == ("tool", "search", "timeout")
    assert {s["service_name"] for s in _flat(task["spans"])} == {"gw", "tools"}


def _flat(spans: list[dict]) -> list[dict]:
    return [x for s in spans for x in (s, *_flat(s["children"]))]
