"""The same spans give the same answers on DuckDB and on ClickHouse (chdb, in-process).

One corpus of OTLP requests, written by hand from the stories below, goes into DuckDB through
the normalizer and the writer, and into chdb's otel_traces in the clickhouseexporter's format
(every attribute a string), where `agentsla.collector.store.clickhouse.materializer` turns it
into tasks. Each test asks both stores one question and compares the answers, and checks the
hand-written expectation of the story on the ClickHouse side. chdb stands in for a ClickHouse
server, which cannot be installed here (docs/scale-out.md).
"""

from __future__ import annotations

from dataclasses import replace

import duckdb
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from agentsla.collector.processing.normalize import normalize_request
from agentsla.collector.store.clickhouse import schema
from agentsla.collector.store.clickhouse.exporter_rows import render
from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.collector.store.schema import migrate
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.queries import budget, hops, root_causes, sla, slo, spans, tasks
from agentsla.queries.metrics import Totals
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.queries.engines.clickhouse import ChdbRunner, ClickHouseStore, prepare
from agentsla.queries.engines.duckdb import DuckDBStore
from otlpvalues import av

T0 = 1_780_000_000 * 10**9  # a fixed moment; spans are placed in ms after it
NOW = T0 + 600 * 10**9
MS = 10**6


def _span(trace: int, span: int, parent: int | None, name: str, start_ms: int, end_ms: int,
          kind: int = Span.SPAN_KIND_INTERNAL, error: str = "", events=(), links=(),
          **attrs) -> Span:
    """A span of trace `trace`; `links`: (trace, span) pairs it links to."""
    out = Span(trace_id=trace.to_bytes(16, "big"), span_id=span.to_bytes(8, "big"),
               parent_span_id=parent.to_bytes(8, "big") if parent else b"", name=name,
               kind=kind, start_time_unix_nano=T0 + start_ms * MS,
               end_time_unix_nano=T0 + end_ms * MS,
               attributes=[KeyValue(key=k.replace("__", "."), value=av(v))
                           for k, v in attrs.items()],
               links=[Span.Link(trace_id=t.to_bytes(16, "big"), span_id=i.to_bytes(8, "big"))
                      for t, i in links])
    if error:
        out.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message=error))
    for name_, event_attrs in events:
        event = out.events.add(name=name_, time_unix_nano=T0 + end_ms * MS)
        event.attributes.extend(KeyValue(key=k, value=av(v)) for k, v in event_attrs.items())
    return out


SERVER = Span.SPAN_KIND_SERVER


def corpus() -> ExportTraceServiceRequest:
    """Five tasks; each story says what agentsla must conclude."""
    spans = [
        # "ok": gateway -> agent -> one chat call; success, 2 model tokens in, 3 out.
        _span(1, 1, None, "POST /ask", 0, 900, SERVER, task__id="ok", task__type="chat",
              tenant__id="acme", budget__total_ms=60000, http__response__status_code=200),
        _span(1, 2, 1, "agent", 10, 880, gen_ai__operation__name="invoke_agent",
              gen_ai__agent__name="planner"),
        _span(1, 3, 2, "chat gpt-4o", 20, 800, gen_ai__operation__name="chat",
              gen_ai__request__model="gpt-4o", gen_ai__usage__input_tokens=2,
              gen_ai__usage__output_tokens=3),
        # "timeout": two tries of tool `search` time out (ReadTimeout), the root fails:
        # first failing hop tool/search/timeout, one retry.
        _span(2, 1, None, "POST /ask", 0, 5000, SERVER, error="upstream failed",
              task__id="timeout", task__type="chat", tenant__id="acme"),
        _span(2, 2, 1, "search", 10, 2000, gen_ai__operation__name="execute_tool",
              gen_ai__tool__name="search", retry__attempt=0, error="read timed out",
              events=[("exception", {"exception.type": "httpx.ReadTimeout"})]),
        _span(2, 3, 1, "search", 2010, 4000, gen_ai__operation__name="execute_tool",
              gen_ai__tool__name="search", retry__attempt=1, error="read timed out",
              events=[("exception", {"exception.type": "httpx.ReadTimeout"})]),
        # "recovered": a 429 on the first try, the retry answers: success, one retry.
        _span(3, 1, None, "POST /ask", 0, 3000, SERVER, task__id="recovered", tenant__id="beta"),
        _span(3, 2, 1, "chat gpt-4o", 10, 500, gen_ai__operation__name="chat",
              gen_ai__request__model="gpt-4o", retry__attempt=0,
              http__response__status_code=429, error="Too Many Requests"),
        _span(3, 3, 1, "chat gpt-4o", 600, 2900, gen_ai__operation__name="chat",
              gen_ai__request__model="gpt-4o", retry__attempt=1),
        # "fallback": the backup model served: degraded, blamed on the primary's 5xx.
        _span(4, 1, None, "POST /ask", 0, 2000, SERVER, task__id="fallback", tenant__id="beta"),
        _span(4, 2, 1, "chat gpt-4o", 10, 900, gen_ai__operation__name="chat",
              gen_ai__request__model="gpt-4o", http__response__status_code=503,
              error="Service Unavailable"),
        _span(4, 3, 1, "chat backup", 910, 1900, gen_ai__operation__name="chat",
              gen_ai__request__model="backup", fallback__used=True,
              fallback__kind="backup_model"),
        # no task.id, OpenInference LLM span, root over its 1 s budget and failing:
        # budget_exhausted, task id = the trace id.
        _span(5, 1, None, "POST /ask", 0, 1500, SERVER, error="deadline", budget__total_ms=1000.0),
        _span(5, 2, 1, "llm", 10, 1490, openinference__span__kind="LLM",
              llm__model_name="claude", llm__token_count__prompt="7"),
    ]
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(KeyValue(key="service.name",
                                                 value=AnyValue(string_value="gateway")))
    resource.scope_spans.add().spans.extend(spans)
    return request


#: The exporter whose rows exporter_rows() writes: the layouts of otel_traces.sql and
#: otel_traces_json.sql (collector/store/clickhouse/), the Collector that deploy/clickhouse pins.
EXPORTER = "opentelemetry-collector-contrib clickhouseexporter 0.154.0"


def exporter_rows(request: ExportTraceServiceRequest, variant: str = schema.MAP) -> list[dict]:
    """Stand in for the Collector's clickhouseexporter (EXPORTER): one otel_traces row a span.

    Map variant, as exporter_traces.go writes it: proto names for kind and status, the scope
    name also in the attributes, every attribute value a string (AsString; `render` is checked
    against hand-written strings in tests/collector/store/test_clickhouse_store.py). JSON
    variant, as exporter_traces_json.go writes it: attribute objects of the values' own types
    (AsRaw), no scope name among them, and the sorted attribute keys in their own columns.
    """
    def attrs(kvs) -> dict:
        if variant == schema.JSON:
            return {kv.key: _plain(kv.value) for kv in kvs}
        return {kv.key: render(_plain(kv.value)) for kv in kvs}

    def time(ns: int) -> str:
        return f"{ns // 10**9}.{ns % 10**9:09d}"

    kinds = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
    rows = []
    for rs in request.resource_spans:
        resource = attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            scope = ({"otel.scope.name": ss.scope.name}
                     if ss.scope.name and variant == schema.MAP else {})
            for span in ss.spans:
                rows.append({
                    "Timestamp": time(span.start_time_unix_nano), "TraceId": span.trace_id.hex(),
                    "SpanId": span.span_id.hex(), "ParentSpanId": span.parent_span_id.hex(),
                    "SpanName": span.name, "SpanKind": "SPAN_KIND_" + kinds[span.kind],
                    "ServiceName": resource.get("service.name", ""),
                    "ResourceAttributes": resource, "ScopeName": ss.scope.name,
                    "SpanAttributes": {**attrs(span.attributes), **scope},
                    "Duration": span.end_time_unix_nano - span.start_time_unix_nano,
                    "StatusCode": "STATUS_CODE_" + ("UNSET", "OK", "ERROR")[span.status.code],
                    "StatusMessage": span.status.message,
                    "Events.Timestamp": [time(e.time_unix_nano) for e in span.events],
                    "Events.Name": [e.name for e in span.events],
                    "Events.Attributes": [attrs(e.attributes) for e in span.events],
                    "Links.TraceId": [link.trace_id.hex() for link in span.links],
                    "Links.SpanId": [link.span_id.hex() for link in span.links],
                    "Links.TraceState": [link.trace_state for link in span.links],
                    "Links.Attributes": [attrs(link.attributes) for link in span.links]})
                if variant == schema.JSON:
                    rows[-1]["ResourceAttributesKeys"] = sorted(resource)
                    rows[-1]["SpanAttributesKeys"] = sorted(rows[-1]["SpanAttributes"])
    return rows


def _plain(value: AnyValue):
    which = value.WhichOneof("value")
    return getattr(value, which) if which else None


CONFIG = replace(load_config().tasks, root_grace=0.0)
TRACE5 = f"{5:032x}"


def duck_with(request: ExportTraceServiceRequest, now_ns: int) -> duckdb.DuckDBPyConnection:
    """DuckDB fed `request` through the normalizer and the writer."""
    con = duckdb.connect()
    migrate(con)
    batch = normalize_request(request, load_config().ingest, now_ns)
    TaskWriter(con, CONFIG).write(batch.rows, now_ns)
    return con


def chdb_with(path, variant: str, request: ExportTraceServiceRequest, now_ns: int) -> ChdbRunner:
    """chdb with the exporter's table (`variant`) holding `request`, materialized by passes of
    shard 0/1 until caught up with `now_ns`."""
    url = parse_store_url(f"chdb://{path}")
    runner = ChdbRunner(url.path)
    for statement in schema.otel_traces_ddl(url.database, url.table, variant):
        runner.execute(statement)  # as the exporter creates it, before agentsla starts
    prepare(runner, url)
    runner.insert("default.otel_traces", exporter_rows(request, variant))
    while not run_pass(runner, url.database, url.table, Shard(0, 1), CONFIG, now_ns).caught_up:
        pass
    return runner


@pytest.fixture(scope="module")
def duck():
    """DuckDB fed through the normalizer and the writer."""
    con = duck_with(corpus(), NOW)
    yield DuckDBStore(con)
    con.close()


@pytest.fixture(scope="module", params=[schema.MAP, schema.JSON])
def chdb_runner(request, tmp_path_factory):
    """chdb with the exporter's table (each variant in turn) holding the corpus, materialized:
    every comparison below runs over both layouts."""
    runner = chdb_with(tmp_path_factory.mktemp("chdb"), request.param, corpus(), NOW)
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def house(chdb_runner):
    """The ClickHouse read store over chdb."""
    return ClickHouseStore(chdb_runner)


#: Columns that differ by design: arrival times (ClickHouse keeps none) and write times.
_NOT_COMPARED = {"first_seen_ns", "updated_ns", "received_ns", "attributes", "resource",
                 "events", "links", "parent_remote", "start", "end", "children", "scope"}


def _same(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in _NOT_COMPARED}


TASK_IDS = ["ok", "timeout", "recovered", "fallback", TRACE5]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_rows_agree(duck, house, task_id):
    """Each task's row (outcome, first failing hop, counts) is the same on both engines."""
    assert _same(duck.rows("task", {"task_id": task_id})[0]) == \
        _same(house.rows("task", {"task_id": task_id})[0])


def test_outcomes_follow_the_stories(house):
    """The ClickHouse side reaches the outcomes and blame the stories tell (by hand)."""
    got = {t: house.rows("task", {"task_id": t})[0] for t in TASK_IDS}
    assert {t: r["outcome"] for t, r in got.items()} == {
        "ok": "success", "timeout": "failed", "recovered": "success",
        "fallback": "degraded", TRACE5: "budget_exhausted"}
    assert (got["timeout"]["ffh_kind"], got["timeout"]["ffh_name"],
            got["timeout"]["ffh_reason"]) == ("tool", "search", "timeout")
    assert got["timeout"]["retries"] == 1 and got["recovered"]["retries"] == 1
    assert got["ok"]["input_tokens"] == 2 and got[TRACE5]["input_tokens"] == 7


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_spans_agree(duck, house, task_id):
    """get_task's spans (hop kind and name, typed attributes, reason, call, attempt) agree."""
    def spans(store):
        return [_same(s) for s in tasks._task_spans(store, store.rows(
            "task", {"task_id": task_id})[0])]
    assert spans(duck) == spans(house)


def test_root_causes_agree(duck, house):
    """The Pareto of first failing hops is the same, with its example task ids."""
    window = (T0, T0 + 3600 * 10**9)
    want = root_causes.root_causes(duck, *window, raw=True)
    assert root_causes.root_causes(house, *window) == want
    # the budget-exhausted root failed with "deadline" after its child ended: blamed itself
    assert {(r["ffh_kind"], r["ffh_name"], r["ffh_reason"]): r["example_task_ids"]
            for r in want} == {("tool", "search", "timeout"): ["timeout"],
                               ("model", "gpt-4o", "server_error"): ["fallback"],
                               ("gateway", "POST /ask", "timeout"): [TRACE5]}


def test_replayed_pass_changes_nothing(chdb_runner, house):
    """A second pass over the same spans (a restarted worker) leaves every answer as it was."""
    before = [_same(house.rows("task", {"task_id": t})[0]) for t in TASK_IDS]
    everything = replace(CONFIG, late_window=1e6)  # re-read every span
    run_pass(chdb_runner, "default", "otel_traces", Shard(0, 1), everything, NOW + 1)
    assert [_same(house.rows("task", {"task_id": t})[0]) for t in TASK_IDS] == before
    counted = chdb_runner.arrow("select count() as n from default.tasks", {}).to_pylist()
    assert counted == [{"n": len(TASK_IDS)}]


WINDOW = (T0, T0 + 3600 * 10**9)


def _close(got: list[dict], want: list[dict]) -> bool:
    """Equal rows, floats up to rounding (the engines sum the interpolation in another order)."""
    def close(a, b) -> bool:
        return a == pytest.approx(b, rel=1e-12) if isinstance(b, float) else a == b
    return len(got) == len(want) and all(
        g.keys() == w.keys() and all(close(g[k], w[k]) for k in w) for g, w in zip(got, want))


def test_sla_totals_agree(duck, house):
    """Counts and histogram quantiles (the same exponential buckets) agree."""
    want = sla.sla_totals(duck, *WINDOW)
    assert _close([sla.sla_totals(house, *WINDOW)], [want])
    # by hand: ok and recovered succeed; one failed, one degraded, one budget_exhausted
    assert (want["finished"], want["success"], want["failed"], want["degraded"],
            want["budget_exhausted"]) == (5, 2, 1, 1, 1)
    # durations 900, 1500, 2000, 3000, 5000 ms: the median 2000, read from its bucket
    assert want["latency_p50_ms"] == pytest.approx(2000, rel=0.011)


@pytest.mark.parametrize("dimension", ["tenant_id", "task_type", "service_name"])
def test_sla_by_agrees(duck, house, dimension):
    assert _close(sla.sla_by(house, *WINDOW, dimension), sla.sla_by(duck, *WINDOW, dimension))


def test_sla_by_tenant_follows_the_story(house):
    by = {r["tenant_id"]: (r["finished"], r["success"]) for r in
          sla.sla_by(house, *WINDOW, "tenant_id")}
    assert by == {"acme": (2, 1), "beta": (2, 1), None: (1, 0)}


@pytest.mark.parametrize("filters", [{}, {"tenant_id": "acme"}, {"task_type": "none"}])
def test_budget_waterfalls_agree(duck, house, filters):
    """/budget: the window's totals and each hop kind's self time agree (over DuckDB's raw
    rows; T0 is 40 s into its minute, so ClickHouse reads the rollups' whole minutes too)."""
    assert budget.budget_waterfall(house, *WINDOW, **filters) == \
        budget.budget_waterfall(duck, *WINDOW, raw=True, **filters)


def test_budget_waterfall_follows_the_story(house):
    """Self times by hand: each root is the gateway, the rest sits in its children."""
    got = budget.budget_waterfall(house, *WINDOW)
    # durations 900 + 5000 + 3000 + 2000 + 1500 ms; budgets 60 s (ok) and 1 s (trace 5)
    assert (got["tasks"], got["tasks_with_budget"], got["avg_duration_ms"],
            got["avg_budget_ms"]) == (5, 2, 2480, 30500)
    assert got["unused_budget_share"] == pytest.approx(1 - 2400 / 61000)
    # model: 780 (ok) + 490 + 2300 (recovered) + 890 + 990 (fallback) + 1480 (trace 5);
    # tool: the two tries of search, 1990 each; gateway: 30 + 1020 + 210 + 120 + 20; agent 90
    assert [(k["hop_kind"], k["tasks_with_hop"], k["self_ms"]) for k in got["by_hop_kind"]] \
        == [("model", 4, 6930), ("tool", 1, 3980), ("gateway", 5, 1400), ("agent", 1, 90)]


def test_slo_answers_agree(duck, house):
    """The SLO window counts and the burn status (every burn window) agree."""
    config = load_config()
    assert slo.slo_window(house, config, *WINDOW) == slo.slo_window(duck, config, *WINDOW)
    assert slo.slo_status(house, config, WINDOW[1]) == slo.slo_status(duck, config, WINDOW[1])


@pytest.mark.parametrize("filters", [{}, {"outcome": "success"}, {"tenant_id": "beta"},
                                     {"ffh_kind": "tool", "ffh_name": "search"}])
def test_task_lists_agree(duck, house, filters):
    def listed(store):
        return [_same(t) for t in tasks.list_tasks(store, *WINDOW, **filters)]
    assert listed(house) == listed(duck) != []


def _flat(spans: list[dict]) -> list[dict]:
    return [x for s in spans for x in (_same(s), *_flat(s["children"]))]


def test_traces_agree(duck, house):
    """A trace's spans, as a tree, and the trace of each task agree."""
    got, want = (tasks.get_trace(s, f"{2:032x}") for s in (house, duck))
    assert (got["task_ids"], _flat(got["spans"])) == (want["task_ids"], _flat(want["spans"]))
    assert tasks.task_trace_ids(house, TASK_IDS) == tasks.task_trace_ids(duck, TASK_IDS)


@pytest.mark.parametrize("filters", [{}, {"hop_kind": "model"}, {"tenant_id": "beta"}])
def test_hop_stats_agree(duck, house, filters):
    """Per-hop calls, logical calls, errors, reasons, latency quantiles and tokens agree."""
    assert _close(hops.hop_stats(house, *WINDOW, **filters),
                  hops.hop_stats(duck, *WINDOW, **filters))


def test_hop_stats_follow_the_story(house):
    by = {(r["hop_kind"], r["hop_name"]): r for r in hops.hop_stats(house, *WINDOW)}
    search = by[("tool", "search")]  # two tries of one call, both timed out
    assert (search["calls"], search["logical_calls"], search["timeouts"]) == (2, 1, 2)
    gpt = by[("model", "gpt-4o")]  # ok once, a 429 then its retry, a 503: 4 calls, 3 logical
    assert (gpt["calls"], gpt["logical_calls"], gpt["rate_limited"], gpt["errors"]) == (4, 3, 1, 2)


def test_spans_questions_agree(duck, house):
    """What the spans module asks: model calls per provider, spans received."""
    assert sorted(spans.provider_calls(house, *WINDOW), key=str) == \
        sorted(spans.provider_calls(duck, *WINDOW), key=str)
    # received_ns differs by design (no receive time in otel_traces): only the total agrees
    assert sum(r["spans"] for r in spans.spans_received(house, T0, NOW)) == 14


def test_metrics_totals_agree(duck, house):
    """/metrics: the counters, histograms, exemplar series and tasks in progress of the story."""
    answers = []
    for store in (duck, house):
        totals = Totals(T0 - 600 * 10**9)
        totals.advance(store, T0 + 7200 * 10**9)  # every story minute settled
        answers.append((dict(totals.counters), dict(totals.histograms), dict(totals.sums_e6),
                        set(totals.exemplars), sorted(totals.in_progress(store, NOW), key=str)))
    assert answers[0] == answers[1]
    counters, sums = answers[0][0], answers[0][2]
    assert all(sums[family] for family in ("agentsla_task_duration_seconds",
                                           "agentsla_hop_duration_seconds"))
    assert sum(counters["agentsla_tasks_total"].values()) == 5  # the five stories
    assert sum(counters["agentsla_hop_retries_total"].values()) >= 2


SECOND = 10**9
#: Ten one-second buckets over the corpus (its tasks end 0.9 to 5 s after T0) and an hour in
#: ten-minute buckets, whose first bucket holds everything and the others nothing.
SERIES = [(T0, T0 + 10 * SECOND, SECOND), (T0, T0 + 3600 * SECOND, 600 * SECOND)]


@pytest.mark.parametrize("window", SERIES)
@pytest.mark.parametrize("filters", [{}, {"tenant_id": "beta"}])
def test_sla_series_agree(duck, house, window, filters):
    """Bucket by bucket, empty buckets included, the counts and quantiles agree."""
    assert _close(sla.sla_series(house, *window, **filters),
                  sla.sla_series(duck, *window, **filters))


def test_sla_series_follows_the_story(house):
    # tasks end at 0.9 s (ok), 1.5 (trace 5), 2.0 (fallback), 3.0 (recovered), 5.0 (timeout)
    rows = sla.sla_series(house, *SERIES[0])
    assert [r["bucket_ns"] for r in rows] == [T0 + i * SECOND for i in range(10)]
    assert [r["finished"] for r in rows] == [1, 1, 1, 1, 0, 1, 0, 0, 0, 0]
    assert [r["success_rate"] for r in rows[:4]] == [1.0, 0.0, 0.0, 1.0]
    assert rows[4]["success_rate"] is None and rows[5]["failed"] == 1


@pytest.mark.parametrize("window", SERIES)
@pytest.mark.parametrize("filters", [{}, {"hop_kind": "model"}, {"tenant_id": "beta"},
                                     {"limit": 2}])
def test_hop_series_agree(duck, house, window, filters):
    """The busiest hops per bucket: calls, error, timeout and 429 rates, p95 latency agree."""
    assert _close(hops.hop_series(house, *window, **filters),
                  hops.hop_series(duck, *window, **filters))


def test_hop_series_follows_the_story(house):
    # the five roots (POST /ask) rank first, gpt-4o's four calls second; gpt-4o's calls end at
    # 0.5, 0.8 and 0.9 s (bucket 0) and 2.9 s (bucket 2), one of them a 429 and one a 503
    rows = hops.hop_series(house, *SERIES[0], limit=2)
    gpt = [((r["bucket_ns"] - T0) // SECOND, r["calls"], r["error_rate"], r["rate_limited_rate"])
           for r in rows if r["hop_name"] == "gpt-4o"]
    assert gpt == [(0, 3, 2 / 3, 1 / 3), (2, 1, 0.0, 0.0)]
    assert {r["hop_name"] for r in rows} == {"POST /ask", "gpt-4o"}


@pytest.mark.parametrize("window", SERIES)
@pytest.mark.parametrize("filters", [{}, {"tenant_id": "acme"}])
def test_root_cause_series_agree(duck, house, window, filters):
    """First failing hops per bucket, their tasks, seconds lost and share agree."""
    assert _close(root_causes.root_cause_series(house, *window, **filters),
                  root_causes.root_cause_series(duck, *window, **filters))


def test_root_cause_series_follows_the_story(house):
    rows = root_causes.root_cause_series(house, *SERIES[0])
    # trace 5 ends at 1.5 s (gateway timeout), fallback at 2.0 s, timeout at 5.0 s
    assert [((r["bucket_ns"] - T0) // SECOND, r["ffh_kind"], r["ffh_name"], r["share"])
            for r in rows] == [(1, "gateway", "POST /ask", 1.0), (2, "model", "gpt-4o", 1.0),
                               (5, "tool", "search", 1.0)]


@pytest.mark.parametrize("scope", [
    {}, {"tenant_id": "acme"}, {"tenant_id": "beta", "hop_kind": "model"},
    {"hop_kind": "tool", "hop_name": "search"}, {"task_type": "none-such"}])
def test_first_failing_span_agrees(duck, house, scope):
    """An incident's onset (the first failing span of its scope) is the same instant."""
    full = {k: scope.get(k) for k in spans.SCOPE_KEYS}
    assert spans.first_failing_span_ns(house, *WINDOW, full) == \
        spans.first_failing_span_ns(duck, *WINDOW, full)


def test_first_failing_span_follows_the_story(house):
    def first(**scope):
        return spans.first_failing_span_ns(house, *WINDOW, {k: scope.get(k)
                                                            for k in spans.SCOPE_KEYS})
    # the 429 of "recovered" ends at 0.5 s; acme's first failure is the timed out search (2.0 s)
    assert (first(), first(tenant_id="acme"), first(task_type="none-such")) == \
        (T0 + 500 * MS, T0 + 2000 * MS, None)


def _alert_selectors() -> list[str]:
    """One selector per alert metric, grouped where the family allows it."""
    from agentsla.alerts.rules.catalog import METRICS

    by = {"task": " by (tenant_id)", "hop": " by (hop_name)", "provider": " by (model)",
          "slo": " by (task_type)", "ingest": ""}
    return [f"{name} [1h] > 0" for name in METRICS] + \
        [f"{name}{by[spec.family.name]} [1h] > 0" for name, spec in METRICS.items()]


#: Metrics the corpus has no input for: no streamed model call, no queue hop, no token quota.
_NONE_IN_CORPUS = {"ttft_p95_seconds", "queue_wait_p95_seconds", "token_quota_ratio"}


@pytest.mark.parametrize("expr", _alert_selectors())
def test_alert_metrics_agree(duck, house, expr):
    """Every alert metric selects the same series, values and counts on both engines."""
    from agentsla.alerts.rules.expr import parse
    from agentsla.alerts.rules.source import MetricSource

    selector = parse(expr).selector
    config = load_config()

    def samples(store):
        got = MetricSource(store, config).select(selector, WINDOW[1])
        return sorted(([s.labels, s.value, s.count] for s in got), key=str)
    # spans_ingested counts arrivals: DuckDB's at NOW, ClickHouse's at each span's end (the
    # exporter keeps no receive time); the window holds both, so the counts agree too
    got, want = samples(house), samples(duck)
    assert [g[0::2] for g in got] == [w[0::2] for w in want]
    assert (want == []) == (selector.metric in _NONE_IN_CORPUS)
    assert [g[1] for g in got] == pytest.approx([w[1] for w in want], rel=1e-12)


def test_alert_context_agrees(duck, house):
    """An alert's root-cause context (top failing hop, examples, their traces) agrees."""
    from agentsla.alerts.rules.source import MetricSource

    config = load_config()
    for labels in ({}, {"tenant_id": "acme"}, {"tool": "search"}):
        assert MetricSource(house, config).context(labels, 3600, WINDOW[1]) == \
            MetricSource(duck, config).context(labels, 3600, WINDOW[1])


MINUTE, HOUR = 60 * SECOND, 3600 * SECOND
#: Windows the rollups answer (T0 is 40 s into its minute, the corpus ends 5 s after T0): the
#: corpus in a whole minute, in a whole hour (the hour tier), in the partial first minute of a
#: window starting 2 s after T0 (raw edges around whole minutes), and a series of whole
#: ten-minute buckets.
ROLLED = [(T0 // MINUTE * MINUTE, T0 // MINUTE * MINUTE + HOUR),
          (T0 // HOUR * HOUR, T0 // HOUR * HOUR + 2 * HOUR),
          (T0 + 2 * SECOND, T0 + HOUR)]
ROLLED_SERIES = (T0 // MINUTE * MINUTE, T0 // MINUTE * MINUTE + 3600 * SECOND, 600 * SECOND)


@pytest.mark.parametrize("window", ROLLED)
def test_rollup_answers_agree_with_duckdb_and_with_raw_rows(duck, house, window):
    """Over whole minutes ClickHouse reads its rollups, DuckDB its own: both equal, and equal
    to ClickHouse's answer over raw rows."""
    questions = [
        lambda store, **kw: [sla.sla_totals(store, *window, **kw)],
        lambda store, **kw: sla.sla_by(store, *window, "tenant_id", **kw),
        lambda store, **kw: hops.hop_stats(store, *window, **kw),
        lambda store, **kw: root_causes.root_causes(store, *window, **kw),
        lambda store, **kw: [budget.budget_waterfall(store, *window, **kw)],
        lambda store, **kw: slo.slo_window(store, load_config(), *window, **kw),
        lambda store, **kw: sla.sla_series(store, *ROLLED_SERIES, **kw),
        lambda store, **kw: hops.hop_series(store, *ROLLED_SERIES, **kw),
        lambda store, **kw: root_causes.root_cause_series(store, *ROLLED_SERIES, **kw)]
    for ask in questions:
        rolled = ask(house)
        assert _close(rolled, ask(duck)) and _close(rolled, ask(house, raw=True))


@pytest.mark.parametrize("tier, unit", [("", MINUTE), ("_hourly", HOUR)])
def test_the_rollups_hold_the_corpus_minute(chdb_runner, tier, unit):
    """The story by hand: five finished tasks and one minute (hour) of the hops, one shard's
    rows."""
    got = chdb_runner.arrow(f"select shard, sum(finished) as finished, sum(success) as success "
                            f"from default.task_minutes{tier} group by shard", {}).to_pylist()
    assert got == [{"shard": "0/1", "finished": 5, "success": 2}]
    gpt = chdb_runner.arrow(f"select minute_ns, calls, logical_calls from "
                            f"default.hop_minutes{tier} where hop_name = 'gpt-4o'",
                            {}).to_pylist()
    assert gpt == [{"minute_ns": T0 // unit * unit, "calls": 4, "logical_calls": 3}]
