"""Storage schema: physical tables, the read-side views `spans` and `tasks`, and migrations.

The read side (queries/) only ever names the views, so another engine (e.g. ClickHouse's
`otel_traces` from the OpenTelemetry Collector exporter) needs a new view layer, not new queries.
Times are unix nanoseconds (BIGINT); durations are milliseconds (DOUBLE).
"""

from __future__ import annotations

import logging
from typing import Callable

import pyarrow as pa

from agentsla.collector.store import evidence, rollups
from agentsla.collector.tasks import self_time
from agentsla.collector.tasks.tree import build_tree

_log = logging.getLogger(__name__)

# (column, DuckDB type, Arrow type, meaning). The order is the physical order.
SPAN_COLUMNS: tuple[tuple[str, str, pa.DataType, str], ...] = (
    ("trace_id", "VARCHAR", pa.string(), "32 lowercase hex digits"),
    ("span_id", "VARCHAR", pa.string(), "16 lowercase hex digits"),
    ("parent_span_id", "VARCHAR", pa.string(), "null for a root"),
    ("task_id", "VARCHAR", pa.string(), "resolved task: task.id of the trace, else the trace id"),
    ("name", "VARCHAR", pa.string(), "span name"),
    ("span_kind", "VARCHAR", pa.string(), "internal, server, client, producer, consumer, unspecified"),
    ("service_name", "VARCHAR", pa.string(), "resource service.name"),
    ("start_ns", "BIGINT", pa.int64(), "start, unix ns"),
    ("end_ns", "BIGINT", pa.int64(), "end, unix ns"),
    ("duration_ms", "DOUBLE", pa.float64(), "end - start, ms (never negative)"),
    ("status_code", "VARCHAR", pa.string(), "unset, ok, error"),
    ("status_message", "VARCHAR", pa.string(), "status description"),
    ("hop_kind", "VARCHAR", pa.string(), "span contract hop.kind, given or inferred"),
    ("hop_name", "VARCHAR", pa.string(), "model, tool, agent or span name"),
    ("operation", "VARCHAR", pa.string(), "gen_ai.operation.name or openinference.span.kind"),
    ("model", "VARCHAR", pa.string(), "model name for model hops"),
    ("tool", "VARCHAR", pa.string(), "tool name for tool hops"),
    ("agent", "VARCHAR", pa.string(), "gen_ai.agent.name"),
    ("task_type", "VARCHAR", pa.string(), "task.type"),
    ("tenant_id", "VARCHAR", pa.string(), "tenant.id"),
    ("task_outcome", "VARCHAR", pa.string(), "task.outcome declared on this span"),
    ("http_status", "INTEGER", pa.int32(), "http.response.status_code"),
    ("error_type", "VARCHAR", pa.string(), "normalized failure reason, null when none"),
    ("is_error", "BOOLEAN", pa.bool_(), "status ERROR or an error.type"),
    ("hop_timeout_ms", "DOUBLE", pa.float64(), "configured timeout; 0 = none"),
    ("budget_total_ms", "DOUBLE", pa.float64(), "budget.total_ms"),
    ("budget_remaining_ms", "DOUBLE", pa.float64(), "budget.remaining_ms at span start"),
    ("budget_exhausted", "BOOLEAN", pa.bool_(), "budget.exhausted"),
    ("retry_attempt", "INTEGER", pa.int32(), "retry.attempt or http.request.resend_count"),
    ("retry_max", "INTEGER", pa.int32(), "retry.max"),
    ("fallback_used", "BOOLEAN", pa.bool_(), "fallback.used"),
    ("fallback_kind", "VARCHAR", pa.string(), "fallback.kind"),
    ("fallback_from", "VARCHAR", pa.string(), "fallback.from"),
    ("fallback_to", "VARCHAR", pa.string(), "fallback.to"),
    ("circuit_state", "VARCHAR", pa.string(), "circuit.state"),
    ("idempotency_key", "VARCHAR", pa.string(), "idempotency.key"),
    ("loop_limit", "INTEGER", pa.int32(), "agent.loop.limit"),
    ("input_tokens", "BIGINT", pa.int64(), "gen_ai.usage.input_tokens / llm.token_count.prompt"),
    ("output_tokens", "BIGINT", pa.int64(), "gen_ai.usage.output_tokens / llm.token_count.completion"),
    ("ttft_ms", "DOUBLE", pa.float64(), "time to first token, ms"),
    ("attributes", "JSON", pa.string(), "all span attributes, as JSON (unknown ones kept)"),
    ("resource", "JSON", pa.string(), "resource attributes, as JSON"),
    ("scope", "VARCHAR", pa.string(), "instrumentation scope name"),
    ("events", "JSON", pa.string(), "span events with their attributes, as JSON"),
    ("links", "JSON", pa.string(), "span links, as JSON"),
    ("received_ns", "BIGINT", pa.int64(), "when agentsla received it, unix ns"),
    # Added by migration 2; physical order = order of addition.
    ("parent_remote", "BOOLEAN", pa.bool_(), "OTLP span flags: parent is remote; null if unknown"),
    ("call_id", "VARCHAR", pa.string(), "logical call (set by materialization): siblings, same hop"),
    ("attempt", "INTEGER", pa.int32(), "attempt number within call_id, 0 first (materialization)"),
)

#: The columns migration 2 added (the seams for remote parents and the one attempt definition).
_SPAN_COLUMNS_V2 = SPAN_COLUMNS[-3:]

TASK_COLUMNS: tuple[tuple[str, str, pa.DataType, str], ...] = (
    ("task_id", "VARCHAR PRIMARY KEY", pa.string(), "task.id, else the trace id"),
    ("trace_id", "VARCHAR", pa.string(), "trace of the root (or of the first span)"),
    ("root_span_id", "VARCHAR", pa.string(), "null while the root has not arrived"),
    ("root_name", "VARCHAR", pa.string(), "name of the root span"),
    ("task_type", "VARCHAR", pa.string(), "task.type"),
    ("tenant_id", "VARCHAR", pa.string(), "tenant.id"),
    ("service_name", "VARCHAR", pa.string(), "service of the root"),
    ("agent", "VARCHAR", pa.string(), "first agent name seen in the task"),
    ("start_ns", "BIGINT", pa.int64(), "root start (earliest span start before it arrives)"),
    ("end_ns", "BIGINT", pa.int64(), "root end, or when declared lost; null in progress"),
    ("duration_ms", "DOUBLE", pa.float64(), "end - start"),
    ("outcome", "VARCHAR", pa.string(), "see agentsla.contract.OUTCOMES"),
    ("finished", "BOOLEAN", pa.bool_(), "root ended or lost"),
    ("http_status", "INTEGER", pa.int32(), "root's HTTP status"),
    ("gateway_ok", "BOOLEAN", pa.bool_(), "root not ERROR, HTTP < 500 and not 429"),
    ("error_type", "VARCHAR", pa.string(), "root's error type"),
    ("budget_total_ms", "DOUBLE", pa.float64(), "budget.total_ms, else configured per type"),
    ("budget_used_ratio", "DOUBLE", pa.float64(), "duration / budget"),
    ("budget_exhausted", "BOOLEAN", pa.bool_(), "the budget ran out (see the definitions)"),
    ("fallback_used", "BOOLEAN", pa.bool_(), "a fallback served somewhere in the task"),
    ("fallback_kind", "VARCHAR", pa.string(), "first fallback kind seen"),
    ("span_count", "INTEGER", pa.int32(), "spans stored for the task"),
    ("model_calls", "INTEGER", pa.int32(), "model hop spans"),
    ("tool_calls", "INTEGER", pa.int32(), "tool hop spans"),
    ("retries", "INTEGER", pa.int32(), "attempts beyond the first"),
    ("input_tokens", "BIGINT", pa.int64(), "sum over model spans"),
    ("output_tokens", "BIGINT", pa.int64(), "sum over model spans"),
    ("ffh_kind", "VARCHAR", pa.string(), "first failing hop: kind"),
    ("ffh_name", "VARCHAR", pa.string(), "first failing hop: name"),
    ("ffh_reason", "VARCHAR", pa.string(), "first failing hop: reason"),
    ("ffh_span_id", "VARCHAR", pa.string(), "span reported (nearest hop)"),
    ("ffh_detail_span_id", "VARCHAR", pa.string(), "deeper span the blame came from, if any"),
    ("first_seen_ns", "BIGINT", pa.int64(), "arrival of the task's first span, unix ns"),
    ("updated_ns", "BIGINT", pa.int64(), "last materialization, unix ns"),
    # Added by migration 5.
    ("self_times", self_time.SELF_TIMES_SQL_TYPE, self_time.SELF_TIMES_TYPE,
     "self time per hop kind the root reaches, whole µs (collector/tasks/self_time.py); "
     "null without a root"),
)

#: The column migration 5 added (where the budget went, computed once per task).
_TASK_COLUMNS_V5 = TASK_COLUMNS[-1:]
#: Task columns added after migration 1 (a ClickHouse store adds them to an existing table).
ADDED_TASK_COLUMNS = _TASK_COLUMNS_V5

SPAN_ARROW_SCHEMA = pa.schema([(name, arrow) for name, _, arrow, _ in SPAN_COLUMNS])
TASK_ARROW_SCHEMA = pa.schema([(name, arrow) for name, _, arrow, _ in TASK_COLUMNS])
SPAN_COLUMN_NAMES = tuple(c[0] for c in SPAN_COLUMNS)
TASK_COLUMN_NAMES = tuple(c[0] for c in TASK_COLUMNS)


def _create_table(table: str, columns) -> str:
    body = ",\n    ".join(f"{name} {sql_type}" for name, sql_type, _, _ in columns)
    return f"create table if not exists {table} (\n    {body}\n)"


def fill_self_times(con, batch_tasks: int = 50_000,
                    progress: Callable[[int, int], None] | None = None) -> int:
    """Compute `self_times` of the stored rooted tasks that lack it, from their stored spans.

    For tasks stored before the column existed (migration 5) and rows written behind the
    writer's back (benchmark data, tests). Batches of `batch_tasks` tasks in the order of their
    ends; returns the number of tasks filled. The order matters: DuckDB writes an update of a
    list column as a delete and an insert, so the filled rows move to the end of the table, and
    batches in task-id order left every row group holding a whole day of ends, which the time
    columns' zone maps then could not prune (a day's `/root-causes` at 10M spans read every
    task row for its ragged edges: 86 ms instead of 22).
    """
    batches = con.execute(
        f"select count(*) from (select (row_number() over (order by {_TASK_TIME}, task_id) - 1) "
        f"// $n as batch from task_store where {_UNFILLED}) group by batch order by batch",
        {"n": batch_tasks}).fetchall()
    total, done = sum(n for (n,) in batches), 0
    for (n,) in batches:
        _fill_self_times_of(con, n)
        done += n
        if progress:
            progress(done, total)
    return total


#: A task's place in time (in progress: its start), and the tasks the fill is for.
_TASK_TIME = "coalesce(end_ns, start_ns)"
_UNFILLED = "self_times is null and root_span_id is not null"


def _fill_self_times_of(con, n: int) -> None:
    """Fill the `n` earliest tasks (by their end) that lack self times."""
    roots = {task: (trace, root) for task, trace, root in con.execute(
        f"select task_id, trace_id, root_span_id from task_store where {_UNFILLED} "
        f"order by {_TASK_TIME}, task_id limit $n", {"n": n}).fetchall()}
    con.register("self_time_tasks", pa.table({"task_id": pa.array(list(roots), pa.string())}))
    columns = ", ".join(f"s.{c}" for c in ("task_id", *self_time.SPAN_COLUMNS_USED))
    spans = con.sql(f"select {columns} from span_store s semi join self_time_tasks t "
                    f"on s.task_id = t.task_id").to_arrow_table().to_pylist()
    con.unregister("self_time_tasks")
    by_task: dict[str, list[dict]] = {task: [] for task in roots}
    for span in spans:
        by_task[span["task_id"]].append(span)
    filled = []
    for task_id, root_key in roots.items():
        tree = build_tree(by_task[task_id])
        root = tree.spans.get(root_key)
        filled.append([] if root is None else self_time.self_times(tree, root))
    con.register("filled_self_times", pa.table({
        "task_id": pa.array(list(roots), pa.string()),
        "self_times": pa.array(filled, self_time.SELF_TIMES_TYPE)}))
    con.execute("update task_store set self_times = f.self_times from filled_self_times f "
                "where task_store.task_id = f.task_id")
    con.unregister("filled_self_times")


def _log_progress(done: int, total: int) -> None:
    _log.info("migration 5: self times of %d/%d stored tasks", done, total)


#: The rollups migrations 3 and 4 created (later rollups come with migrations of their own).
_ROLLUPS_V3 = (rollups.TASKS, rollups.TASK_HISTOGRAMS, rollups.CAUSES, rollups.HOPS,
               rollups.HOP_HISTOGRAMS)

_HISTOGRAMS = (rollups.TASK_HISTOGRAMS, rollups.HOP_HISTOGRAMS)

#: Each migration runs once, in order, inside one transaction; the index is the version. A
#: step is a statement or a function of the connection.
MIGRATIONS: tuple[tuple[str | Callable, ...], ...] = (
    (
        _create_table("span_store", SPAN_COLUMNS),
        _create_table("task_store", TASK_COLUMNS),
        "create table if not exists trace_task (trace_id VARCHAR PRIMARY KEY, task_id VARCHAR)",
        "create or replace view spans as select * from span_store",
        "create or replace view tasks as select * from task_store",
    ),
    (
        *(f"alter table span_store add column if not exists {name} {sql_type}"
          for name, sql_type, _, _ in _SPAN_COLUMNS_V2),
        "create or replace view spans as select * from span_store",
    ),
    # 3: per-minute rollups (collector/store/rollups.py, docs/rollups.md), built from the data
    # already stored (`agentsla rollups rebuild` does the same with progress).
    (*(r.ddl() for r in _ROLLUPS_V3), *rollups.backfill_sql(_ROLLUPS_V3)),
    # 4: the rollups' hour tier, summed from their minutes
    (*(r.ddl(rollups.HOURLY) for r in _ROLLUPS_V3),
     *(r.hourly_backfill() for r in _ROLLUPS_V3)),
    # 5: each task's self time per hop kind, computed for the tasks already stored, and the
    # budget rollups (/budget) built from it
    (*(f"alter table task_store add column if not exists {name} {sql_type}"
       for name, sql_type, _, _ in _TASK_COLUMNS_V5),
     "create or replace view tasks as select * from task_store",
     lambda con: fill_self_times(con, progress=_log_progress),
     *(r.ddl(suffix) for r in rollups.BUDGET_ROLLUPS for suffix in ("", rollups.HOURLY)),
     *rollups.backfill_sql(rollups.BUDGET_ROLLUPS),
     *(r.hourly_backfill() for r in rollups.BUDGET_ROLLUPS)),
    # 6: per-minute findings evidence (collector/store/evidence.py, docs/findings.md); the
    # findings worker computes it for everything already stored
    (*evidence.DDL, *evidence.BACKFILL),
    # 7: the writer appends signed source rows to one pending table (a batch costs one insert,
    # whatever the number of rollups); readers read each tier as a view of its stored rows and
    # the pending rows' contribution
    (*(f"alter table {tier} rename to {tier}{rollups.STORED}"
       for r in rollups.ROLLUPS for tier in r.tiers()),
     rollups.pending_ddl(TASK_COLUMNS, SPAN_COLUMNS),
     *(r.view(tier) for r in rollups.ROLLUPS for tier in r.tiers())),
    # 8: the histograms' sums (/metrics' `_sum`), filled for the minutes whose raw rows are
    # still stored
    (*(f"alter table {tier}{rollups.STORED} add column if not exists sum_e6 BIGINT"
       for r in _HISTOGRAMS for tier in r.tiers()),
     *(r.view(tier) for r in _HISTOGRAMS for tier in r.tiers()),
     rollups.fill_histogram_sums),
    # 9: the tiers' views compute their pending rows' sums once (materialized)
    tuple(r.view(tier) for r in rollups.ROLLUPS for tier in r.tiers()),
    # 10: each rollup's pending contribution as a view of its own, and the view of its stored
    # hours, stored minutes and pending minutes that the window questions read; the stored
    # tiers rewritten in the order of their minutes (zone maps)
    (*(r.pending_view() for r in rollups.ROLLUPS), *(r.tiers_view() for r in rollups.ROLLUPS),
     rollups.sort_stored),
    # 11: the findings evidence's hour tier (collector/store/evidence.py, docs/findings.md)
    (evidence.add_hour_tier,),
    # 12: each question's findings evidence in tables of its own
    (evidence.split_by_question,),
    # 13: when each dirty mark was made (the findings worker waits for a minute to settle)
    evidence.MARKED_AT,
)

SCHEMA_VERSION = len(MIGRATIONS)


def migrate(con) -> int:
    """Bring a DuckDB connection's schema to SCHEMA_VERSION; return the version it was at."""
    con.execute("create table if not exists schema_version (version INTEGER)")
    row = con.execute("select max(version) from schema_version").fetchone()
    current = row[0] or 0
    if current > SCHEMA_VERSION:
        raise RuntimeError(f"database schema version {current} is newer than this agentsla "
                           f"({SCHEMA_VERSION}); upgrade agentsla")
    for version in range(current + 1, SCHEMA_VERSION + 1):
        con.execute("begin transaction")
        for step in MIGRATIONS[version - 1]:
            if callable(step):
                step(con)
            else:
                con.execute(step)
        con.execute("insert into schema_version values (?)", [version])
        con.execute("commit")
    return current
