"""Per-minute rollups kept by the writer in the span transaction (docs/rollups.md).

Seven tables answer every aggregate question without reading raw spans: `task_minutes` (task
outcome counts), `task_histograms` (task duration and budget use), `cause_minutes` (first
failing hops of blamed tasks), `hop_minutes` (per-hop calls, errors, retries, tokens),
`hop_histograms` (hop latency and time to first token), `budget_minutes` and
`budget_hop_minutes` (/budget: durations, budgets and the tasks' stored self times per hop kind). A task counts in the minute holding its
end (in progress: its start); a span in the minute holding its end. Distributions are
exponential histograms of scale 5 (OpenTelemetry's bucket index), which merge by adding counts.

Tasks change as spans arrive (re-materialization, the lost sweep, a trace moving to its declared
task), so the writer hands every replaced row to `replace_tasks`: the old row's contribution is
subtracted and the new one's added, in the same transaction. Spans are immutable except their
logical call numbers, which `calls_changed` corrects. Each batch's deltas are grouped in SQL and
appended (readers sum rows anyway); every COMPACT_EVERY batches the minutes touched since are
summed into one row per minute and key, as ClickHouse's SummingMergeTree does on merge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

MINUTE_NS = 60 * 10**9
HOUR_NS = 3600 * 10**9
#: The hour tier of each table (`<table>_hourly`, same columns, `minute_ns` holding the hour):
#: a day is 24 rows a key instead of 1440, so long windows read few rows.
HOURLY = "_hourly"
#: Histogram scale: bucket i holds (2^(i/32), 2^((i+1)/32)]; ZERO_BUCKET holds exact zeros.
SCALE = 5
ZERO_BUCKET = -1_000_000
#: Batches of appended deltas between compactions (about; counted per table appended to).
COMPACT_EVERY = 50


def bucket_sql(value: str) -> str:
    """Return the SQL of a value's exponential-histogram bucket (OpenTelemetry's index)."""
    return (f"case when {value} = 0 then {ZERO_BUCKET} "
            f"else ceil(log2({value}) * {2 ** SCALE})::integer - 1 end")


@dataclass(frozen=True)
class Rollup:
    """One rollup table: its keys, summed values and the select of a relation's contribution."""

    table: str
    keys: tuple[str, ...]
    values: tuple[str, ...]
    #: SQL over relation `src` with a column `sign` (+1 added, -1 removed); {src} is its name.
    contribution: str

    def ddl(self, suffix: str = "") -> str:
        """Return the create statement of the table (or of its tier with `suffix`)."""
        cols = [("minute_ns", "BIGINT")] + [(k, "INTEGER" if k == "bucket" else "VARCHAR")
                                            for k in self.keys[1:]]
        cols += [(v, "DOUBLE" if v.endswith("_us") else "BIGINT") for v in self.values]
        body = ", ".join(f"{name} {kind}" for name, kind in cols)
        return f"create table if not exists {self.table}{suffix} ({body})"

    def hourly_backfill(self) -> str:
        """Return the statement that fills the empty hour tier from the minutes."""
        keys = ", ".join(self.keys[1:])
        summed = ", ".join(f"sum({v}) as {v}" for v in self.values)
        return (f"insert into {self.table}{HOURLY} by name select minute_ns // {HOUR_NS} * "
                f"{HOUR_NS} as minute_ns, {keys}, {summed} from {self.table} group by all")


_TASK_MINUTE = "(case when finished then end_ns else start_ns end) // 60000000000 * 60000000000"
_TASK_KEYS = ("minute_ns", "task_type", "tenant_id", "service_name", "agent")
_RATED = "finished and outcome not in ('cancelled', 'lost')"
#: Task counts: column → condition on a task row (the definitions of queries/sla.py).
TASK_COUNTS = {
    "finished": "finished and outcome <> 'cancelled'",
    **{o: f"finished and outcome = '{o}'" for o in (
        "success", "degraded", "failed", "budget_exhausted", "rejected", "lost", "cancelled")},
    "in_progress": "not finished",
    "gateway_answered": f"{_RATED} and gateway_ok is not null",
    "gateway_ok": f"{_RATED} and gateway_ok",
}
_BLAMED = "finished and outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')"
_SPAN_MINUTE = "end_ns // 60000000000 * 60000000000"
#: A logical call is counted at its first attempt (call_id is that span's id); spans never
#: materialized count one where they declare a first try (docs/rollups.md, Logical calls).
CALL_HEAD = ("case when call_id is not null then span_id = call_id "
             "else coalesce(retry_attempt, 0) = 0 end")
RETRY = "coalesce(attempt, retry_attempt, 0) > 0"


def _counts(conditions: dict[str, str]) -> str:
    return ", ".join(f"sum(case when {cond} then sign else 0 end) as {name}"
                     for name, cond in conditions.items())


def _histogram(keys: str, minute: str, metrics: dict[str, tuple[str, str]]) -> str:
    parts = [f"select {minute} as minute_ns, {keys}, '{metric}' as metric, "
             f"{bucket_sql(value)} as bucket, sign from {{src}} "
             f"where {cond} and {value} is not null" for metric, (value, cond) in metrics.items()]
    return (f"select minute_ns, {keys}, metric, bucket, sum(sign) as count "
            f"from ({' union all '.join(parts)}) group by all")


_TK = ", ".join(_TASK_KEYS[1:])
TASKS = Rollup("task_minutes", _TASK_KEYS, tuple(TASK_COUNTS), (
    f"select {_TASK_MINUTE} as minute_ns, {_TK}, {_counts(TASK_COUNTS)} from {{src}} group by all"))
TASK_HISTOGRAMS = Rollup("task_histograms", (*_TASK_KEYS, "metric", "bucket"), ("count",),
                         _histogram(_TK, _TASK_MINUTE, {"latency_ms": ("duration_ms", _RATED),
                                                        "budget_used": ("budget_used_ratio",
                                                                        _RATED)}))
_CK = "task_type, tenant_id, service_name, ffh_kind, ffh_name, ffh_reason"
CAUSES = Rollup(
    "cause_minutes", ("minute_ns", *_CK.split(", ")),
    ("tasks", "lost_us", "failed", "degraded", "budget_exhausted", "rejected"),
    f"select {_TASK_MINUTE} as minute_ns, {_CK}, sum(sign) as tasks, "
    f"sum(sign * round(coalesce(duration_ms, 0) * 1000)) as lost_us, "
    + _counts({o: f"outcome = '{o}'" for o in ("failed", "degraded", "budget_exhausted",
                                                "rejected")})
    + f" from {{src}} where {_BLAMED} group by all")
_HOP_COUNTS = {"calls": "true", "logical_calls": CALL_HEAD, "retries": RETRY,
               "errors": "is_error", "timeouts": "error_type = 'timeout'",
               "rate_limited": "error_type = 'rate_limited'",
               "circuit_open": "error_type = 'circuit_open'"}
HOPS = Rollup(
    "hop_minutes", ("minute_ns", "hop_kind", "hop_name"),
    (*_HOP_COUNTS, "input_tokens", "output_tokens"),
    f"select {_SPAN_MINUTE} as minute_ns, hop_kind, hop_name, {_counts(_HOP_COUNTS)}, "
    f"sum(sign * coalesce(input_tokens, 0)) as input_tokens, "
    f"sum(sign * coalesce(output_tokens, 0)) as output_tokens from {{src}} group by all")
HOP_HISTOGRAMS = Rollup("hop_histograms", ("minute_ns", "hop_kind", "hop_name", "metric", "bucket"),
                        ("count",), _histogram("hop_kind, hop_name", _SPAN_MINUTE, {
                            "latency_ms": ("duration_ms", "true"),
                            "ttft_ms": ("ttft_ms", "true")}))
#: /budget's tasks (queries/budget.py): rated, root arrived; their durations and budgets summed
#: in whole µs, and per hop kind the self times materialization stored (self_time.py).
_IN_BUDGET = f"{_RATED} and root_span_id is not null"
_BUDGETED = "budget_total_ms > 0"
_DURATION_US = "round(coalesce(duration_ms, 0) * 1000)"
BUDGET = Rollup(
    "budget_minutes", _TASK_KEYS,
    ("tasks", "tasks_with_budget", "duration_us", "budgeted_duration_us", "budget_us"),
    f"select {_TASK_MINUTE} as minute_ns, {_TK}, sum(sign) as tasks, "
    f"sum(case when {_BUDGETED} then sign else 0 end) as tasks_with_budget, "
    f"sum(sign * {_DURATION_US}) as duration_us, "
    f"sum(case when {_BUDGETED} then sign * {_DURATION_US} else 0 end) as budgeted_duration_us, "
    f"sum(case when {_BUDGETED} then sign * round(budget_total_ms * 1000) else 0 end) "
    f"as budget_us from {{src}} where {_IN_BUDGET} group by all")
BUDGET_HOPS = Rollup(
    "budget_hop_minutes", (*_TASK_KEYS, "hop_kind"),
    ("tasks_with_hop", "self_us", "budgeted_self_us"),
    f"select minute_ns, {_TK}, hop_kind, sum(sign) as tasks_with_hop, "
    f"sum(sign * self_us) as self_us, "
    f"sum(case when {_BUDGETED} then sign * self_us else 0 end) as budgeted_self_us "
    f"from (select {_TASK_MINUTE} as minute_ns, {_TK}, budget_total_ms, sign, "
    f"unnest(self_times, recursive := true) from {{src}} where {_IN_BUDGET}) group by all")
BUDGET_ROLLUPS = (BUDGET, BUDGET_HOPS)
TASK_ROLLUPS = (TASKS, TASK_HISTOGRAMS, CAUSES, *BUDGET_ROLLUPS)
SPAN_ROLLUPS = (HOPS, HOP_HISTOGRAMS)
ROLLUPS = TASK_ROLLUPS + SPAN_ROLLUPS


def _nonzero(rollup: Rollup) -> str:
    return " or ".join(f"{v} <> 0" for v in rollup.values)


def _summed(rollup: Rollup) -> str:
    return ", ".join(f"sum({v}) as {v}" for v in rollup.values)


def append(con: duckdb.DuckDBPyConnection, rollup: Rollup, delta_sql: str) -> None:
    """Append the deltas a select yields to both tiers (two statements: each is a round trip)."""
    con.execute(f"insert into {rollup.table} by name select * from ({delta_sql}) "
                f"where {_nonzero(rollup)}")
    con.execute(f"insert into {rollup.table}{HOURLY} by name select minute_ns // {HOUR_NS} * "
                f"{HOUR_NS} as minute_ns, {', '.join(rollup.keys[1:])}, {_summed(rollup)} "
                f"from ({delta_sql}) group by all having {_nonzero(rollup)}")


def compact(con: duckdb.DuckDBPyConnection, rollup: Rollup, lo: int, hi: int) -> None:
    """Sum the rows of minutes lo..hi (and their hours) into one row per minute and key."""
    for table, first in ((rollup.table, lo), (rollup.table + HOURLY, lo // HOUR_NS * HOUR_NS)):
        # the constant minute range lets DuckDB skip row groups by their zone maps
        where = f"minute_ns between {first} and {hi}"
        con.execute(f"create or replace temp table rollup_compacted as select "
                    f"{', '.join(rollup.keys)}, {_summed(rollup)} from {table} where {where} "
                    f"group by all having {_nonzero(rollup)}")
        con.execute(f"delete from {table} where {where}")
        con.execute(f"insert into {table} by name select * from rollup_compacted")


def summed_rows(con: duckdb.DuckDBPyConnection, table: str, rollup: Rollup) -> list[tuple]:
    """Return a tier's rows summed per minute and key (appended deltas not yet compacted)."""
    return con.execute(f"select {', '.join(rollup.keys)}, {_summed(rollup)} from {table} "
                       f"group by all having {_nonzero(rollup)} order by all").fetchall()


def _signed(sources: list[tuple[int, str]]) -> str:
    return " union all by name ".join(f"select *, {sign} as sign from {src}"
                                      for sign, src in sources)


def _ids_literal(ids: list[str]) -> str:
    # Literal IN lists probe task_store's primary-key index (writer._point_lookup's reason).
    return ", ".join("'" + i.replace("'", "''") + "'" for i in ids)


class RollupWriter:
    """Keeps the rollups current from inside the writer's transaction (one call per change)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, enabled: bool = True,
                 compact_every: int = COMPACT_EVERY) -> None:
        self.con = con
        self.enabled = enabled
        self.compact_every = compact_every
        self._appends = 0
        self._touched: dict[str, tuple[int, int]] = {}

    def replace_tasks(self, rows: list[dict], replaced: list[str]) -> None:
        """Count new task rows; uncount the stored rows of `replaced` they replace."""
        if not self.enabled or not (rows or replaced):
            return
        sources = []
        if rows:
            self.con.register("rollup_new_tasks", pa.Table.from_pylist(rows, schema=_task_schema()))
            sources.append((1, "rollup_new_tasks"))
        if replaced:
            sources.append((-1, f"(select * from task_store where task_id in "
                                f"({_ids_literal(replaced)}))"))
        self._apply(TASK_ROLLUPS, _signed(sources))
        if rows:
            self.con.unregister("rollup_new_tasks")

    def remove_tasks(self, task_ids: list[str]) -> None:
        """Uncount stored tasks about to be deleted (a trace moving to its declared task)."""
        self.replace_tasks([], task_ids)

    def add_spans(self, spans: pa.Table) -> None:
        """Count newly stored spans."""
        if self.enabled and spans.num_rows:
            self.con.register("rollup_new_spans", spans)
            new = f"(select {_SPAN_COLS} from rollup_new_spans)"
            self._apply(SPAN_ROLLUPS, _signed([(1, new)]))
            self.con.unregister("rollup_new_spans")

    def calls_changed(self, updates: str, lo_ns: int, hi_ns: int) -> None:
        """Correct logical calls and retries of stored spans renumbered by `updates`."""
        if not self.enabled:
            return
        join = (f"from span_store s join {updates} u on s.trace_id = u.trace_id "
                f"and s.span_id = u.span_id where s.start_ns between {lo_ns} and {hi_ns}")
        renumbered = _SPAN_COLS_OF_S.replace("s.call_id", "u.call_id").replace("s.attempt",
                                                                              "u.attempt")
        old, new = f"(select {_SPAN_COLS_OF_S} {join})", f"(select {renumbered} {join})"
        # only counts change: a span's latency and minute are fixed once stored
        self._apply((HOPS,), _signed([(-1, old), (1, new)]))

    def delete_before(self, cutoff_ns: int) -> None:
        """Delete rollup minutes before the cutoff (rollup retention, its own clock)."""
        for rollup in ROLLUPS:
            self.con.execute(f"delete from {rollup.table} where minute_ns < ?", [cutoff_ns])
            # an hour is kept while any of its minutes is
            self.con.execute(f"delete from {rollup.table}{HOURLY} where minute_ns < ?",
                             [cutoff_ns // HOUR_NS * HOUR_NS])

    def compact(self) -> None:
        """Sum the rows appended since the last compaction (inside the caller's transaction)."""
        for rollup in ROLLUPS:
            if rollup.table in self._touched:
                compact(self.con, rollup, *self._touched.pop(rollup.table))
        self._appends = 0

    def _apply(self, rollups: tuple[Rollup, ...], signed: str) -> None:
        src = self.con.sql(signed).to_arrow_table()
        if not src.num_rows:
            return
        self.con.register("rollup_src", src)
        # a superset of the minutes the rows count in (a task's end, else its start)
        lo = pc.min(src["start_ns"])
        hi = pc.max(pc.max_element_wise(src["start_ns"], src["end_ns"]))
        touched = (lo.as_py() // MINUTE_NS * MINUTE_NS, hi.as_py())
        for rollup in rollups:
            self._append(rollup, rollup.contribution.format(src="rollup_src"), touched)
        self.con.unregister("rollup_src")

    def _append(self, rollup: Rollup, delta_sql: str, touched: tuple[int, int]) -> None:
        append(self.con, rollup, delta_sql)
        lo, hi = self._touched.get(rollup.table, touched)
        self._touched[rollup.table] = (min(lo, touched[0]), max(hi, touched[1]))
        self._appends += 1
        if self._appends >= self.compact_every * len(ROLLUPS):
            self.compact()


#: Span columns the contributions read (copying whole rows would copy their JSON too).
SPAN_COLUMNS_USED = ("span_id", "start_ns", "end_ns", "duration_ms", "hop_kind", "hop_name",
                     "is_error", "error_type", "retry_attempt", "call_id", "attempt",
                     "input_tokens", "output_tokens", "ttft_ms")
_SPAN_COLS = ", ".join(SPAN_COLUMNS_USED)
_SPAN_COLS_OF_S = ", ".join(f"s.{c}" for c in SPAN_COLUMNS_USED)
#: Task columns the contributions read (besides task_id).
TASK_COLUMNS_USED = ("task_type", "tenant_id", "service_name", "agent", "start_ns", "end_ns",
                     "finished", "outcome", "gateway_ok", "duration_ms", "budget_used_ratio",
                     "ffh_kind", "ffh_name", "ffh_reason", "root_span_id", "budget_total_ms",
                     "self_times")


def _task_schema() -> pa.Schema:
    # imported here: schema.py builds migration 3 from this module
    from agentsla.collector.store.schema import TASK_ARROW_SCHEMA
    return pa.schema([TASK_ARROW_SCHEMA.field(c) for c in ("task_id", *TASK_COLUMNS_USED)])


def backfill_sql(selected: tuple[Rollup, ...] = ROLLUPS) -> list[str]:
    """Return the statements that fill empty rollups from every stored task and span."""
    return [f"insert into {r.table} by name "
            + r.contribution.format(src=f"(select *, 1 as sign from {table})")
            for rollups, table in ((TASK_ROLLUPS, "task_store"), (SPAN_ROLLUPS, "span_store"))
            for r in rollups if r in selected]


def rebuild(con: duckdb.DuckDBPyConnection, progress: Callable[[str, int, int], None] | None = None,
            chunk_ns: int = 86400 * 10**9) -> None:
    """Rebuild every rollup from the stored tasks and spans, a day at a time (one transaction)."""
    con.execute("begin transaction")
    try:
        for rollup in ROLLUPS:
            con.execute(f"delete from {rollup.table}")
            con.execute(f"delete from {rollup.table}{HOURLY}")
        for rollups, table, minute in ((TASK_ROLLUPS, "task_store", _TASK_MINUTE),
                                       (SPAN_ROLLUPS, "span_store", _SPAN_MINUTE)):
            _rebuild_table(con, rollups, table, minute, chunk_ns, progress)
        for rollup in ROLLUPS:
            con.execute(rollup.hourly_backfill())
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise


def _rebuild_table(con, rollups, table: str, minute: str, chunk_ns: int, progress) -> None:
    ((lo, hi),) = con.execute(f"select min({minute}), max({minute}) from {table}").fetchall()
    if lo is None:
        return
    chunks = range(lo, hi + 1, chunk_ns)
    for n, first in enumerate(chunks, 1):
        # chunks of whole minutes never share a row, so each is a plain insert
        src = (f"(select *, 1 as sign from {table} "
               f"where {minute} >= {first} and {minute} < {first + chunk_ns})")
        for rollup in rollups:
            con.execute(f"insert into {rollup.table} by name {rollup.contribution.format(src=src)}")
        if progress:
            progress(table, n, len(chunks))
