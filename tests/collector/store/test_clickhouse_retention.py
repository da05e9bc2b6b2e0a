"""Retention on ClickHouse: raw rows and rollups expire by TTL on two clocks (chdb in-process).

A store holds three finished tasks: one that ended 500 days ago, one 40 days ago and one
yesterday. With a 30-day retention and 400-day rollup retention, once merges have applied the
TTLs, only yesterday's task keeps its raw rows, and the rollups still count the one of 40 days
ago (docs/rollups.md, Retention: two clocks).
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from agentsla.collector.store.clickhouse import retention
from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.collector.store.clickhouse.url import StoreURL
from agentsla.collector.store.clickhouse.worker import start_shard
from agentsla.queries.engines.clickhouse import ChdbRunner, ClickHouseStore
from agentsla.queries.findings import evidence, resolve_thresholds
from test_clickhouse_store import CONFIG, MS, T0, _row, _store

DAY_NS = 86400 * 10**9
DAY_S = 86400.0
STORY = {"ancient": 500, "old": 40, "recent": 1}  # task -> days since it ended
#: a pass may cover the whole story (the default steps through 500 days a few minutes a pass)
WHOLE = replace(CONFIG, materialize_max_window=1000 * DAY_S)


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """One chdb session for the module (chdb allows one path per process)."""
    made = ChdbRunner(str(tmp_path_factory.mktemp("chdb")))
    yield made
    made.close()


def _spans(now_ns: int) -> list[dict]:
    """Each task of the story: a root and a failing model call, ended `days` ago."""
    rows = []
    for number, (task, days) in enumerate(STORY.items(), start=1):
        end_ms = (now_ns - days * DAY_NS - T0) // MS
        rows += [_row(number, 1, None, end_ms - 2_000, end_ms, task__id=task),
                 _row(number, 2, 1, end_ms - 1_500, end_ms - 500, gen_ai__operation__name="chat",
                      gen_ai__request__model="m", error__type="timeout")]
    return rows


def _materialized(runner, database: str, now_ns: int, stored_evidence: bool = False):
    """The story stored and materialized; with its findings evidence stored too (the worker
    registered first, so it stores the minutes passes mark, not every minute since the first
    span: 500 days of them)."""
    url = _store(runner, database)
    refresh = lambda: evidence.refresh(ClickHouseStore(runner), resolve_thresholds({}))[0]
    if stored_evidence:
        refresh()
    runner.insert(f"{database}.otel_traces", _spans(now_ns))
    while not run_pass(runner, database, url.table, Shard(0, 1), WHOLE, now_ns).caught_up:
        pass
    while stored_evidence and refresh():
        pass
    return url


def _trace_ids(runner, table: str, column: str = "trace_id") -> set[int]:
    """The story's trace numbers with a row in `table`."""
    return {int(r["t"], 16) for r in runner.arrow(
        f"select distinct {column} as t from {table}", {}).to_pylist()}


def _days(runner, table: str, now_ns: int, column: str = "minute_ns") -> set[int]:
    """How many days ago (rounded) the rows of `table` are, by `column` (unix ns)."""
    return {round((now_ns - r["t"]) / DAY_NS) for r in runner.arrow(
        f"select distinct {column} as t from {table}", {}).to_pylist()}


def _finished_by_day(runner, table: str, now_ns: int) -> dict[int, int]:
    """Days ago -> finished tasks counted in a task rollup tier."""
    return {round((now_ns - r["m"]) / DAY_NS): r["n"] for r in runner.arrow(
        f"select minute_ns as m, sum(finished) as n from {table} group by m", {}).to_pylist()}


def _merged(runner, url) -> None:
    """Merge every part now, as ClickHouse's background merges eventually do (TTLs apply)."""
    for expiry in retention.expiries(url):
        runner.execute(f"optimize table {url.database}.{expiry.table} final")


def test_raw_rows_and_rollups_expire_on_separate_clocks(runner):
    now_ns = time.time_ns()
    url = _materialized(runner, "default", now_ns, stored_evidence=True)
    db, story = url.database, set(STORY.values())
    # before: every table holds the whole story
    assert _days(runner, f"{db}.hop_spans", now_ns, "end_ns") == story
    assert _days(runner, f"{db}.agentsla_finding_evidence", now_ns) == story
    assert _days(runner, f"{db}.task_minutes", now_ns) == story
    assert _days(runner, f"{db}.agentsla_evidence_dirty", now_ns, "hi_ns") == story
    assert len(retention.keep(runner, url, 30 * DAY_S, 400 * DAY_S)) == len(
        retention.expiries(url))
    _merged(runner, url)
    recent = {3}  # yesterday's trace: the only one whose raw rows stay
    assert {r["task_id"] for r in runner.arrow(f"select task_id from {db}.tasks", {})
            .to_pylist()} == {"recent"}
    assert {r["task_id"] for r in runner.arrow(f"select task_id from {db}.minute_tasks", {})
            .to_pylist()} == {"recent"}
    for table in ("hop_spans", "finding_spans"):
        assert _trace_ids(runner, f"{db}.{table}") == recent, table
    assert _trace_ids(runner, f"{db}.otel_traces", "TraceId") == recent
    assert _trace_ids(runner, f"{db}.otel_traces_trace_id_ts", "TraceId") == recent
    assert _days(runner, f"{db}.agentsla_finding_evidence", now_ns) == {1}
    # (the worker's deleted marks stay as rows until they expire: only old ones must be gone)
    assert _days(runner, f"{db}.agentsla_evidence_dirty", now_ns, "hi_ns").isdisjoint({40, 500})
    # the rollups keep 400 days: the task of 40 days ago is still counted, not that of 500
    assert _finished_by_day(runner, f"{db}.task_minutes", now_ns) == {40: 1, 1: 1}
    assert set(_finished_by_day(runner, f"{db}.task_minutes_hourly", now_ns)) == {40, 1}
    assert _days(runner, f"{db}.hop_minutes", now_ns) == {40, 1}
    assert _days(runner, f"{db}.hop_histograms_hourly", now_ns) == {40, 1}


def test_keeping_the_same_retention_again_changes_nothing_and_a_new_one_every_clock(runner):
    url = _store(runner, "again")
    assert retention.keep(runner, url, 30 * DAY_S, 400 * DAY_S)
    assert retention.keep(runner, url, 30 * DAY_S, 400 * DAY_S) == []
    raw = {e.table for e in retention.expiries(url) if e.clock == retention.RAW}
    assert set(retention.keep(runner, url, 7 * DAY_S, 400 * DAY_S)) == raw
    engine = runner.arrow("select engine_full from system.tables where database = 'again' "
                          "and name = 'agentsla_hop_spans'", {}).to_pylist()[0]["engine_full"]
    assert "toIntervalSecond(604800)" in engine and "ttl_only_drop_parts = 1" in engine


def test_only_the_worker_of_shard_0_sets_the_retention(runner):
    """Workers of other shards start without touching the tables' TTLs."""
    config = replace(CONFIG, retention=7 * DAY_S)
    for database, shard, kept in (("shard1", Shard(1, 2), False), ("shard0", Shard(0, 1), True)):
        url = _store(runner, database)
        start_shard(runner, url, config, shard)
        assert ("TTL" in runner.arrow(
            "select engine_full from system.tables where database = {db:String} and name = "
            "'agentsla_tasks'", {"db": database}).to_pylist()[0]["engine_full"]) == kept


def test_rows_without_a_time_of_their_own_expire_by_when_they_were_written(runner):
    """Span facts and task traces: a retention after they were written."""
    url = _materialized(runner, "written", time.time_ns())
    assert retention.keep(runner, url, 30 * DAY_S, 400 * DAY_S)
    db = url.database
    for days, trace in ((31, "f1"), (29, "f2")):
        written = f"now() - toIntervalDay({days})"
        runner.execute(f"insert into {db}.agentsla_span_facts (trace_id, span_id, task_id, "
                       f"is_error, version, written) values ('{trace}', 's', 't', false, 1, "
                       f"{written})")
        runner.execute(f"insert into {db}.agentsla_task_traces (task_id, trace_id, version, "
                       f"written) values ('t', '{trace}', 1, {written})")
    _merged(runner, url)
    for table in ("agentsla_span_facts", "agentsla_task_traces"):
        traces = {r["trace_id"] for r in runner.arrow(
            f"select trace_id from {db}.{table}", {}).to_pylist()}
        # the story's three traces were written now, whatever their spans' age
        assert traces == {"f2", *(f"{n:032x}" for n in (1, 2, 3))}, table


def test_a_trace_moved_to_its_declared_task_stays_moved(runner):
    """The row deleting a trace's own task (a task id and version alone) expires with the
    pass that wrote it, not at the epoch: under a TTL it is kept, so the trace's own task
    does not come back."""
    url = _store(runner, "moved")
    retention.keep(runner, url, 30 * DAY_S, 400 * DAY_S)
    start_ms = (time.time_ns() - DAY_NS - T0) // MS  # yesterday
    runner.insert("moved.otel_traces", [_row(7, 2, 1, start_ms, start_ms + 1_000,
                                             gen_ai__operation__name="chat")])
    run_pass(runner, "moved", url.table, Shard(0, 1), CONFIG, T0 + (start_ms + 2_000) * MS)
    own = f"{7:032x}"
    tasks = lambda: {r["task_id"] for r in runner.arrow("select task_id from moved.tasks", {})
                     .to_pylist()}
    assert tasks() == {own}
    runner.insert("moved.otel_traces", [_row(7, 1, None, start_ms - 1_000, start_ms + 3_000,
                                             task__id="declared")])
    run_pass(runner, "moved", url.table, Shard(0, 1), CONFIG, T0 + (start_ms + 4_000) * MS)
    _merged(runner, url)
    assert tasks() == {"declared"}


def test_a_servers_traces_table_is_the_exporters_and_one_without_ttl_is_named(runner, caplog):
    """Against a ClickHouse server agentsla leaves `otel_traces` to the exporter, and says
    when it keeps spans for ever; with the exporter's `ttl` set it says nothing."""
    _store(runner, "server")  # this chdb store's tables, seen as a server's (same SQL)
    url = StoreURL("clickhouse", host="unused", database="server")
    assert "otel_traces" not in retention.keep(runner, url, 30 * DAY_S, 400 * DAY_S)
    assert "server.otel_traces (the exporter's) has no TTL" in caplog.text
    caplog.clear()
    runner.execute("alter table server.otel_traces modify ttl toDateTime(Timestamp) + "
                   "toIntervalDay(7)")
    retention.keep(runner, url, 30 * DAY_S, 400 * DAY_S)
    assert "has no TTL" not in caplog.text
