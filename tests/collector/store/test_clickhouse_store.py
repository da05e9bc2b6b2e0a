"""The ClickHouse store over chdb: URLs, start-up checks, parameters, the exporter's row format,
and materializer passes (shards, late spans, replays). chdb runs the ClickHouse engine in this
process; a ClickHouse server cannot be installed here, so ServerRunner is not exercised.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentsla.collector.store.clickhouse import schema
from agentsla.collector.store.clickhouse.exporter_rows import render
from agentsla.collector.store.clickhouse.materializer import Shard, parse_shard, run_pass
from agentsla.collector.store.clickhouse.url import StoreURL, parse_store_url
from agentsla.config import load_config
from agentsla.errors import PermanentError
from agentsla.queries.engines.clickhouse import ChdbRunner, prepare, traces_variant

T0 = 1_780_000_000 * 10**9
MS = 10**6
CONFIG = replace(load_config().tasks, root_grace=0.0, late_window=0.0)

URLS = [
    # (text, expected)
    ("", StoreURL("duckdb")),
    ("duckdb", StoreURL("duckdb")),
    ("chdb:///var/lib/agentsla", StoreURL("chdb", path="/var/lib/agentsla")),
    ("chdb:///d?table=traces&database=otel",
     StoreURL("chdb", path="/d", database="otel", table="traces")),
    ("clickhouse://ingest:s%40cret@ch.local:8123/otel",
     StoreURL("clickhouse", host="ch.local", port=8123, user="ingest", password="s@cret",
              database="otel")),
    # https with the ClickHouse default TLS port
    ("clickhouses://ch.local", StoreURL("clickhouses", host="ch.local", port=8443)),
]

BAD_URLS = [
    # (text, words the error must say)
    ("mysql://h/db", "unknown store 'mysql'"),
    ("chdb://relative/path", "three slashes"),
    ("clickhouse:///db", "needs a host"),
    ("clickhouse://h:99999/db", "bad port"),
    ("clickhouse://h/db?tabel=x", "unknown store URL parameter 'tabel'"),
    ("clickhouse://h/db;drop", "invalid ClickHouse name 'db;drop'"),
]


@pytest.mark.parametrize("text,expected", URLS)
def test_store_urls_parse(text, expected):
    assert parse_store_url(text) == expected


@pytest.mark.parametrize("text,words", BAD_URLS)
def test_bad_store_urls_say_why(text, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        parse_store_url(text)


def test_store_url_never_prints_the_password():
    assert "s@cret" not in str(parse_store_url("clickhouse://u:s%40cret@h/db"))


@pytest.mark.parametrize("text", ["0/1", "3/4", " 1 / 2 "])
def test_shards_parse(text):
    assert 0 <= parse_shard(text).index < parse_shard(text).count


@pytest.mark.parametrize("text", ["4/4", "1", "-1/2", "a/b", "0/0"])
def test_bad_shards_are_refused(text):
    with pytest.raises(ValueError, match="K/N"):
        parse_shard(text)


@pytest.mark.parametrize("value,text", [
    # (a normalized attribute value, what the exporter stores: pcommon.Value.AsString)
    (3, "3"),
    (2.5, "2.5"),
    (3.0, "3"),
    (1e20, "100000000000000000000"),
    (1.5e-7, "0.00000015"),
    (True, "true"),
    ("x", "x"),
    ([1, "a"], '[1,"a"]'),
    ({"model": "m"}, '{"model":"m"}'),
])
def test_attribute_values_are_stored_as_the_exporter_does(value, text):
    assert render(value) == text


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """One chdb session for the module (chdb allows one path per process)."""
    made = ChdbRunner(str(tmp_path_factory.mktemp("chdb")))
    yield made
    made.close()


def _store(runner, database: str) -> StoreURL:
    url = StoreURL("chdb", path="unused", database=database)
    prepare(runner, url)
    return url


def test_parameters_are_bound_not_pasted(runner):
    """Quotes, backslashes, tabs, newlines and nulls come back as they went in."""
    tricky = "it's a \\ back\tslash\nline'); drop table x; --"
    got = runner.arrow("select {s:String} as s, {n:Nullable(String)} as n, "
                       "{a:Array(String)} as a", {"s": tricky, "n": None, "a": [tricky, "b"]})
    assert got.to_pylist() == [{"s": tricky, "n": None, "a": [tricky, "b"]}]


def test_a_table_that_is_not_the_exporters_is_refused(runner):
    runner.execute("create database if not exists wrong")
    runner.execute("create table wrong.otel_traces (TraceId String, Duration Int64) "
                   "engine = MergeTree order by TraceId")
    with pytest.raises(PermanentError, match="not the clickhouseexporter's traces table"):
        traces_variant(runner, StoreURL("chdb", path="x", database="wrong"))


def test_a_missing_table_is_refused(runner):
    with pytest.raises(PermanentError, match="no table default.nothing_here"):
        traces_variant(runner, StoreURL("chdb", path="x", table="nothing_here"))


def test_the_variant_is_detected(runner):
    """The exporter's two layouts are told apart; a JSON table lacking columns is refused."""
    runner.execute("create database if not exists jsonv")
    runner.execute("create table jsonv.otel_traces (TraceId String, SpanAttributes JSON) "
                   "engine = MergeTree order by TraceId")
    with pytest.raises(PermanentError, match=r"\(json variant\): expected Timestamp"):
        traces_variant(runner, StoreURL("chdb", path="x", database="jsonv"))
    for variant in (schema.JSON, schema.MAP):
        for statement in schema.otel_traces_ddl("jsonv", variant, variant):
            runner.execute(statement)
        assert traces_variant(runner, StoreURL("chdb", path="x", database="jsonv",
                                               table=variant)) == variant


def _row(trace: int, span: int, parent: int | None, start_ms: int, end_ms: int, **attrs) -> dict:
    """A row as the clickhouseexporter writes it (attributes as strings)."""
    start = T0 + start_ms * MS
    return {"Timestamp": f"{start // 10**9}.{start % 10**9:09d}", "TraceId": f"{trace:032x}",
            "SpanId": f"{span:016x}", "ParentSpanId": f"{parent:016x}" if parent else "",
            "SpanName": "POST /ask" if parent is None else "chat", "ServiceName": "gw",
            "SpanKind": "SPAN_KIND_SERVER" if parent is None else "SPAN_KIND_CLIENT",
            "StatusCode": "STATUS_CODE_UNSET", "Duration": (end_ms - start_ms) * MS,
            "SpanAttributes": {k.replace("__", "."): v for k, v in attrs.items()}}


def _tasks(runner, database: str) -> dict[str, dict]:
    rows = runner.arrow(f"select * from {database}.tasks", {})
    return {r["task_id"]: r for r in rows.to_pylist()}


def _now(ms: int) -> int:
    return T0 + ms * MS


def test_shards_split_the_tasks_and_together_cover_them(runner):
    """Four traces, two shards: each task is written by exactly one shard."""
    url = _store(runner, "sharded")
    runner.insert("sharded.otel_traces", [_row(t, 1, None, 0, 100, task__id=f"t{t}")
                                          for t in range(1, 5)])
    written = [run_pass(runner, "sharded", url.table, Shard(k, 2), CONFIG, _now(1000)).tasks
               for k in (0, 1)]
    assert sum(written) == 4 and 0 not in written  # these ids hash to both shards
    assert sorted(_tasks(runner, "sharded")) == ["t1", "t2", "t3", "t4"]


def test_a_root_arriving_after_a_pass_finishes_its_task(runner):
    """The child comes first (task in progress); the root, exported later, finishes it."""
    url = _store(runner, "lateroot")
    runner.insert("lateroot.otel_traces", [_row(1, 2, 1, 10, 50, gen_ai__operation__name="chat",
                                                gen_ai__request__model="m")])
    run_pass(runner, "lateroot", url.table, Shard(0, 1), CONFIG, _now(60))
    assert _tasks(runner, "lateroot")[f"{1:032x}"]["finished"] is False
    runner.insert("lateroot.otel_traces", [_row(1, 1, None, 0, 55)])  # ended before the mark
    run_pass(runner, "lateroot", url.table, Shard(0, 1), CONFIG, _now(5000))
    task = _tasks(runner, "lateroot")[f"{1:032x}"]
    assert (task["finished"], task["outcome"], task["span_count"]) == (True, "success", 2)
    # root 0..55 ms, its model call 10..50 ms (the self times /budget sums on DuckDB)
    assert task["self_times"] == [{"hop_kind": "gateway", "self_us": 15_000},
                                  {"hop_kind": "model", "self_us": 40_000}]


def _listed_in_progress(runner, database: str) -> list[tuple[str, str]]:
    rows = runner.arrow(f"select tasks from {database}.agentsla_unfinished_tasks final", {})
    return [(t["task_id"], t["trace_id"]) for row in rows.to_pylist() for t in row["tasks"]]


def test_each_pass_lists_its_tasks_in_progress_for_the_next(runner):
    """A pass leaves its tasks in progress, with their traces, for the next pass to judge
    again (instead of a scan of every stored task); a store with no list yet (upgraded) is
    scanned: the root, late and before the watermark, still finishes its task."""
    url = _store(runner, "listed")
    runner.insert("listed.otel_traces", [_row(1, 2, 1, 10, 50), _row(2, 1, None, 0, 40)])
    run_pass(runner, "listed", url.table, Shard(0, 1), CONFIG, _now(60))
    trace = f"{1:032x}"
    assert _listed_in_progress(runner, "listed") == [(trace, trace)]
    runner.execute("truncate table listed.agentsla_unfinished_tasks")
    runner.insert("listed.otel_traces", [_row(1, 1, None, 0, 55)])  # ended before the mark
    run_pass(runner, "listed", url.table, Shard(0, 1), CONFIG, _now(5000))
    assert _tasks(runner, "listed")[trace]["finished"] is True
    assert _listed_in_progress(runner, "listed") == []


def test_a_root_longer_than_the_longest_span_still_finishes_its_task(runner):
    """A pass looks for new spans among those started `longest_span` before its late window
    (its read stays bounded); a root that started earlier than that (a 2 h task with a 3 h
    budget, the limit an hour) still finishes its task: the task is in progress, so every pass
    reads its trace."""
    url = _store(runner, "longroot")
    hour_ms = 3_600_000
    config = replace(CONFIG, longest_span=3600.0, late_window=300.0,
                     materialize_max_window=3 * 3600.0)
    runner.insert("longroot.otel_traces", [_row(1, 2, 1, 10, 50, task__id="long",
                                                budget__total_ms=str(3 * hour_ms))])
    run_pass(runner, "longroot", url.table, Shard(0, 1), config, _now(60))
    run_pass(runner, "longroot", url.table, Shard(0, 1), config, _now(2 * hour_ms))
    assert _tasks(runner, "longroot")["long"]["finished"] is False
    # its end is past the watermark; its start 65 min before the late window's
    runner.insert("longroot.otel_traces", [_row(1, 1, None, 0, 2 * hour_ms + 1000)])
    run_pass(runner, "longroot", url.table, Shard(0, 1), config, _now(2 * hour_ms + 5000))
    task = _tasks(runner, "longroot")["long"]
    assert (task["finished"], task["span_count"], task["duration_ms"]) == \
        (True, 2, 2 * hour_ms + 1000)


def test_a_late_span_within_the_window_joins_its_finished_task(runner):
    """A failing child exported after the task was judged is read again and blamed."""
    url = _store(runner, "latespan")
    runner.insert("latespan.otel_traces", [_row(1, 1, None, 0, 100, task__id="late")])
    run_pass(runner, "latespan", url.table, Shard(0, 1), CONFIG, _now(200))
    assert _tasks(runner, "latespan")["late"]["outcome"] == "success"
    runner.insert("latespan.otel_traces", [_row(1, 2, 1, 10, 90, fallback__used="true")])
    late = replace(CONFIG, late_window=0.25)  # 250 ms back from the watermark (200 ms)
    run_pass(runner, "latespan", url.table, Shard(0, 1), late, _now(300))
    task = _tasks(runner, "latespan")["late"]
    assert (task["outcome"], task["span_count"], task["fallback_used"]) == ("degraded", 2, True)


def _pass_after(runner, url: StoreURL, rows: list[dict], now_ms: int) -> None:
    """Insert exporter rows, then one pass of shard 0/1 (CONFIG) at now_ms."""
    runner.insert(f"{url.database}.otel_traces", rows)
    run_pass(runner, url.database, url.table, Shard(0, 1), CONFIG, _now(now_ms))


def test_a_new_span_of_a_trace_judged_before_the_window_keeps_its_task(runner):
    """A trace whose judged spans all ended before the pass's window gets a new span that
    names no task: its stored task (the span facts) still holds it. (A trace with no judged
    span in the window and all its spans started inside it is new: no facts to look up.)"""
    url = _store(runner, "oldtrace")
    _pass_after(runner, url, [_row(1, 1, None, 0, 100, task__id="old")], 200)
    _pass_after(runner, url, [_row(1, 2, 1, 5_000, 10_000)], 20_000)
    tasks = _tasks(runner, "oldtrace")
    assert sorted(tasks) == ["old"] and tasks["old"]["span_count"] == 2


def test_a_restarted_shard_resumes_from_its_watermark(runner):
    """The watermark is stored: a new pass (a fresh worker) starts where the last one ended."""
    url = _store(runner, "resume")
    runner.insert("resume.otel_traces", [_row(1, 1, None, 0, 100, task__id="a")])
    run_pass(runner, "resume", url.table, Shard(0, 1), CONFIG, _now(200))
    again = run_pass(runner, "resume", url.table, Shard(0, 1), CONFIG, _now(300))
    assert (again.tasks, again.spans) == (0, 0)  # nothing new since the watermark


def test_a_backlog_is_worked_off_in_bounded_passes(runner):
    """Ten tasks ending a second apart from 0.1 s, passes of at most 3 s up to now (20 s)."""
    url = _store(runner, "backlog")
    runner.insert("backlog.otel_traces", [_row(t, 1, None, t * 1000, t * 1000 + 100,
                                               task__id=f"b{t}") for t in range(10)])
    small = replace(CONFIG, materialize_max_window=3.0)
    passes = [run_pass(runner, "backlog", url.table, Shard(0, 1), small, _now(20_000))
              for _ in range(7)]
    # [0.1, 3.1) s, [3.1, 6.1), [6.1, 9.1), [9.1, 12.1), ..., [18.1, 20): now reached last
    assert [p.caught_up for p in passes] == [False] * 6 + [True]
    assert [p.tasks for p in passes] == [3, 3, 3, 1, 0, 0, 0]
    assert len(_tasks(runner, "backlog")) == 10


def test_a_trace_keyed_by_its_id_moves_to_the_task_its_root_declares(runner):
    """Children first (task = the trace id), then the root with task.id: one task remains."""
    url = _store(runner, "rekey")
    _pass_after(runner, url, [_row(1, 2, 1, 10, 50)], 60)
    assert list(_tasks(runner, "rekey")) == [f"{1:032x}"]
    _pass_after(runner, url, [_row(1, 1, None, 0, 100, task__id="declared")], 200)
    # a child ending later and naming no task still belongs to the declared one
    _pass_after(runner, url, [_row(1, 3, 1, 150, 250)], 300)
    tasks = _tasks(runner, "rekey")
    assert list(tasks) == ["declared"] and tasks["declared"]["span_count"] == 3
    # the task's lookup reads its trace; the trace's old task (its own id) is dropped
    assert _select(runner, "select task_id, trace_id from rekey.agentsla_task_traces final") \
        == [{"task_id": "declared", "trace_id": f"{1:032x}"}]
    assert _select(runner, "select span_id, task_id from rekey.hop_spans order by span_id") \
        == [{"span_id": f"{s:016x}", "task_id": "declared"} for s in (1, 2, 3)]


def _select(runner, sql: str) -> list[dict]:
    return runner.arrow(sql, {}).to_pylist()


def test_the_window_questions_read_the_spans_materialized(runner):
    """hop_spans holds a span once a pass judged it, typed, with its reason and call."""
    url = _store(runner, "hopspans")
    runner.insert("hopspans.otel_traces", [
        _row(1, 1, None, 0, 100, task__id="h"),
        _row(1, 2, 1, 10, 90, gen_ai__operation__name="chat", gen_ai__request__model="m",
             gen_ai__system="openai", error__type="RateLimitError",
             gen_ai__usage__input_tokens="7")])
    assert _select(runner, "select * from hopspans.hop_spans") == []
    run_pass(runner, "hopspans", url.table, Shard(0, 1), CONFIG, _now(200))
    got = _select(runner, "select span_id, end_ns, hop_kind, hop_name, duration_ms, is_error, "
                          "error_type, call_id, attempt, input_tokens, provider, task_id "
                          "from hopspans.hop_spans order by span_id")
    assert got == [
        {"span_id": f"{1:016x}", "end_ns": _now(100), "hop_kind": "gateway",
         "hop_name": "POST /ask", "duration_ms": 100.0, "is_error": False, "error_type": None,
         "call_id": f"{1:016x}", "attempt": 0, "input_tokens": None, "provider": None,
         "task_id": "h"},
        {"span_id": f"{2:016x}", "end_ns": _now(90), "hop_kind": "model", "hop_name": "m",
         "duration_ms": 80.0, "is_error": True, "error_type": "rate_limited",
         "call_id": f"{2:016x}", "attempt": 0, "input_tokens": 7, "provider": "openai",
         "task_id": "h"}]


def test_hop_kinds_and_names_of_every_vocabulary_the_normalizer_reads(runner):
    """The hop kind rules (mapping.HOP_KIND_LOOKUPS, PRESENCE_HOPS) hold on ClickHouse too:
    the Vercel AI SDK's ai.* spans, OpenLLMetry before the GenAI operation names, the
    Traceloop SDK's decorators, GenAI attributes without an operation; and so does the name
    of a hop named by its HTTP method alone (its server's host)."""
    url = _store(runner, "vocab")
    runner.insert("vocab.otel_traces", [
        _row(1, 1, None, 0, 100, task__id="v"),
        _row(1, 2, 1, 10, 90, ai__operationId="ai.generateText", ai__model__id="gpt-4o-mini",
             ai__telemetry__functionId="support-agent"),
        _row(1, 3, 2, 20, 40, ai__operationId="ai.generateText.doGenerate",
             gen_ai__system="openai.chat", gen_ai__request__model="gpt-4o-mini"),
        _row(1, 4, 2, 41, 50, ai__operationId="ai.toolCall", ai__toolCall__name="search_kb"),
        _row(1, 5, 2, 51, 60, ai__operationId="ai.generateObject", ai__model__id="gpt-4o"),
        _row(1, 6, 1, 61, 70, llm__request__type="chat", gen_ai__request__model="gpt-4"),
        _row(1, 7, 1, 71, 72, traceloop__span__kind="workflow"),
        _row(1, 8, 1, 72, 73, traceloop__span__kind="task"),
        _row(1, 9, 1, 73, 74, gen_ai__tool__name="calc"),
        _row(1, 10, 1, 74, 75, gen_ai__provider__name="anthropic",
             gen_ai__request__model="claude"),
        _row(1, 11, 1, 75, 76, openinference__span__kind="Llm", llm__model_name="m"),
        {**_row(1, 12, 1, 76, 77, server__address="orders.internal"), "SpanName": "GET"},
        {**_row(1, 13, 1, 77, 78, http__url="http://u:p@tools.local:8080/s?q=1"),
         "SpanName": "HTTP POST"},
        {**_row(1, 14, 1, 78, 79, url__full="https://[::1]:9000/x"), "SpanName": "GET"},
        {**_row(1, 15, 1, 79, 80, url__full="not a url"), "SpanName": "GET"},
        _row(1, 16, 1, 80, 81, gen_ai__operation__name="framework", gen_ai__system="spring_ai",
             spring__ai__kind="chat_client"),
        _row(1, 17, 1, 81, 82, gen_ai__operation__name="framework", gen_ai__system="spring_ai")])
    run_pass(runner, "vocab", url.table, Shard(0, 1), CONFIG, _now(200))
    got = _select(runner, "select span_id, hop_kind, hop_name from vocab.hop_spans "
                          "order by span_id")
    assert [(r["hop_kind"], r["hop_name"]) for r in got] == [
        ("gateway", "POST /ask"), ("agent", "support-agent"), ("model", "gpt-4o-mini"),
        ("tool", "search_kb"), ("other", "chat"), ("model", "gpt-4"), ("agent", "chat"),
        ("other", "chat"), ("tool", "calc"), ("model", "claude"), ("model", "m"),
        ("other", "GET orders.internal"), ("other", "HTTP POST tools.local"),
        ("other", "GET [::1]"), ("other", "GET"), ("agent", "chat"), ("other", "chat")]


def test_a_store_materialized_before_the_lookup_tables_is_backfilled(runner):
    """agentsla_task_traces and agentsla_hop_spans came later: start-up fills them from the
    span facts, once, as the materializer would have."""
    url = _store(runner, "older")
    runner.insert("older.otel_traces", [_row(1, 1, None, 0, 100, task__id="o"),
                                        _row(1, 2, 1, 10, 90)])
    run_pass(runner, "older", url.table, Shard(0, 1), CONFIG, _now(200))
    tables = ("agentsla_task_traces", "agentsla_hop_spans")
    def rows(table: str) -> list[dict]:
        # `written` is when: the backfill writes its rows now
        return _select(runner, f"select * except (version, written) from older.{table} final "
                               "order by all")

    written = {t: rows(t) for t in tables}
    for table in tables:
        runner.execute(f"truncate table older.{table}")
    prepare(runner, url)
    assert {t: rows(t) for t in tables} == written


def test_a_store_whose_dirty_marks_predate_marked_ns_gets_the_column(runner):
    """Marks say when they were made since the evidence worker waits for minutes to settle:
    start-up adds the column to an older store, its marks at 0 (settled, stored next round)."""
    url = _store(runner, "unmarked")
    runner.execute("alter table unmarked.agentsla_evidence_dirty drop column marked_ns")
    runner.insert("unmarked.agentsla_evidence_dirty", [{"id": "old", "lo_ns": 0, "hi_ns": 0}])
    prepare(runner, url)
    assert _select(runner, "select id, marked_ns from unmarked.agentsla_evidence_dirty final"
                   ) == [{"id": "old", "marked_ns": 0}]


#: The exporter's newer trace-id lookup (traces_id_ts_lookup_table.sql of
#: opentelemetry-collector-contrib at commit 1b08503058e5): Start and End as
#: SimpleAggregateFunction(min/max, DateTime), weekly partitions, ordered by TraceId alone. The
#: store's own DDL (otel_traces_trace_id_ts.sql) is the older template's (commit 61540ced55e9).
NEWER_LOOKUP = """create table {db}.otel_traces_trace_id_ts (
    TraceId String CODEC(ZSTD(1)),
    Start SimpleAggregateFunction(min, DateTime) CODEC(ZSTD(1)),
    End SimpleAggregateFunction(max, DateTime) CODEC(ZSTD(1))
) ENGINE = MergeTree PARTITION BY toStartOfWeek(Start) ORDER BY (TraceId)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1"""


@pytest.mark.parametrize("lookup", ["older template", "newer template"])
def test_a_pass_reads_its_traces_within_the_lookups_time_bounds(runner, lookup):
    """The exporter's trace-id lookup (`otel_traces_trace_id_ts`, kept by its materialized
    view) bounds the read of a pass's traces: from the first span start to the last, over
    every insert of the trace; a trace missing from it leaves the read unbounded. Both shapes
    the exporter's templates have had serve (the view inserts into the table by name)."""
    from agentsla.collector.store.clickhouse.materializer import _spans, _trace_bounds

    database = "bounded" if lookup == "older template" else "bounded_newer"
    url = _store(runner, database)
    if lookup == "newer template":
        runner.execute(f"drop table {database}.otel_traces_trace_id_ts")
        runner.execute(NEWER_LOOKUP.format(db=database))
    trace, other = f"{1:032x}", f"{2:032x}"
    runner.insert(f"{database}.otel_traces",
                  [_row(1, 1, None, 0, 3_601_000, task__id="x"), _row(1, 2, 1, 1_500, 2_500),
                   _row(2, 1, None, 0, 10)])
    runner.insert(f"{database}.otel_traces",
                  [_row(1, 3, 1, 3_600_500, 3_600_900)])  # an hour on
    second = 10**9
    # T0 is a whole second: the first start T0, the last T0 + 3600.5 s, floored, plus 1 s
    assert _trace_bounds(runner, database, url.table, [trace]) == (T0, T0 + 3601 * second)
    assert sorted(_spans(runner, database, url.table, [trace])["span_id"].to_pylist()) == \
        [f"{s:016x}" for s in (1, 2, 3)]
    runner.execute(f"alter table {database}.otel_traces_trace_id_ts delete where TraceId = "
                   "{t:String} settings mutations_sync = 1", {"t": other})
    assert _trace_bounds(runner, database, url.table, [trace, other]) is None
    assert len(_spans(runner, database, url.table, [trace, other])) == 4
    hour_long = replace(CONFIG, longest_span=7200.0)  # the root lasts an hour
    while not run_pass(runner, database, url.table, Shard(0, 1), hour_long,
                       _now(3_700_000)).caught_up:
        pass
    assert _tasks(runner, database)["x"]["span_count"] == 3


#: The finding columns of the two spans of test_a_pass_writes_the_finding_spans_once, as their
#: attributes declare them and the pass judges them (ids at the end).
FINDING_ROWS = [
    {"end_ns": _now(90), "parent_span_id": f"{1:016x}", "task_id": "f", "name": "chat",
     "hop_kind": "model", "hop_name": "m", "start_ns": _now(10), "duration_ms": 80.0,
     "is_error": True, "error_type": "timeout", "hop_timeout_ms": 75.0,
     "budget_remaining_ms": 900.0, "retry_attempt": 1, "retry_max": 3, "call_id": f"{2:016x}",
     "attempt": 1, "fallback_used": True, "fallback_kind": "backup_model",
     "fallback_from": "big", "fallback_to": "m", "idempotency_key": "k-1", "loop_limit": None,
     "input_tokens": 1200, "output_tokens": 30, "ttft_ms": 250.0, "span_id": f"{2:016x}"},
    {"end_ns": _now(100), "parent_span_id": None, "task_id": "f", "name": "POST /ask",
     "hop_kind": "gateway", "hop_name": "POST /ask", "start_ns": _now(0), "duration_ms": 100.0,
     "is_error": False, "error_type": None, "hop_timeout_ms": None, "budget_remaining_ms": None,
     "retry_attempt": None, "retry_max": None, "call_id": f"{1:016x}", "attempt": 0,
     "fallback_used": None, "fallback_kind": None, "fallback_from": None, "fallback_to": None,
     "idempotency_key": None, "loop_limit": 8, "input_tokens": None, "output_tokens": None,
     "ttft_ms": None, "span_id": f"{1:016x}"},
]


def _finding_rows(runner, database: str) -> list[dict]:
    return _select(runner, f"select * except (trace_id) from {database}.finding_spans "
                           "order by end_ns")


def test_a_pass_writes_the_finding_spans_once(runner):
    """A judged span's finding columns are typed once by the pass that judged it (its task,
    reason and call too); a replayed pass (crashed before its watermark moved) writes the
    same rows again and the table still holds one per span."""
    url = _store(runner, "findrows")
    runner.insert("findrows.otel_traces", [
        _row(1, 1, None, 0, 100, task__id="f", agent__loop__limit="8"),
        _row(1, 2, 1, 10, 90, gen_ai__operation__name="chat", gen_ai__request__model="m",
             hop__timeout_ms="75", budget__remaining_ms="900", retry__attempt="1",
             retry__max="3", fallback__used="true", fallback__kind="backup_model",
             fallback__from="big", fallback__to="m", idempotency__key="k-1",
             error__type="timeout", gen_ai__usage__input_tokens="1200",
             gen_ai__usage__output_tokens="30", gen_ai__response__time_to_first_chunk="0.25")])
    assert _finding_rows(runner, "findrows") == []  # nothing judged yet
    run_pass(runner, "findrows", url.table, Shard(0, 1), CONFIG, _now(200))
    assert _finding_rows(runner, "findrows") == FINDING_ROWS
    runner.execute("truncate table findrows.agentsla_watermarks")  # the crash: mark not moved
    run_pass(runner, "findrows", url.table, Shard(0, 1), CONFIG, _now(300))
    assert _finding_rows(runner, "findrows") == FINDING_ROWS


class _CrashOnSecondDay:
    """The runner, failing the backfill's statement for its second day (a crash mid-way)."""

    def __init__(self, runner) -> None:
        self._runner, self.days = runner, 0

    def __getattr__(self, name: str):
        return getattr(self._runner, name)

    def execute(self, sql: str, params=None) -> None:
        if sql.startswith("insert into") and ".agentsla_finding_spans" in sql:
            self.days += 1
            if self.days == 2:
                raise RuntimeError("the process died")
        self._runner.execute(sql, params)


def test_an_upgraded_store_backfills_its_finding_spans_day_by_day_and_resumes(runner, caplog):
    """A store judged before agentsla_finding_spans existed (span facts, no finding rows) gets
    them at start-up, one day of span starts per step; a restart after a crash on the second
    day copies that day only, and every row is what the passes wrote (at version 0)."""
    url = _store(runner, "upgraded")
    day_ms = 86_400_000
    runner.insert("upgraded.otel_traces", [
        _row(1, 1, None, 0, 100, task__id="d1"), _row(1, 2, 1, 10, 90, retry__attempt="1"),
        _row(2, 1, None, day_ms, day_ms + 50, task__id="d2", hop__timeout_ms="40")])
    while not run_pass(runner, "upgraded", url.table, Shard(0, 1), CONFIG,
                       _now(day_ms + 1000)).caught_up:
        pass
    judged = _finding_rows(runner, "upgraded")
    assert [(r["task_id"], r["span_id"]) for r in judged] == \
        [("d1", f"{2:016x}"), ("d1", f"{1:016x}"), ("d2", f"{1:016x}")]
    runner.execute("truncate table upgraded.agentsla_finding_spans")  # as before the table
    caplog.set_level("INFO", logger="agentsla.store")
    with pytest.raises(RuntimeError, match="died"):
        prepare(_CrashOnSecondDay(runner), url)
    assert [r["task_id"] for r in _finding_rows(runner, "upgraded")] == ["d1", "d1"]
    caplog.clear()
    prepare(runner, url)  # the restart
    assert _finding_rows(runner, "upgraded") == judged
    done = [m for m in caplog.messages if "backfilled" in m]
    assert len(done) == 1 and "(1/1" in done[0] and "2026-05-29" in done[0]
    assert _select(runner, "select version from upgraded.agentsla_finding_spans "
                           "group by version") == [{"version": 0}]
    caplog.clear()
    prepare(runner, url)  # done: nothing more
    assert not [m for m in caplog.messages if "finding spans" in m]


def test_one_tasks_findings_wait_for_its_first_pass(runner):
    """One task's findings read the spans a pass judged: before the first pass the task is
    unknown, and the 404 says why; after it, its findings answer."""
    from agentsla.errors import NotFound
    from agentsla.queries.engines.clickhouse import ClickHouseStore
    from agentsla.queries.findings import find_findings

    url = _store(runner, "unjudged")
    runner.insert("unjudged.otel_traces", [_row(1, 1, None, 0, 100, task__id="u")])

    class InDatabase(ClickHouseStore):  # the questions name no database: run them in this one
        def arrow(self, question, params=None, **fragments):
            runner.execute("use unjudged")
            try:
                return super().arrow(question, params, **fragments)
            finally:
                runner.execute("use default")

    store = InDatabase(runner)
    for asked in ({"task_id": "u"}, {"trace_id": f"{1:032x}"}):
        with pytest.raises(NotFound, match="once a materializer pass has judged its spans"):
            find_findings(store, _now(0), _now(1000), None, {}, **asked)
    run_pass(runner, "unjudged", url.table, Shard(0, 1), CONFIG, _now(200))
    assert find_findings(store, _now(0), _now(1000), None, {}, task_id="u") == []
