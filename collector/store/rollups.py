"""Per-minute rollups kept by the writer in the span transaction (docs/rollups.md).

Seven tables answer every aggregate question without reading raw spans: `task_minutes` (task
outcome counts), `task_histograms` (task duration and budget use), `cause_minutes` (first
failing hops of blamed tasks), `hop_minutes` (per-hop calls, errors, retries, tokens),
`hop_histograms` (hop latency and time to first token), `budget_minutes` and
`budget_hop_minutes` (/budget: durations, budgets and the tasks' stored self times per hop
kind). A task counts in the minute holding its
end (in progress: its start); a span in the minute holding its end. Distributions are
exponential histograms of scale 5 (OpenTelemetry's bucket index), which merge by adding counts.

Each `Rollup` states once, as Arrow compute expressions over a source row with a column `sign`
(+1 added, -1 removed), what that row adds to its table; the writer's deltas, `rebuild` and
migration 3 all evaluate those expressions (queries/sql/duckdb/_task_rows.sql and its siblings
state the same per-row contributions in SQL for the ragged window edges).

Readers read each tier (`task_minutes`, `task_minutes_hourly`, ...) as a view: its stored rows
and the deltas pending in `rollup_pending`, one table holding every rollup's (so a batch costs
one insert, whatever the number of tables). The writer side is `rollup_writer.py`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import reduce
from typing import Callable

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import acero

MINUTE_NS = 60 * 10**9
HOUR_NS = 3600 * 10**9
DAY_NS = 24 * HOUR_NS
#: The hour tier of each table (`<table>_hourly`, same columns, `minute_ns` holding the hour):
#: a day is 24 rows a key instead of 1440, so long windows read few rows.
HOURLY = "_hourly"
#: Histogram scale: bucket i holds (2^(i/32), 2^((i+1)/32)]; ZERO_BUCKET holds exact zeros.
SCALE = 5
ZERO_BUCKET = -1_000_000
#: Readers read each tier as a view: its stored rows (`<tier>_stored`, one row per minute and
#: key once merged) and the deltas of the transactions since the last merge (`rollup_pending`).
STORED = "_stored"
PENDING = "rollup_pending"
#: Columns of rollup_pending that hold a rollup's string keys and its values (every rollup fits;
#: one needing more adds them in a migration).
KEY_SLOTS = 6
VALUE_SLOTS = 11

Expr = pc.Expression
F = pc.field
#: +1 for a row added, -1 for a row removed.
SIGN = F("sign")


def bucket(value: Expr) -> Expr:
    """Return a value's exponential-histogram bucket (OpenTelemetry's index at SCALE)."""
    zero = pc.equal(value, 0)
    # log2(0) is -inf, which no integer holds: exact zeros take their own bucket
    index = pc.ceil(pc.multiply(pc.log2(pc.if_else(zero, 1.0, value)), 2 ** SCALE))
    return pc.if_else(zero, pa.scalar(ZERO_BUCKET, pa.int32()),
                      pc.subtract(index.cast(pa.int32()), pa.scalar(1, pa.int32())))


def when(condition: Expr) -> Expr:
    """Return the row's sign where the condition holds, else 0 (unknown counts as false)."""
    return pc.if_else(pc.coalesce(condition, False), SIGN, 0)


def signed(value: Expr) -> Expr:
    """Return the row's sign times the value (a missing value adds 0)."""
    return pc.multiply(SIGN, pc.coalesce(value, 0))


def every(*conditions: Expr) -> Expr:
    """Return the conjunction of conditions with SQL's three-valued `and`."""
    return reduce(pc.and_kleene, conditions)


def minute_of(time_ns: Expr) -> Expr:
    """Return the minute holding a time (unix ns)."""
    return pc.multiply(pc.divide(time_ns, MINUTE_NS), MINUTE_NS)


@dataclass(frozen=True)
class Rollup:
    """One rollup table: its keys, its summed values and what a source row adds to them.

    A part selects source rows (`where`) and projects each onto the table's columns (keys, then
    values, as Arrow expressions over the row and its `sign`); a minute and key holds the sum
    of the projections of its rows.
    """

    table: str
    keys: tuple[str, ...]
    values: tuple[str, ...]
    parts: tuple[tuple[Expr, tuple[Expr, ...]], ...]
    #: a list-of-struct column each element of which is a row (its fields as columns), or None
    explode: str | None = None

    def ddl(self, suffix: str = "") -> str:
        """Return the create statement of the table (or of its tier with `suffix`)."""
        cols = [("minute_ns", "BIGINT")] + [(k, "INTEGER" if k == "bucket" else "VARCHAR")
                                            for k in self.keys[1:]]
        cols += [(v, "DOUBLE" if v.endswith("_us") else "BIGINT") for v in self.values]
        body = ", ".join(f"{name} {kind}" for name, kind in cols)
        return f"create table if not exists {self.table}{suffix} ({body})"

    def tiers(self) -> tuple[str, str]:
        """Return the names readers read: the minute tier and the hour tier."""
        return self.table, self.table + HOURLY

    def view(self, tier: str) -> str:
        """Return the statement of a tier's view: its stored rows and the pending deltas."""
        minute = "minute_ns" if tier == self.table else f"minute_ns // {HOUR_NS} * {HOUR_NS}"
        columns = ", ".join(f"{slot}::{kind} as {name}" for name, (slot, kind) in _slots(self).items())
        return (f"create or replace view {tier} as select * from {tier}{STORED} union all by name "
                f"select {minute} as minute_ns, {columns} from {PENDING} "
                f"where rollup = '{self.table}'")

    def hourly_backfill(self, suffix: str = "") -> str:
        """Return the statement that fills the empty hour tier from the minutes (`suffix`: their
        physical names)."""
        keys = ", ".join(self.keys[1:])
        return (f"insert into {self.table}{HOURLY}{suffix} by name select minute_ns // {HOUR_NS} "
                f"* {HOUR_NS} as minute_ns, {keys}, {_summed(self)} from {self.table}{suffix} "
                f"group by all")

    def deltas(self, rows: pa.Table) -> pa.Table:
        """Return what signed source rows add to each minute and key (rows summing to 0 left out)."""
        names = [*self.keys, *self.values]
        if self.explode:
            rows = _explode(rows, self.explode)
        parts = [_plan(_source(rows), ("filter", acero.FilterNodeOptions(where)),
                       ("project", acero.ProjectNodeOptions(list(exprs), names)))
                 for where, exprs in self.parts]
        return self._summed(parts[0] if len(parts) == 1
                            else acero.Declaration("union", None, inputs=parts))

    def _summed(self, rows: acero.Declaration) -> pa.Table:
        nonzero = reduce(operator.or_, (F(v) != 0 for v in self.values))
        return _plan(rows, ("aggregate", acero.AggregateNodeOptions(
            [(v, "hash_sum", None, v) for v in self.values], keys=list(self.keys))),
                     ("filter", acero.FilterNodeOptions(nonzero))).to_table(use_threads=False)


def _explode(rows: pa.Table, column: str) -> pa.Table:
    """Return a row per element of a list-of-struct column, with the element's fields (SQL's
    `unnest(..., recursive := true)`: a null or empty list gives no row)."""
    lists = rows[column].combine_chunks()
    elements = pc.list_flatten(lists)
    exploded = rows.drop_columns([column]).take(pc.list_parent_indices(lists))
    for field, values in zip(elements.type, elements.flatten()):
        exploded = exploded.append_column(field.name, values)
    return exploded


def _source(table: pa.Table) -> acero.Declaration:
    return acero.Declaration("table_source", acero.TableSourceNodeOptions(table))


def _plan(first: acero.Declaration, *nodes: tuple[str, acero.ExecNodeOptions]) -> acero.Declaration:
    return acero.Declaration.from_sequence([first, *(acero.Declaration(*node) for node in nodes)])


def counts(table: str, minute: Expr, keys: tuple[str, ...], values: dict[str, Expr],
           where: Expr = pc.scalar(True), explode: str | None = None) -> Rollup:
    """Return a rollup of summed values per minute and key of the rows meeting `where`."""
    return Rollup(table, ("minute_ns", *keys), tuple(values),
                  ((where, (minute, *map(F, keys), *values.values())),), explode)


def histogram(table: str, minute: Expr, keys: tuple[str, ...],
              metrics: dict[str, tuple[Expr, Expr]]) -> Rollup:
    """Return a rollup of bucket counts per minute and key of each metric's (value, rows)."""
    return Rollup(table, ("minute_ns", *keys, "metric", "bucket"), ("count",), tuple(
        (every(condition, value.is_valid()), (minute, *map(F, keys), pc.scalar(metric),
                                               bucket(value), SIGN))
        for metric, (value, condition) in metrics.items()))


_FINISHED = F("finished")
#: A finished task counts at its end (a lost one: when it was declared lost), else its start.
_TASK_MINUTE = minute_of(pc.if_else(pc.coalesce(_FINISHED, False), F("end_ns"), F("start_ns")))
_TASK_KEYS = ("task_type", "tenant_id", "service_name", "agent")
_OUTCOME = F("outcome")
_RATED = every(_FINISHED, _OUTCOME != "cancelled", _OUTCOME != "lost")
#: Task counts: column → condition on a task row (the definitions of queries/sla.py).
TASK_COUNTS: dict[str, Expr] = {
    "finished": every(_FINISHED, _OUTCOME != "cancelled"),
    **{o: every(_FINISHED, _OUTCOME == o) for o in (
        "success", "degraded", "failed", "budget_exhausted", "rejected", "lost", "cancelled")},
    "in_progress": pc.invert(_FINISHED),
    "gateway_answered": every(_RATED, F("gateway_ok").is_valid()),
    "gateway_ok": every(_RATED, F("gateway_ok")),
}
_BLAMED_OUTCOMES = ("failed", "degraded", "budget_exhausted", "rejected")
_SPAN_MINUTE = minute_of(F("end_ns"))
#: A logical call is counted at its first attempt (call_id is that span's id); spans never
#: materialized count one where they declare a first try (docs/rollups.md, Logical calls).
CALL_HEAD = pc.if_else(F("call_id").is_valid(), F("span_id") == F("call_id"),
                       pc.coalesce(F("retry_attempt"), 0) == 0)
RETRY = pc.coalesce(F("attempt"), F("retry_attempt"), 0) > 0
_HOP_KEYS = ("hop_kind", "hop_name")

TASKS = counts("task_minutes", _TASK_MINUTE, _TASK_KEYS,
               {name: when(condition) for name, condition in TASK_COUNTS.items()})
TASK_HISTOGRAMS = histogram("task_histograms", _TASK_MINUTE, _TASK_KEYS, {
    "latency_ms": (F("duration_ms"), _RATED), "budget_used": (F("budget_used_ratio"), _RATED)})
CAUSES = counts(
    "cause_minutes", _TASK_MINUTE,
    ("task_type", "tenant_id", "service_name", "ffh_kind", "ffh_name", "ffh_reason"),
    {"tasks": SIGN,
     # summed duration in whole µs (SQL's round: halves away from zero)
     "lost_us": signed(pc.round(pc.multiply(F("duration_ms"), 1000.0),
                                round_mode="half_towards_infinity")),
     **{o: when(_OUTCOME == o) for o in _BLAMED_OUTCOMES}},
    where=every(_FINISHED, _OUTCOME.isin(_BLAMED_OUTCOMES)))
HOPS = counts("hop_minutes", _SPAN_MINUTE, _HOP_KEYS, {
    "calls": SIGN, "logical_calls": when(CALL_HEAD), "retries": when(RETRY),
    "errors": when(F("is_error")),
    **{name: when(F("error_type") == error) for name, error in (
        ("timeouts", "timeout"), ("rate_limited", "rate_limited"), ("circuit_open", "circuit_open"))},
    "input_tokens": signed(F("input_tokens")), "output_tokens": signed(F("output_tokens"))})
HOP_HISTOGRAMS = histogram("hop_histograms", _SPAN_MINUTE, _HOP_KEYS, {
    "latency_ms": (F("duration_ms"), pc.scalar(True)), "ttft_ms": (F("ttft_ms"), pc.scalar(True))})
#: /budget's tasks (queries/budget.py): rated, root arrived; their durations and budgets summed
#: in whole µs, and per hop kind the self times materialization stored (self_time.py).
_IN_BUDGET = every(_RATED, F("root_span_id").is_valid())
_BUDGETED = F("budget_total_ms") > 0
_DURATION_US = pc.round(pc.multiply(pc.coalesce(F("duration_ms"), 0.0), 1000.0),
                        round_mode="half_towards_infinity")
BUDGET = counts("budget_minutes", _TASK_MINUTE, _TASK_KEYS, {
    "tasks": SIGN, "tasks_with_budget": when(_BUDGETED), "duration_us": signed(_DURATION_US),
    "budgeted_duration_us": pc.if_else(pc.coalesce(_BUDGETED, False), signed(_DURATION_US), 0),
    "budget_us": pc.if_else(pc.coalesce(_BUDGETED, False), signed(pc.round(
        pc.multiply(F("budget_total_ms"), 1000.0), round_mode="half_towards_infinity")), 0)},
    where=_IN_BUDGET)
BUDGET_HOPS = counts("budget_hop_minutes", _TASK_MINUTE, (*_TASK_KEYS, "hop_kind"), {
    "tasks_with_hop": SIGN, "self_us": signed(F("self_us")),
    "budgeted_self_us": pc.if_else(pc.coalesce(_BUDGETED, False), signed(F("self_us")), 0)},
    where=_IN_BUDGET, explode="self_times")
BUDGET_ROLLUPS = (BUDGET, BUDGET_HOPS)
TASK_ROLLUPS = (TASKS, TASK_HISTOGRAMS, CAUSES, *BUDGET_ROLLUPS)
SPAN_ROLLUPS = (HOPS, HOP_HISTOGRAMS)
ROLLUPS = TASK_ROLLUPS + SPAN_ROLLUPS
#: Task columns the contributions read (besides task_id).
TASK_COLUMNS_USED = ("task_type", "tenant_id", "service_name", "agent", "start_ns", "end_ns",
                     "finished", "outcome", "gateway_ok", "duration_ms", "budget_used_ratio",
                     "ffh_kind", "ffh_name", "ffh_reason", "root_span_id", "budget_total_ms",
                     "self_times")
#: Span columns the contributions read (copying whole rows would copy their JSON too).
SPAN_COLUMNS_USED = ("span_id", "start_ns", "end_ns", "duration_ms", "hop_kind", "hop_name",
                     "is_error", "error_type", "retry_attempt", "call_id", "attempt",
                     "input_tokens", "output_tokens", "ttft_ms")


BY_TABLE = {rollup.table: rollup for rollup in ROLLUPS}


def _summed(rollup: Rollup) -> str:
    return ", ".join(f"sum({v}) as {v}" for v in rollup.values)


def _nonzero(rollup: Rollup) -> str:
    return " or ".join(f"{v} <> 0" for v in rollup.values)


def _slots(rollup: Rollup) -> dict[str, tuple[str, str]]:
    """Map a rollup's columns (but minute_ns) to their rollup_pending column and SQL type."""
    strings = [k for k in rollup.keys[1:] if k != "bucket"]
    slots = {k: (f"key_{i}", "VARCHAR") for i, k in enumerate(strings, 1)}
    if "bucket" in rollup.keys:
        slots["bucket"] = ("bucket", "INTEGER")
    slots.update({v: (f"value_{i}", "DOUBLE" if v.endswith("_us") else "BIGINT")
                  for i, v in enumerate(rollup.values, 1)})
    return slots


#: rollup_pending: any rollup's deltas, its string keys and values in numbered columns.
_PENDING_SCHEMA = pa.schema([("rollup", pa.string()), ("minute_ns", pa.int64()),
                             *((f"key_{i}", pa.string()) for i in range(1, KEY_SLOTS + 1)),
                             ("bucket", pa.int32()),
                             # whole numbers, lost_us too (whole µs)
                             *((f"value_{i}", pa.int64()) for i in range(1, VALUE_SLOTS + 1))])
_TOO_WIDE = [r.table for r in ROLLUPS
             if len([k for k in r.keys if k != "bucket"]) - 1 > KEY_SLOTS or len(r.values) > VALUE_SLOTS]
if _TOO_WIDE:
    raise RuntimeError(f"rollups {_TOO_WIDE} need more rollup_pending columns (a migration)")


def pending_ddl() -> str:
    """Return the create statement of rollup_pending."""
    kinds = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.int32(): "INTEGER",
             pa.float64(): "DOUBLE"}
    body = ", ".join(f"{f.name} {kinds[f.type]}" for f in _PENDING_SCHEMA)
    return f"create table if not exists {PENDING} ({body})"


def pending_rows(rollup: Rollup, minutes: pa.Table) -> pa.Table:
    """Return a rollup's deltas in the columns of rollup_pending."""
    n = minutes.num_rows
    column_of = {slot: name for name, (slot, _) in _slots(rollup).items()}
    columns = [pa.array([rollup.table] * n, pa.string()), minutes["minute_ns"]]
    for field in list(_PENDING_SCHEMA)[2:]:
        name = column_of.get(field.name)
        if name is None:
            columns.append(pa.nulls(n, field.type))
        else:
            column = minutes[name]
            columns.append(column if column.type == field.type else column.cast(field.type))
    return pa.Table.from_arrays(columns, schema=_PENDING_SCHEMA)


def insert(con: duckdb.DuckDBPyConnection, table: str, rollup_rows: pa.Table) -> None:
    """Append Arrow rows to a table, matching columns by name."""
    con.register("rollup_rows", rollup_rows)
    try:
        con.execute(f"insert into {table} by name select * from rollup_rows")
    finally:
        con.unregister("rollup_rows")


def signed_rows(rows: pa.Table, source: str, sign: int) -> pa.Table:
    """Return the columns of task or span rows the contributions read, with their sign."""
    # rows of an older schema lack the columns of later rollups (a migration fills only earlier ones)
    schema = pa.schema([f for f in _schema(source) if f.name in rows.column_names])
    chosen = rows.select(schema.names).cast(schema)
    return chosen.append_column("sign", pa.array([sign] * rows.num_rows, pa.int64()))


def merge_range(con: duckdb.DuckDBPyConnection, rollup: Rollup, tier: str, lo: int, hi: int) -> None:
    """Store a tier's rows of minutes lo..hi, pending deltas included, as one row per key."""
    # the constant minute range lets DuckDB skip row groups by their zone maps
    where = f"minute_ns between {lo} and {hi}"
    con.execute(f"create or replace temp table rollup_merged as select "
                f"{', '.join(rollup.keys)}, {_summed(rollup)} from {tier} where {where} "
                f"group by all having {_nonzero(rollup)}")
    con.execute(f"delete from {tier}{STORED} where {where}")
    con.execute(f"insert into {tier}{STORED} by name select * from rollup_merged")


def summed_rows(con: duckdb.DuckDBPyConnection, table: str, rollup: Rollup) -> list[tuple]:
    """Return a tier's rows summed per minute and key (appended deltas not yet merged)."""
    return con.execute(f"select {', '.join(rollup.keys)}, {_summed(rollup)} from {table} "
                       f"group by all having {_nonzero(rollup)} order by all").fetchall()


def _schema(source: str) -> pa.Schema:
    """Return the Arrow schema of the task or span columns the contributions read."""
    # imported here: schema.py builds migration 3 from this module
    from agentsla.collector.store.schema import SPAN_ARROW_SCHEMA, TASK_ARROW_SCHEMA
    full, used = ((TASK_ARROW_SCHEMA, TASK_COLUMNS_USED) if source == "task"
                  else (SPAN_ARROW_SCHEMA, SPAN_COLUMNS_USED))
    return pa.schema([full.field(c) for c in used])


def rebuild(con: duckdb.DuckDBPyConnection, progress: Callable[[str, int, int], None] | None = None,
            chunk_ns: int = DAY_NS) -> None:
    """Rebuild every rollup from the stored tasks and spans, a day at a time (one transaction)."""
    con.execute("begin transaction")
    try:
        for rollup in ROLLUPS:
            for tier in rollup.tiers():
                con.execute(f"delete from {tier}{STORED}")
        con.execute(f"delete from {PENDING}")
        fill_minutes(con, ROLLUPS, progress, chunk_ns, STORED)
        for rollup in ROLLUPS:
            con.execute(rollup.hourly_backfill(STORED))
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise


def fill_minutes(con: duckdb.DuckDBPyConnection, selected: tuple[Rollup, ...] = ROLLUPS,
                 progress: Callable[[str, int, int], None] | None = None,
                 chunk_ns: int = DAY_NS, suffix: str = "") -> None:
    """Add every stored task and span to the selected rollups' minute tables (`suffix`: their
    physical names).

    The rows of a day are read at a time, chunked by their start, so a minute and key may get a
    row from each of two chunks at their edge (readers sum rows, as they sum the writer's deltas).
    """
    for rollups, table, source in ((TASK_ROLLUPS, "task_store", "task"),
                                   (SPAN_ROLLUPS, "span_store", "span")):
        rollups = [r for r in rollups if r in selected]
        ((lo, hi),) = con.execute(f"select min(start_ns), max(start_ns) from {table}").fetchall()
        if lo is None or not rollups:
            continue
        chunks = range(lo, hi + 1, chunk_ns)
        present = {name for (name,) in con.execute(
            "select column_name from information_schema.columns where table_name = ?",
            [table]).fetchall()}
        columns = ", ".join(c for c in _schema(source).names if c in present)
        for n, first in enumerate(chunks, 1):
            rows = signed_rows(con.sql(f"select {columns} from {table} where start_ns >= {first} "
                                       f"and start_ns < {first + chunk_ns}").to_arrow_table(),
                               source, 1)
            for rollup in rollups:
                minutes = rollup.deltas(rows)
                if minutes.num_rows:
                    insert(con, rollup.table + suffix, minutes)
            if progress:
                progress(table, n, len(chunks))
