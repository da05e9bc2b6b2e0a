"""Migration 5 computes the self times of tasks stored before it and builds the budget rollups.

The database is made at version 4 (task_store without `self_times`, as agentsla wrote it
then); expected answers are written by hand from the span layout.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from agentsla.collector.store import rollups
from agentsla.collector.store.schema import (MIGRATIONS, SCHEMA_VERSION, SPAN_ARROW_SCHEMA,
                                             TASK_ARROW_SCHEMA, fill_self_times, migrate)
from agentsla.queries.budget import budget_waterfall
from agentsla.queries.engines.duckdb import DuckDBStore
from queryrows import NS, T0, span, task


def _version_4() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create table schema_version (version INTEGER)")
    for statement in (s for migration in MIGRATIONS[:4] for s in migration):
        con.execute(statement)
    con.execute("alter table task_store drop column self_times")
    con.execute("create or replace view tasks as select * from task_store")
    con.execute("insert into schema_version values (4)")
    return con


def _insert(con, table: str, rows: list[dict], schema: pa.Schema, exclude: str = "") -> None:
    con.register("rows", pa.Table.from_pylist(rows, schema=schema))
    con.execute(f"insert into {table} select * {exclude} from rows")
    con.unregister("rows")


def test_stored_tasks_get_their_self_times_in_batches_and_the_budget_rollups_count_them():
    con = _version_4()
    tasks = [task(f"t{i}", end_s=70 + i, duration_ms=1_000, budget_total_ms=4_000.0,
                  trace_id=f"{i:032x}", root_span_id="r") for i in range(5)]
    tasks.append(task("lost", outcome="lost", end_s=75))
    spans = []
    for i in range(5):  # each: gateway 0..1000 ms before its end, a model call of 600 ms
        t0 = (69 + i) * 1000
        spans += [span("r", None, t0, t0 + 1_000, task_id=f"t{i}", trace_id=f"{i:032x}",
                       hop_kind="gateway"),
                  span("m", "r", t0 + 100, t0 + 700, task_id=f"t{i}", trace_id=f"{i:032x}",
                       hop_kind="model")]
    _insert(con, "task_store", tasks, TASK_ARROW_SCHEMA, "exclude (self_times)")
    _insert(con, "span_store", spans, SPAN_ARROW_SCHEMA)
    assert migrate(con) == 4
    assert con.execute("select max(version) from schema_version").fetchone()[0] == SCHEMA_VERSION
    rows = dict(con.execute("select task_id, self_times from task_store").fetchall())
    assert rows["t3"] == [{"hop_kind": "gateway", "self_us": 400_000},
                          {"hop_kind": "model", "self_us": 600_000}]
    assert rows["lost"] is None  # no root: nothing to split
    # the window T0+60 s .. T0+120 s holds the five tasks' ends: a whole minute from rollups
    got = budget_waterfall(DuckDBStore(con), T0 + 60 * NS, T0 + 120 * NS)
    assert (got["tasks"], got["tasks_with_budget"]) == (5, 5)
    assert got["unused_budget_share"] == 0.75
    assert [(r["hop_kind"], r["tasks_with_hop"], r["self_ms"], r["share_of_duration"])
            for r in got["by_hop_kind"]] == [("model", 5, 3_000, 0.6), ("gateway", 5, 2_000, 0.4)]
    assert got == budget_waterfall(DuckDBStore(con), T0 + 60 * NS, T0 + 120 * NS, raw=True)
    live = rollups.summed_rows(con, "budget_hop_minutes_hourly", rollups.BUDGET_HOPS)
    rollups.rebuild(con)
    assert rollups.summed_rows(con, "budget_hop_minutes_hourly", rollups.BUDGET_HOPS) == live


def test_the_fill_reports_progress_batch_by_batch():
    con = duckdb.connect()
    migrate(con)
    rows = [task(f"t{i}", trace_id=f"{i:032x}", root_span_id="r") for i in range(7)]
    con.register("rows", pa.Table.from_pylist(rows, schema=TASK_ARROW_SCHEMA))
    con.execute("insert into task_store select * from rows")
    seen = []
    assert fill_self_times(con, batch_tasks=3, progress=lambda done, total: seen.append(
        (done, total))) == 7
    assert seen == [(3, 7), (6, 7), (7, 7)]
    # no spans stored: a root that is not there reaches nothing
    assert con.execute("select distinct self_times from task_store").fetchall() == [([],)]
    assert fill_self_times(con) == 0  # filled tasks are not visited again


def test_the_fill_keeps_the_task_rows_in_time_order():
    # DuckDB rewrites a list column's update as a delete and an insert: batches by task id
    # would scatter a day's ends over every row group (the zone maps then prune nothing)
    con = duckdb.connect()
    migrate(con)
    ends = [70 + (7 * i) % 9 for i in range(9)]  # ids in no time order
    rows = [task(f"t{i}", end_s=end, trace_id=f"{i:032x}", root_span_id="r")
            for i, end in enumerate(ends)]
    con.register("rows", pa.Table.from_pylist(rows, schema=TASK_ARROW_SCHEMA))
    con.execute("insert into task_store select * from rows")
    assert fill_self_times(con, batch_tasks=3) == 9
    stored = [end for (end,) in con.execute("select end_ns from task_store order by rowid")
              .fetchall()]
    batches = [stored[i:i + 3] for i in range(0, 9, 3)]
    assert all(max(a) < min(b) for a, b in zip(batches, batches[1:])), stored
