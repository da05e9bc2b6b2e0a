"""SLA rates over constructed tasks; every expected number is computed by hand in comments."""

from __future__ import annotations

import pytest

from agentsla.errors import PermanentError
from agentsla.queries.sla import RATED_OUTCOMES, sla_by, sla_series, sla_totals
from queryrows import NS, T0, insert, task

START, END = T0, T0 + 60 * NS  # the window [T0, T0+60s)


@pytest.fixture
def traffic(con, store):
    """Seven rated finished tasks, one cancelled, one in progress, and three outside the window."""
    b = {"budget_total_ms": 10_000.0}
    insert(con, tasks=[
        task("s1", "success", end_s=10, duration_ms=1000, **b),
        task("s2", "success", end_s=0, duration_ms=2000, **b),       # end on the lower bound: in
        task("d1", "degraded", end_s=30, duration_ms=3000, task_type="search", **b),
        task("f1", "failed", end_s=40, duration_ms=4000, task_type="search", gateway_ok=False, **b),
        task("b1", "budget_exhausted", end_s=50, duration_ms=5000, **b),  # gateway said 200
        task("r1", "rejected", end_s=5, duration_ms=100, gateway_ok=False, **b),
        task("l1", "lost", end_s=55, duration_ms=60_000),             # declared lost at 55 s
        task("c1", "cancelled", end_s=15, duration_ms=500),
        task("p1", "in_progress", start_s=30),
        task("p0", "in_progress", start_s=-10),                       # started before: out
        task("late", "failed", end_s=70),                             # ends after the window
        task("edge", "failed", end_s=60),                             # end on the upper bound: out
    ])
    return store


def test_totals_exact(traffic):
    row = sla_totals(traffic, START, END)
    assert row["finished"] == 7  # s1 s2 d1 f1 b1 r1 l1
    assert {o: row[o] for o in RATED_OUTCOMES} == {
        "success": 2, "degraded": 1, "failed": 1, "budget_exhausted": 1, "rejected": 1, "lost": 1}
    assert row["success_rate"] == pytest.approx(2 / 7)
    assert row["lost_rate"] == pytest.approx(1 / 7)
    assert (row["cancelled"], row["in_progress"]) == (1, 1)
    # lost has no root answer, cancelled is excluded: 6 answered; f1 and r1 not ok
    assert (row["gateway_answered"], row["gateway_ok"]) == (6, 4)
    assert row["gateway_success_rate"] == pytest.approx(4 / 6)
    # durations 100 1000 2000 3000 4000 5000 (lost, cancelled excluded), linear interpolation:
    # p50 at index 2.5 -> 2500; p95 at 4.75 -> 4750; p99 at 4.95 -> 4950; from histograms,
    # within the stated 1.1 % (docs/rollups.md)
    assert row["latency_p50_ms"] == pytest.approx(2500, rel=0.011)
    assert row["latency_p95_ms"] == pytest.approx(4750, rel=0.011)
    assert row["latency_p99_ms"] == pytest.approx(4950, rel=0.011)
    # budget ratios .01 .1 .2 .3 .4 .5 -> p50 .25, p95 .475
    assert row["budget_used_p50"] == pytest.approx(0.25, rel=0.011)
    assert row["budget_used_p95"] == pytest.approx(0.475, rel=0.011)


def test_rates_partition_finished_tasks(traffic):
    row = sla_totals(traffic, START, END)
    assert sum(row[f"{o}_rate"] for o in RATED_OUTCOMES) == pytest.approx(1.0)
    assert sum(row[o] for o in RATED_OUTCOMES) == row["finished"]


def test_empty_window_gives_null_rates(traffic):
    row = sla_totals(traffic, T0 + 3600 * NS, T0 + 7200 * NS)
    assert row["finished"] == row["in_progress"] == row["cancelled"] == 0
    assert row["success_rate"] is None and row["gateway_success_rate"] is None
    assert row["latency_p99_ms"] is None and row["budget_used_p50"] is None


def test_group_by_task_type(traffic):
    rows = sla_by(traffic, START, END, "task_type")
    assert [r["task_type"] for r in rows] == ["chat", "search"]  # busiest first
    chat, search = rows
    # chat: s1 s2 b1 r1 l1 finished, c1 cancelled, p1 in progress
    assert (chat["finished"], chat["success"], chat["cancelled"], chat["in_progress"]) == (5, 2, 1, 1)
    assert chat["success_rate"] == pytest.approx(2 / 5)
    # search: d1 f1
    assert (search["finished"], search["degraded_rate"], search["failed_rate"]) == (2, 0.5, 0.5)


def test_group_by_rejects_unknown_dimension(traffic):
    with pytest.raises(PermanentError, match="bad group_by 'outcome; drop table tasks'"):
        sla_by(traffic, START, END, "outcome; drop table tasks")


def test_series_buckets_by_end_and_fills_empty_buckets(traffic):
    rows = sla_series(traffic, START, T0 + 100 * NS, 20 * NS)
    assert [r["bucket_ns"] for r in rows] == [T0 + i * 20 * NS for i in range(5)]
    got = [(r["finished"], r["success"], r["cancelled"], r["in_progress"]) for r in rows]
    assert got == [
        (3, 2, 1, 0),  # [0,20): s2 s1 r1, c1 cancelled
        (1, 0, 0, 1),  # [20,40): d1; p1 started at 30
        (3, 0, 0, 0),  # [40,60): f1 b1 l1
        (2, 0, 0, 0),  # [60,80): edge, late
        (0, 0, 0, 0),  # [80,100): empty
    ]
    assert rows[4]["success_rate"] is None
    assert rows[0]["bucket"] == "2023-11-14T22:13:20.000Z"


@pytest.mark.parametrize("filters, finished", [
    ({"task_type": "search"}, 2),                      # d1 f1
    ({"tenant_id": "acme"}, 7),                        # every task is acme's
    ({"task_type": "chat' or '1'='1"}, 0),             # bound, not spliced: matches nothing
    ({"tenant_id": "acme'; drop table task_store; --"}, 0),
])
def test_filters_are_bound(traffic, filters, finished):
    assert sla_totals(traffic, START, END, **filters)["finished"] == finished
    assert sla_totals(traffic, START, END)["finished"] == 7  # the table is still there


def test_through_the_writer_late_root_and_lost_task(tmp_path):
    """In progress until its root arrives late; a task whose root never comes is lost."""
    from dataclasses import replace

    from agentsla.collector.store.database import open_store
    from agentsla.collector.store.writer import TaskWriter
    from agentsla.config import load_config
    from agentsla.queries.engines.duckdb import DuckDBStore
    from spanfactory import make_span

    con = open_store(tmp_path / "db.duckdb")
    writer = TaskWriter(con, replace(load_config(environ={}).tasks, default_budget=10.0,
                                     lost_grace=5.0))
    late_root = make_span(trace_id="a" * 32, span_id="root", hop_kind="gateway", start_ms=0,
                          end_ms=2000, http_status=200)
    child = make_span(span_id="child", parent=late_root, hop_kind="model", start_ms=10, end_ms=900)
    orphan = make_span(trace_id="b" * 32, span_id="o", parent_span_id="never", hop_kind="tool",
                       start_ms=0, end_ms=100)
    writer.write([child, orphan], now_ns=T0 + 1 * NS)
    window = (T0, T0 + 3600 * NS)
    row = sla_totals(DuckDBStore(con), *window)
    assert (row["finished"], row["in_progress"], row["success_rate"]) == (0, 2, None)
    writer.write([late_root], now_ns=T0 + 3 * NS)       # the root arrives late
    row = sla_totals(DuckDBStore(con), *window)
    assert (row["finished"], row["success"], row["in_progress"]) == (1, 1, 1)
    assert writer.sweep_lost(now_ns=T0 + 20 * NS) == 1  # 1 s + 10 s budget + 5 s grace passed
    row = sla_totals(DuckDBStore(con), *window)
    assert (row["finished"], row["success"], row["lost"], row["in_progress"]) == (2, 1, 1, 0)
    assert (row["success_rate"], row["lost_rate"]) == (0.5, 0.5)
    assert row["gateway_answered"] == 1  # the lost task never answered
    con.close()
