"""A queue consumer's own trace, linked to the producer, joins the producer's task on both
engines alike (the rule: collector/tasks/links.py), in one batch or the consumer first.

The story: the gateway (trace 11) takes POST /v1/agents/run, queues the work (a PRODUCER span)
and answers 503 at 3.6 s; the worker takes the message in a new trace (12) whose CONSUMER entry
has no parent and links to the producer; the model answers 429 three times. One task, keyed by
the gateway's trace id (no task.id anywhere), failed, blamed on the model's rate limit.
"""

from __future__ import annotations

import duckdb
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from agentsla.collector.processing.normalize import normalize_request
from agentsla.collector.store.clickhouse import schema
from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.collector.store.schema import migrate
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.queries.engines.clickhouse import ChdbRunner, ClickHouseStore, prepare
from agentsla.queries import tasks
from agentsla.queries.engines.duckdb import DuckDBStore
from test_engines_agree import CONFIG, T0, _same, _span, exporter_rows

GATEWAY, WORKER = f"{11:032x}", f"{12:032x}"


def gateway() -> list[Span]:
    return [_span(11, 1, None, "POST /v1/agents/run", 0, 3600, Span.SPAN_KIND_SERVER,
                  error="upstream failed", http__response__status_code=503),
            _span(11, 2, 1, "send tasks", 1, 2, Span.SPAN_KIND_PRODUCER,
                  messaging__system="rabbitmq", messaging__operation__type="send")]


def worker() -> list[Span]:
    return [_span(12, 1, None, "process tasks", 5, 3500, Span.SPAN_KIND_CONSUMER,
                  error="gave up", links=[(11, 2)], messaging__system="rabbitmq",
                  messaging__operation__type="process")] + [
        _span(12, 2 + i, 1, "chat gpt-4o", 10 + i * 1000, 210 + i * 1000,
              Span.SPAN_KIND_CLIENT, error="Too Many Requests", gen_ai__operation__name="chat",
              gen_ai__request__model="gpt-4o", http__response__status_code=429)
        for i in range(3)]


def request(spans: list[Span], service: str) -> ExportTraceServiceRequest:
    out = ExportTraceServiceRequest()
    resource = out.resource_spans.add()
    resource.resource.attributes.append(KeyValue(key="service.name",
                                                 value=AnyValue(string_value=service)))
    resource.scope_spans.add().spans.extend(spans)
    return out


#: name: the requests, in the order they arrive (each a batch, and a pass after it)
ORDERS = {
    "one batch": lambda: [request(gateway() + worker(), "platform")],
    "consumer first": lambda: [request(worker()[1:], "worker"), request(worker()[:1], "worker"),
                               request(gateway(), "gateway")],
}


def _arrival(i: int) -> int:
    """When request i arrives (and a pass runs): a second apart, from just after the story."""
    return T0 + (4 + i) * 10**9


def _duck(requests: list[ExportTraceServiceRequest]) -> DuckDBStore:
    con = duckdb.connect()
    migrate(con)
    writer = TaskWriter(con, CONFIG)
    for i, sent in enumerate(requests):
        writer.write(normalize_request(sent, load_config().ingest, _arrival(i)).rows,
                     _arrival(i))
    return DuckDBStore(con)


def _house(path, variant: str, requests: list[ExportTraceServiceRequest]) -> ChdbRunner:
    """chdb with the exporter's table (`variant`) fed the requests in turn, each followed by
    passes of shard 0/1 until caught up."""
    url = parse_store_url(f"chdb://{path}")
    runner = ChdbRunner(url.path)
    for statement in schema.otel_traces_ddl(url.database, url.table, variant):
        runner.execute(statement)
    prepare(runner, url)
    for i, sent in enumerate(requests):
        runner.insert(f"{url.database}.{url.table}", exporter_rows(sent, variant))
        while not run_pass(runner, url.database, url.table, Shard(0, 1), CONFIG,
                           _arrival(i)).caught_up:
            pass
    return runner


@pytest.fixture(scope="module", params=[(variant, order) for variant in (schema.MAP, schema.JSON)
                                        for order in ORDERS], ids=lambda p: "-".join(p))
def stores(request, tmp_path_factory):
    """(DuckDB, ClickHouse) fed the story in one order, over one exporter table variant (one
    chdb session at a time: chdb keeps one path a process)."""
    variant, order = request.param
    runner = _house(tmp_path_factory.mktemp("links"), variant, ORDERS[order]())
    yield _duck(ORDERS[order]()), ClickHouseStore(runner)
    runner.close()


def test_the_engines_agree_on_the_linked_task(stores) -> None:
    duck, house = stores
    assert _same(duck.rows("task", {"task_id": GATEWAY})[0]) == \
        _same(house.rows("task", {"task_id": GATEWAY})[0])


def test_one_task_blamed_on_the_model(stores) -> None:
    """What the story says, asked of each engine: one task over both traces."""
    for store in stores:
        listed = tasks.list_tasks(store, T0 - 3600 * 10**9, T0 + 3600 * 10**9)
        assert [t["task_id"] for t in listed] == [GATEWAY]
        task = store.rows("task", {"task_id": GATEWAY})[0]
        assert (task["span_count"], task["outcome"], task["root_name"]) == \
            (6, "failed", "POST /v1/agents/run")
        assert (task["ffh_kind"], task["ffh_name"], task["ffh_reason"]) == \
            ("model", "gpt-4o", "rate_limited")
        assert store.rows("task", {"task_id": WORKER}) == []
        # the task's tree: the worker's entry under the producer's span it links to
        [root] = tasks.get_task(store, GATEWAY)["spans"]
        [producer] = root["children"]
        [consumer] = producer["children"]
        assert (producer["name"], consumer["name"], consumer["via_link"]) == \
            ("send tasks", "process tasks", True)
