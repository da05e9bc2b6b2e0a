"""Rollups kept by the real writer: late spans, lost tasks, moved traces, renumbered calls, retention.

Expected rollup rows are written by hand from each story. BASE_NS is 20 s into a minute, so
minute boundaries fall at BASE_NS + 40 s, + 100 s, ...
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentsla.collector.store import rollups
from agentsla.collector.store.database import open_store
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from spanfactory import BASE_NS, make_span, ms

NS = 10**9
MINUTE = 60 * NS
M0 = BASE_NS - 20 * NS  # the minute holding BASE_NS
TRACE = "a" * 32


@pytest.fixture
def con(tmp_path: Path):
    connection = open_store(tmp_path / "db.duckdb")
    yield connection
    connection.close()


def writer(con, **changes) -> TaskWriter:
    return TaskWriter(con, replace(load_config().tasks, **changes))


def task_minutes(con) -> dict[tuple, dict]:
    """Rows of task_minutes: (minute offset from M0 in minutes, task_type) → non-zero counts."""
    # pending rows are summed by readers (and by merges): sum them here too
    names = [*rollups.TASKS.keys, *rollups.TASKS.values]
    out = {}
    for row in rollups.summed_rows(con, "task_minutes", rollups.TASKS):
        r = dict(zip(names, row))
        key = ((r["minute_ns"] - M0) // MINUTE, r["task_type"])
        out[key] = {k: v for k, v in r.items() if k in rollups.TASK_COUNTS and v}
    return out


def hop_minutes(con, kind: str) -> dict[int, dict]:
    rows = con.execute("select minute_ns, sum(calls), sum(logical_calls), sum(retries), "
                       "sum(errors) from hop_minutes where hop_kind = ? group by all "
                       "having sum(calls) <> 0", [kind]).fetchall()
    return {(m - M0) // MINUTE: dict(zip(("calls", "logical_calls", "retries", "errors"), r))
            for m, *r in rows}


def root(end_s: float, **kw) -> dict:
    span = make_span(trace_id=TRACE, span_id="1" * 16, hop_kind="gateway", start_ms=0,
                     end_ms=end_s * 1000, task_type="chat", **kw)
    span["task_id"] = "task-1"
    return span


def child(span_id: str, start_s: float, end_s: float, **kw) -> dict:
    return make_span(trace_id=TRACE, span_id=span_id, parent="1" * 16, hop_kind="model",
                     model="gpt-4o", start_ms=start_s * 1000, end_ms=end_s * 1000, **kw)


def test_a_late_root_moves_the_task_from_its_start_minute_to_its_end_minute(con):
    w = writer(con)
    w.write([child("2" * 16, 1, 30)], now_ns=ms(30_000))
    # in progress, keyed by its trace id until task.id arrives, counted at its start (minute 0)
    assert task_minutes(con) == {(0, None): {"in_progress": 1}}
    w.write([root(70, status_code="error", error_type="timeout")], now_ns=ms(70_000))
    # the root ended at +70 s: minute 1; it failed; the provisional task is gone
    assert task_minutes(con) == {(1, "chat"): {"finished": 1, "failed": 1,
                                               "gateway_answered": 1}}
    causes = con.execute("select minute_ns, ffh_kind, sum(tasks), sum(failed), sum(lost_us) "
                         "from cause_minutes group by all having sum(tasks) <> 0").fetchall()
    assert causes == [(M0 + MINUTE, "gateway", 1, 1, 70_000_000.0)]


def test_a_task_declared_lost_counts_in_the_minute_it_was_declared(con):
    w = writer(con, default_budget=30.0, lost_grace=60.0)
    w.write([child("2" * 16, 1, 5)], now_ns=ms(5_000))
    assert task_minutes(con) == {(0, None): {"in_progress": 1}}
    # first seen at +5 s, budget 30 s, grace 60 s: lost at +95 s, minute 1
    assert w.sweep_lost(now_ns=ms(200_000)) == 1
    assert task_minutes(con) == {(1, None): {"finished": 1, "lost": 1}}


def test_an_earlier_attempt_arriving_late_renumbers_the_logical_call(con):
    w = writer(con)
    # attempt 1 first: alone it heads its own call
    w.write([root(50), child("3" * 16, 20, 30, retry_attempt=1)], now_ns=ms(50_000))
    assert hop_minutes(con, "model") == {0: {"calls": 1, "logical_calls": 1, "retries": 1,
                                             "errors": 0}}
    # attempt 0 (failed, ended +10 s) arrives: one call of two attempts, headed by it
    w.write([child("2" * 16, 1, 10, retry_attempt=0, error_type="rate_limited")],
            now_ns=ms(60_000))
    assert hop_minutes(con, "model") == {0: {"calls": 2, "logical_calls": 1, "retries": 1,
                                             "errors": 1}}


def test_a_duplicate_span_is_counted_once(con):
    w = writer(con)
    spans = [root(10), child("2" * 16, 1, 5)]
    w.write(spans, now_ns=ms(10_000))
    w.write([dict(s) for s in spans], now_ns=ms(11_000))
    assert task_minutes(con) == {(0, "chat"): {"finished": 1, "success": 1,
                                               "gateway_answered": 1, "gateway_ok": 1}}
    assert hop_minutes(con, "model")[0]["calls"] == 1


def test_retention_deletes_raw_rows_and_rollups_on_separate_clocks(con):
    w = writer(con, retention=100.0, rollup_retention=1000.0)
    w.write([root(10), child("2" * 16, 1, 5)], now_ns=ms(10_000))
    w.delete_before(ms(500_000))  # now - retention: raw gone, rollups 900 s younger than theirs
    assert con.execute("select count(*) from tasks").fetchall() == [(0,)]
    assert task_minutes(con) == {(0, "chat"): {"finished": 1, "success": 1,
                                               "gateway_answered": 1, "gateway_ok": 1}}
    w.delete_before(ms(1_500_000))  # rollup cutoff +600 s: past minute 0
    assert task_minutes(con) == {}
    assert con.execute("select count(*) from hop_minutes").fetchall() == [(0,)]


def test_rebuild_reproduces_what_the_writer_kept(con):
    w = writer(con, default_budget=30.0)
    w.write([child("2" * 16, 1, 30)], now_ns=ms(30_000))
    w.write([root(70, status_code="error"), child("3" * 16, 31, 65, retry_attempt=1)],
            now_ns=ms(70_000))
    def tables() -> dict:
        return {t: rollups.summed_rows(con, t, r)
                for r in rollups.ROLLUPS for t in (r.table, r.table + rollups.HOURLY)}
    live = tables()
    rollups.rebuild(con)
    assert tables() == live
    assert live["task_minutes"] and live["hop_histograms"] and live["hop_histograms_hourly"]


def test_rebuild_and_migration_10_store_each_tier_in_the_order_of_its_minutes(con):
    # 200 spans of one trace, each ending in its own minute, written newest first: the stored
    # rows must come out oldest minute first (readers' minute ranges then touch few row groups)
    w = writer(con)
    w.write([child(f"{i:016x}", 60 * (199 - i), 60 * (199 - i) + 1) for i in range(200)],
            now_ns=ms(200 * 60_000))
    def minutes() -> list[int]:
        return [m for (m,) in con.execute("select minute_ns from hop_minutes_stored "
                                          "order by rowid").fetchall()]
    rollups.rebuild(con)
    assert len(minutes()) == 200 and minutes() == sorted(minutes())
    con.execute("create or replace temp table shuffled as select * from hop_minutes_stored "
                "order by minute_ns desc")
    con.execute("delete from hop_minutes_stored")
    con.execute("insert into hop_minutes_stored select * from shuffled")
    assert minutes() == sorted(minutes(), reverse=True)
    rollups.sort_stored(con)
    assert minutes() == sorted(minutes())


def test_the_histogram_bucket_is_opentelemetrys_index():
    # scale 5: bucket i holds (2^(i/32), 2^((i+1)/32)]; 1 is the upper bound of bucket -1,
    # 2 of bucket 31; zero has its own bucket
    import duckdb
    con = duckdb.connect()
    got = [con.execute(f"select {rollups.bucket_sql(str(v))}").fetchall()[0][0]
           for v in (1, 2, 1.01, 0)]
    assert got == [-1, 31, 0, rollups.ZERO_BUCKET]


def test_a_merge_sums_pending_rows_into_one_stored_row_per_minute_and_key(con):
    w = writer(con)
    w.write([child("2" * 16, 1, 30)], now_ns=ms(30_000))
    w.write([root(70, status_code="error")], now_ns=ms(70_000))
    before = task_minutes(con)
    # a writer started afresh (as after kill -9) merges what the earlier one left pending
    writer(con).rollups.merge()
    assert con.execute(f"select count(*) from {rollups.PENDING}").fetchall() == [(0,)]
    # the in-progress row and its removal cancel out; the failed task is one row
    assert con.execute("select count(*) from task_minutes_stored").fetchall() == [(1,)]
    assert task_minutes(con) == before == {(1, "chat"): {"finished": 1, "failed": 1,
                                                         "gateway_answered": 1}}


def test_the_writer_merges_once_rollup_merge_rows_are_pending(con):
    def pending() -> int:
        return con.execute(f"select count(*) from {rollups.PENDING}").fetchall()[0][0]
    w = writer(con, rollup_merge_rows=4)
    w.write([child("2" * 16, 1, 30)], now_ns=ms(30_000))  # a span and its task: 2 rows
    assert pending() == 2
    assert con.execute("select count(*) from task_minutes_stored").fetchall() == [(0,)]
    # the root, the task's new row and its old row (uncounted): 5 rows in all, so a merge
    w.write([root(70, status_code="error")], now_ns=ms(70_000))
    assert pending() == 0
    assert task_minutes(con) == {(1, "chat"): {"finished": 1, "failed": 1, "gateway_answered": 1}}
    assert hop_minutes(con, "gateway") == {1: {"calls": 1, "logical_calls": 1, "retries": 0,
                                               "errors": 1}}


def test_a_key_whose_stored_and_pending_rows_cancel_out_is_no_row(con):
    w = writer(con)
    w.write([child("2" * 16, 1, 30)], now_ns=ms(30_000))  # in progress, no task type yet
    w.rollups.merge()
    w.write([root(70, status_code="error")], now_ns=ms(70_000))  # its type comes with the root
    # stored: +1 in progress under no type; pending: -1 there, +1 failed under "chat"
    assert con.execute("select task_type, minute_ns from task_minutes_hourly").fetchall() == [
        ("chat", M0 // (60 * MINUTE) * 60 * MINUTE)]
    assert con.execute("select task_type from task_minutes").fetchall() == [("chat",)]


def test_a_question_over_rows_that_cancel_out_has_no_group_for_them(con):
    from agentsla.queries.engines.duckdb import DuckDBStore
    from agentsla.queries.sla import sla_by
    w = writer(con)
    w.write([child("2" * 16, 1, 30)], now_ns=ms(30_000))  # in progress, no task type yet
    w.rollups.merge()
    w.write([root(70, status_code="error")], now_ns=ms(70_000))
    # the questions read the tiers unsummed (`<rollup>_tiers`): stored +1 in progress under no
    # type and pending -1 there are two rows, which the group's sums cancel; whole minutes
    # M0..M0+2 from the rollups, and the same window over raw rows
    store = DuckDBStore(con)
    for raw in (False, True):
        groups = sla_by(store, M0, M0 + 2 * MINUTE, "task_type", raw=raw)
        assert [(g["task_type"], g["finished"], g["failed"], g["in_progress"])
                for g in groups] == [("chat", 1, 1, 0)]


def test_the_check_command_finds_a_corrupted_rollup_and_rebuild_repairs_it(tmp_path, capsys):
    from agentsla.cli import main
    con = open_store(tmp_path / "agentsla.duckdb")
    w = writer(con)
    w.write([root(10, status_code="error"), child("2" * 16, 1, 5)], now_ns=ms(10_000))
    w.rollups.merge()  # into the stored rows, which the corruption below edits
    args = ["--data-dir", str(tmp_path), "--window", "1h", "--to", str(BASE_NS / NS + 1800)]
    con.close()
    assert main(["rollups", "check", *args]) == 0
    con = open_store(tmp_path / "agentsla.duckdb")
    con.execute("update task_minutes_stored set failed = failed + 1")  # a rollup gone wrong
    con.close()
    assert main(["rollups", "check", *args]) == 1
    assert "sla_totals.failed: rollups 2 != raw 1" in capsys.readouterr().out
    assert main(["rollups", "rebuild", *args[:2]]) == 0
    assert main(["rollups", "check", *args]) == 0
    assert main(["rollups", "check", "--window", "soon", *args[:2]]) == 2  # a precise error


def test_migration_8_fills_the_histogram_sums_where_the_raw_rows_remain(con):
    from agentsla.collector.store.schema import migrate

    def task_at(trace: str, start_s: float) -> dict:
        span = make_span(trace_id=trace, span_id="1" * 16, hop_kind="gateway",
                         start_ms=start_s * 1000, end_ms=(start_s + 10) * 1000, task_type="chat")
        span["task_id"] = f"task-{trace[0]}"
        return span
    w = writer(con, retention=100.0)
    w.write([task_at("a" * 32, 0)], now_ns=ms(10_000))
    w.write([task_at("b" * 32, 7200)], now_ns=ms(7_210_000))  # two hours later
    w.delete_before(ms(7_200_000))  # the first task's raw rows go, its rollups stay
    w.write([task_at("c" * 32, 7300)], now_ns=ms(7_310_000))  # a pending row at migration
    # the store as version 7 left it: histograms without their sums
    for r in (rollups.TASK_HISTOGRAMS, rollups.HOP_HISTOGRAMS):
        for tier in r.tiers():
            con.execute(f"alter table {tier}{rollups.STORED} drop column sum_e6")
    con.execute("delete from schema_version where version >= 8")
    assert migrate(con) == 7

    def sums(table: str, metric: str = "latency_ms") -> dict[int, int | None]:
        return dict(con.execute(f"select (minute_ns - {M0}) // {MINUTE}, sum_e6 from {table} "
                                f"where metric = ? order by all", [metric]).fetchall())
    # 10 s each, in µs; the first task's minute and hour have no raw rows left: unknown
    first, second, third = 0, (7210 + 20) // 60, (7310 + 20) // 60  # their ends, from M0
    assert sums("task_histograms") == {first: None, second: 10_000_000, third: 10_000_000}
    assert sums("hop_histograms") == {first: None, second: 10_000_000, third: 10_000_000}
    hours = sums("hop_histograms_hourly")
    assert hours[-(M0 % (60 * MINUTE)) // MINUTE] is None
    assert sorted(v for v in hours.values() if v is not None) == [20_000_000]
