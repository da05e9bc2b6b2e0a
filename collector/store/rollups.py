"""Per-minute rollups kept by the writer in the span transaction (docs/rollups.md).

Seven tables answer every aggregate question without reading raw spans: `task_minutes` (task
outcome counts), `task_histograms` (task duration and budget use), `cause_minutes` (first
failing hops of blamed tasks), `hop_minutes` (per-hop calls, errors, retries, tokens),
`hop_histograms` (hop latency and time to first token), `budget_minutes` and
`budget_hop_minutes` (/budget: durations, budgets and the tasks' stored self times per hop kind). A task counts in the minute holding its
end (in progress: its start); a span in the minute holding its end. Distributions are
exponential histograms of scale 5 (OpenTelemetry's bucket index), which merge by adding counts.

Each `Rollup` states once, as a SQL select over signed source rows (`sign` +1 added, -1
removed), what those rows add to its table; readers, merges, `rebuild` and the migrations all
run that select (queries/sql/duckdb/_task_rows.sql and its siblings state the same per-row
contributions for the ragged window edges).

Tasks change as spans arrive (re-materialization, the lost sweep, a trace moving to its declared
task), so the writer hands every replaced row to `replace_tasks`: the old row is appended with
sign -1 and the new one with +1, in the same transaction. Spans are immutable except their
logical call numbers, which `calls_changed` corrects the same way. The writer appends only
these signed source rows, to `rollup_pending` (one plain insert of a batch's new tasks and spans
at `flush`, with the replaced rows the writer remembers; one more statement for those it reads
from task_store); readers read each tier (`task_minutes`, `task_minutes_hourly`, ...) as a view
of its stored rows (`<tier>_stored`) and the contribution of the pending rows (the window
questions read `<table>_tiers` instead: stored hours, stored minutes and pending minutes side by
side, unsummed); once `rollup_merge_rows` (a setting) are pending, they are summed into the
stored ones, one row per minute and key, as ClickHouse's SummingMergeTree does on merge.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Callable

import duckdb
import pyarrow as pa

from agentsla.collector.store.database import insert_arrow
from agentsla.config import TasksConfig

MINUTE_NS = 60 * 10**9
HOUR_NS = 3600 * 10**9
#: The hour tier of each table (`<table>_hourly`, same columns, `minute_ns` holding the hour):
#: a day is 24 rows a key instead of 1440, so long windows read few rows.
HOURLY = "_hourly"
#: Histogram scale: bucket i holds (2^(i/32), 2^((i+1)/32)]; ZERO_BUCKET holds exact zeros.
SCALE = 5
ZERO_BUCKET = -1_000_000
#: Readers read each tier as a view: its stored rows (`<tier>_stored`, one row per minute and
#: key once merged) and what the signed source rows pending since the last merge contribute.
STORED = "_stored"
PENDING = "rollup_pending"
#: The view of each rollup's pending contribution (`<table>_pending`) and the view of its
#: stored hours, stored minutes and pending minutes side by side (`<table>_tiers`).
PENDING_TIER = "_pending"
TIERS = "_tiers"


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
        cols += list(self.value_types().items())
        body = ", ".join(f"{name} {kind}" for name, kind in cols)
        return f"create table if not exists {self.table}{suffix} ({body})"

    def tiers(self) -> tuple[str, str]:
        """Return the names readers read: the minute tier and the hour tier."""
        return self.table, self.table + HOURLY

    def value_types(self) -> dict[str, str]:
        """Return the SQL type of each value column (whole µs are DOUBLE, counts BIGINT)."""
        return {v: "DOUBLE" if v.endswith("_us") else "BIGINT" for v in self.values}

    def pending(self) -> str:
        """Return the select of what the pending source rows add, per minute and key."""
        source = "task" if self in TASK_ROLLUPS else "span"
        src = f"(select * from {PENDING} where source = '{source}')"
        values = ", ".join(f"{v}::{kind} as {v}" for v, kind in self.value_types().items())
        return (f"select minute_ns, {', '.join(self.keys[1:])}, {values} "
                f"from ({self.contribution.format(src=src)}) where {_nonzero(self)}")

    def pending_view(self) -> str:
        """Return the statement of the view of what the pending rows add, per minute and key
        (`<table>_pending`, the pending minutes of `<table>_tiers`)."""
        return f"create or replace view {self.table}{PENDING_TIER} as {self.pending()}"

    def tiers_view(self) -> str:
        """Return the statement of the view that readers of a window read (`<table>_tiers`):
        the stored hours, the stored minutes and the pending minutes, each row marked with its
        `tier` ('hour', 'minute', 'pending'), not summed per minute.

        A window's whole hours come from the stored hours, its other whole minutes from the
        stored minutes, and every whole minute of it from the pending rows (a merge adds them to
        both stored tiers at once), so a question filters the tiers (`_tier_range.sql`) and
        sums the rows it groups: one plan of the pending rows' contribution instead of two
        views each summing stored and pending rows per minute (docs/rollups.md, What readers
        pay). Rows of one minute and key may cancel: questions keep only groups with a nonzero
        count, as the raw rows give them.
        """
        minutes, hours = self.tiers()
        return (f"create or replace view {self.table}{TIERS} as "
                f"select 'hour' as tier, * from {hours}{STORED} "
                f"union all select 'minute' as tier, * from {minutes}{STORED} "
                f"union all select 'pending' as tier, * from {self.table}{PENDING_TIER}")

    def view(self, tier: str) -> str:
        """Return the statement of a tier's view: its stored rows and the pending rows, summed
        per minute (or hour) and key (`rollups check`, /metrics and /slo read these).

        Summed, not only appended: a key whose stored and pending rows cancel out (a task
        counted in progress under no type, then finished under its type) is no row, as it is
        none once merged and none in the raw answer. Only the minutes (hours) holding pending
        rows are summed; the others are read as stored, which keeps a read of a day as cheap as
        before the pending rows (summing every stored row cost 1.8x the CPU at 10M spans).
        The pending rows' sums are materialized: the view reads them twice, and planning and
        computing them once made the overview's three questions ~20 % cheaper in CPU at 10M.
        """
        pending = self.pending()
        if tier != self.table:  # a minute's sums are a part of its hour's
            pending = (f"select * replace (minute_ns // {HOUR_NS} * {HOUR_NS} as minute_ns) "
                       f"from ({pending})")
        summed = ", ".join(f"sum({v})::{kind} as {v}" for v, kind in self.value_types().items())
        stored = f"select * from {tier}{STORED}"
        # only the minutes holding pending rows are summed: the others pass through as stored
        return (f"create or replace view {tier} as with pending as materialized ({pending}) "
                f"{stored} s where not exists (select 1 from pending p "
                f"where p.minute_ns = s.minute_ns) "
                f"union all by name select {', '.join(self.keys)}, {summed} from "
                f"({stored} where minute_ns in (select minute_ns from pending) "
                f"union all by name select * from pending) group by all having {_nonzero(self)}")

    def hourly_backfill(self, suffix: str = "") -> str:
        """Return the statement that fills the empty hour tier from the minutes (`suffix`: the
        tiers' physical names)."""
        keys = ", ".join(self.keys[1:])
        return (f"insert into {self.table}{HOURLY}{suffix} by name select minute_ns // {HOUR_NS} "
                f"* {HOUR_NS} as minute_ns, {keys}, {_summed(self)} from {self.table}{suffix} "
                f"group by all order by minute_ns")


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


def _histogram(keys: str, minute: str, metrics: dict[str, tuple[str, str, int]]) -> str:
    """`metrics`: name → (value, condition, factor to millionths of the exposed unit)."""
    parts = [f"select {minute} as minute_ns, {keys}, '{metric}' as metric, "
             f"{bucket_sql(value)} as bucket, sign, round({value} * {factor}) as e6 "
             f"from {{src}} where {cond} and {value} is not null"
             for metric, (value, cond, factor) in metrics.items()]
    return (f"select minute_ns, {keys}, metric, bucket, sum(sign) as count, "
            f"sum(sign * e6) as sum_e6 from ({' union all '.join(parts)}) group by all")


#: Histogram values: the bucket's count and the sum of its values in millionths of the unit
#: /metrics exposes (µs of a duration in seconds, millionths of a budget share), whole numbers
#: so that signed rows cancel exactly; /metrics' `_sum`.
HISTOGRAM_VALUES = ("count", "sum_e6")
#: ms → millionths of a second
_MS_E6 = 1000


_TK = ", ".join(_TASK_KEYS[1:])
TASKS = Rollup("task_minutes", _TASK_KEYS, tuple(TASK_COUNTS), (
    f"select {_TASK_MINUTE} as minute_ns, {_TK}, {_counts(TASK_COUNTS)} from {{src}} group by all"))
TASK_HISTOGRAMS = Rollup("task_histograms", (*_TASK_KEYS, "metric", "bucket"), HISTOGRAM_VALUES,
                         _histogram(_TK, _TASK_MINUTE, {
                             "latency_ms": ("duration_ms", _RATED, _MS_E6),
                             "budget_used": ("budget_used_ratio", _RATED, 10**6)}))
_CK = "task_type, tenant_id, service_name, ffh_kind, ffh_name, ffh_reason"
#: Blamed tasks counted by outcome (column -> condition), on both engines.
CAUSE_COUNTS = {o: f"outcome = '{o}'" for o in ("failed", "degraded", "budget_exhausted",
                                                 "rejected")}
CAUSES = Rollup(
    "cause_minutes", ("minute_ns", *_CK.split(", ")),
    ("tasks", "lost_us", *CAUSE_COUNTS),
    f"select {_TASK_MINUTE} as minute_ns, {_CK}, sum(sign) as tasks, "
    f"sum(sign * round(coalesce(duration_ms, 0) * 1000)) as lost_us, "
    + _counts(CAUSE_COUNTS)
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
                        HISTOGRAM_VALUES, _histogram("hop_kind, hop_name", _SPAN_MINUTE, {
                            "latency_ms": ("duration_ms", "true", _MS_E6),
                            "ttft_ms": ("ttft_ms", "true", _MS_E6)}))
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


def merge_pending(con: duckdb.DuckDBPyConnection) -> None:
    """Sum the pending rows into the stored rows of the minutes (and hours) they touch."""
    for rollup in ROLLUPS:
        con.execute(f"create or replace temp table rollup_delta as {rollup.pending()}")
        ((lo, hi),) = con.execute("select min(minute_ns), max(minute_ns) "
                                  "from rollup_delta").fetchall()
        if lo is None:
            continue
        for tier, minute, first in (
                (rollup.table, "minute_ns", lo),
                (rollup.table + HOURLY, f"minute_ns // {HOUR_NS} * {HOUR_NS}",
                 lo // HOUR_NS * HOUR_NS)):
            # only the minutes the deltas touch are rewritten (a late span may touch
            # yesterday); the constant range lets DuckDB skip row groups by their zone maps
            where = (f"minute_ns between {first} and {hi} and minute_ns in "
                     f"(select distinct {minute} from rollup_delta)")
            con.execute(f"create or replace temp table rollup_merged as select "
                        f"{', '.join(rollup.keys)}, {_summed(rollup)} from (select * from "
                        f"{tier}{STORED} where {where} union all by name select * replace "
                        f"({minute} as minute_ns) from rollup_delta) group by all "
                        f"having {_nonzero(rollup)}")
            con.execute(f"delete from {tier}{STORED} where {where}")
            con.execute(f"insert into {tier}{STORED} by name select * from rollup_merged "
                        f"order by minute_ns")
    con.execute(f"delete from {PENDING}")


def summed_rows(con: duckdb.DuckDBPyConnection, table: str, rollup: Rollup) -> list[tuple]:
    """Return a tier's rows summed per minute and key (pending rows not yet merged)."""
    return con.execute(f"select {', '.join(rollup.keys)}, {_summed(rollup)} from {table} "
                       f"group by all having {_nonzero(rollup)} order by all").fetchall()


def _ids_literal(ids: list[str]) -> str:
    # Literal IN lists probe task_store's primary-key index, as the writer's _LOOKUP_CHUNK
    # lists do (a join against a registered table scans the whole table).
    return ", ".join("'" + i.replace("'", "''") + "'" for i in ids)


class RollupWriter:
    """Keeps the rollups current from inside the writer's transaction (one call per change).

    New rows are collected and appended by `flush` (just before the commit) with one insert;
    stored rows about to change are appended at once, while they still hold their old values.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, enabled: bool = True,
                 merge_rows: int = TasksConfig.rollup_merge_rows) -> None:
        """`merge_rows`: source rows appended since the last merge that make `flush` merge
        (a merge costs about the same whatever their number; readers sum them on every read)."""
        self.con = con
        self.enabled = enabled
        self.merge_rows = merge_rows
        self._new: list[pa.Table] = []
        self._appended = 0  # source rows since the last merge (of this process)

    def replace_tasks(self, rows: pa.Table | None, replaced: list[str],
                      remembered: pa.Table | None = None) -> None:
        """Count new task rows (task_store's columns); uncount the stored rows they replace:
        `remembered`, rows as the writer last wrote them (task_store's columns), and the rows
        of `replaced`, read from task_store (call it before they are replaced).

        Reading them costs a statement a batch (4 ms of a 500-span batch whose tasks all
        change: bench/ingest.py --children-first); the writer remembers most."""
        if not self.enabled:
            return
        if rows is not None and rows.num_rows:
            self._new.append(_signed(rows.select(("task_id", *TASK_COLUMNS_USED)), "task"))
        if remembered is not None and remembered.num_rows:
            self._new.append(_signed(remembered.select(("task_id", *TASK_COLUMNS_USED)), "task",
                                     sign=-1))
        if replaced:
            self._append_stored(f"select task_id, {_TASK_COLS}, 'task' as source, -1 as sign "
                                f"from task_store where task_id in ({_ids_literal(replaced)})",
                                len(replaced))

    def remove_tasks(self, task_ids: list[str], remembered: pa.Table | None = None) -> None:
        """Uncount stored tasks about to be deleted (a trace moving to its declared task), as
        `replace_tasks` uncounts the rows it replaces."""
        self.replace_tasks(None, task_ids, remembered)

    def add_spans(self, spans: pa.Table) -> None:
        """Count newly stored spans."""
        if self.enabled and spans.num_rows:
            self._new.append(_signed(spans.select(SPAN_COLUMNS_USED), "span"))

    def calls_changed(self, updates: str, lo_ns: int, hi_ns: int) -> None:
        """Correct logical calls and retries of stored spans renumbered by `updates` (call it
        before the update)."""
        if not self.enabled:
            return
        join = (f"from span_store s join {updates} u on s.trace_id = u.trace_id "
                f"and s.span_id = u.span_id where s.start_ns between {lo_ns} and {hi_ns}")
        renumbered = _SPAN_COLS_OF_S.replace("s.call_id", "u.call_id").replace("s.attempt",
                                                                              "u.attempt")
        # only counts change: a span's latency and minute are fixed once stored
        self._append_stored(f"select {_SPAN_COLS_OF_S}, 'span' as source, -1 as sign {join} "
                            f"union all by name select {renumbered}, 'span' as source, "
                            f"1 as sign {join}", 0)  # rare: not worth a count

    def flush(self) -> None:
        """Append the transaction's new rows (call it just before the commit); merge the
        pending rows into the stored ones once merge_rows have been appended."""
        if not self._new:
            return
        rows = _pending_rows(pa.concat_tables(self._new, promote_options="default"))
        self._new = []
        insert_arrow(self.con, PENDING, rows)
        self._appended += rows.num_rows
        if self._appended >= self.merge_rows:
            self.merge()

    def discard(self) -> None:
        """Forget the new rows of a transaction rolled back."""
        self._new = []

    def merge(self) -> None:
        """Sum the pending rows into the stored ones (inside the caller's transaction)."""
        merge_pending(self.con)
        self._appended = 0

    def delete_before(self, cutoff_ns: int) -> None:
        """Delete rollup minutes before the cutoff (rollup retention, its own clock)."""
        self.merge()
        for rollup in ROLLUPS:
            minutes, hours = rollup.tiers()
            self.con.execute(f"delete from {minutes}{STORED} where minute_ns < ?", [cutoff_ns])
            # an hour is kept while any of its minutes is
            self.con.execute(f"delete from {hours}{STORED} where minute_ns < ?",
                             [cutoff_ns // HOUR_NS * HOUR_NS])

    def _append_stored(self, select: str, rows: int) -> None:
        self.con.execute(f"insert into {PENDING} by name {select}")
        self._appended += rows


def _pending_rows(rows: pa.Table) -> pa.Table:
    """Return signed source rows with rollup_pending's columns, in its physical order (that of
    migration 7's pending_ddl: no later migration changes the table)."""
    schema = _pending_schema()
    return pa.table([rows.column(f.name) if f.name in rows.column_names
                     else pa.nulls(rows.num_rows, f.type) for f in schema], schema=schema)


def _signed(rows: pa.Table, source: str, sign: int = 1) -> pa.Table:
    """Return source rows with their source and sign columns (+1 counts them, -1 uncounts)."""
    n = rows.num_rows
    return rows.append_column("source", pa.repeat(pa.scalar(source), n)).append_column(
        "sign", pa.repeat(pa.scalar(sign, pa.int64()), n))


#: Span columns the contributions read (copying whole rows would copy their JSON too).
SPAN_COLUMNS_USED = ("span_id", "start_ns", "end_ns", "duration_ms", "hop_kind", "hop_name",
                     "is_error", "error_type", "retry_attempt", "call_id", "attempt",
                     "input_tokens", "output_tokens", "ttft_ms")
_SPAN_COLS_OF_S = ", ".join(f"s.{c}" for c in SPAN_COLUMNS_USED)
#: Task columns the contributions read (besides task_id).
TASK_COLUMNS_USED = ("task_type", "tenant_id", "service_name", "agent", "start_ns", "end_ns",
                     "finished", "outcome", "gateway_ok", "duration_ms", "budget_used_ratio",
                     "ffh_kind", "ffh_name", "ffh_reason", "root_span_id", "budget_total_ms",
                     "self_times")
_TASK_COLS = ", ".join(TASK_COLUMNS_USED)


#: rollup_pending's columns besides the task and span columns the contributions read.
_PENDING_OWN = (("source", "VARCHAR", pa.string()), ("sign", "BIGINT", pa.int64()))


def _pending_columns(task_columns, span_columns) -> list[tuple[str, str, pa.DataType]]:
    """rollup_pending's (name, SQL type, Arrow type) in physical order, from schema.py's rows:
    the task and span columns the contributions read, each row's source and sign."""
    kinds = {name: (sql_type.removesuffix(" PRIMARY KEY"), arrow_type)
             for name, sql_type, arrow_type, *_ in (*task_columns, *span_columns)}
    used = dict.fromkeys(("task_id", *TASK_COLUMNS_USED, *SPAN_COLUMNS_USED))
    return [(name, *kinds[name]) for name in used] + list(_PENDING_OWN)


def pending_ddl(task_columns, span_columns) -> str:
    """Return the create statement of rollup_pending (migration 7)."""
    body = ", ".join(f"{name} {kind}"
                     for name, kind, _ in _pending_columns(task_columns, span_columns))
    return f"create table if not exists {PENDING} ({body})"


@cache
def _pending_schema() -> pa.Schema:
    # imported here: schema.py builds migration 3 from this module
    from agentsla.collector.store.schema import SPAN_COLUMNS, TASK_COLUMNS
    return pa.schema([(name, arrow_type)
                      for name, _, arrow_type in _pending_columns(TASK_COLUMNS, SPAN_COLUMNS)])


def fill_histogram_sums(con: duckdb.DuckDBPyConnection) -> None:
    """Fill the histograms' `sum_e6` (migration 8) of the stored rows whose raw rows are all
    still stored; the others (raw rows deleted by retention) keep a null sum.

    The pending rows are merged first, so a stored row holds everything the raw rows add; a
    row's sum is taken only when the raw rows give the same count (all of them still there).
    """
    merge_pending(con)
    for rollup, table in ((TASK_HISTOGRAMS, "task_store"), (HOP_HISTOGRAMS, "span_store")):
        minutes, hours = (tier + STORED for tier in rollup.tiers())
        raw = rollup.contribution.format(src=f"(select *, 1 as sign from {table})")
        con.execute(f"update {minutes} s set sum_e6 = r.sum_e6 from ({raw}) r "
                    f"where {_same_keys(rollup, 's', 'r')} and s.count = r.count")
        per_hour = (f"select minute_ns // {HOUR_NS} * {HOUR_NS} as minute_ns, "
                    f"{', '.join(rollup.keys[1:])}, sum(count) as count, "
                    f"case when count(sum_e6) = count(*) then sum(sum_e6) end as sum_e6 "
                    f"from {minutes} group by all")
        con.execute(f"update {hours} h set sum_e6 = m.sum_e6 from ({per_hour}) m "
                    f"where {_same_keys(rollup, 'h', 'm')} and h.count = m.count")


def _same_keys(rollup: Rollup, a: str, b: str) -> str:
    return " and ".join(f"{a}.{k} is not distinct from {b}.{k}" for k in rollup.keys)


def sort_stored(con: duckdb.DuckDBPyConnection) -> None:
    """Rewrite every stored tier in the order of its minutes (migration 10).

    Readers ask for ranges of minutes, which DuckDB answers from the row groups whose zone maps
    overlap them; rows written in hash-aggregate order (the migrations' backfills and `rebuild`
    before they sorted) spread each minute over every row group of a day (a day's minutes read
    12 of the 23 row groups of hop_histograms at 10M spans). Merges append recent minutes, so
    a table kept by the writer stays in about that order.
    """
    for rollup in ROLLUPS:
        for tier in rollup.tiers():
            con.execute(f"create or replace temp table rollup_sorted as select * from "
                        f"{tier}{STORED} order by minute_ns")
            con.execute(f"delete from {tier}{STORED}")
            con.execute(f"insert into {tier}{STORED} select * from rollup_sorted")
    con.execute("drop table if exists rollup_sorted")


def backfill_sql(selected: tuple[Rollup, ...] = ROLLUPS) -> list[str]:
    """Return the statements that fill empty rollups from every stored task and span."""
    return [f"insert into {r.table} by name select * from ("
            + r.contribution.format(src=f"(select *, 1 as sign from {table})")
            + ") order by minute_ns"
            for rollups, table in ((TASK_ROLLUPS, "task_store"), (SPAN_ROLLUPS, "span_store"))
            for r in rollups if r in selected]


def rebuild(con: duckdb.DuckDBPyConnection, progress: Callable[[str, int, int], None] | None = None,
            chunk_ns: int = 86400 * 10**9) -> None:
    """Rebuild every rollup from the stored tasks and spans, a day at a time (one transaction)."""
    con.execute("begin transaction")
    try:
        for rollup in ROLLUPS:
            for tier in rollup.tiers():
                con.execute(f"delete from {tier}{STORED}")
        con.execute(f"delete from {PENDING}")
        for rollups, table, minute in ((TASK_ROLLUPS, "task_store", _TASK_MINUTE),
                                       (SPAN_ROLLUPS, "span_store", _SPAN_MINUTE)):
            _rebuild_table(con, rollups, table, minute, chunk_ns, progress)
        for rollup in ROLLUPS:
            con.execute(rollup.hourly_backfill(STORED))
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
            con.execute(f"insert into {rollup.table}{STORED} by name select * from "
                        f"({rollup.contribution.format(src=src)}) order by minute_ns")
        if progress:
            progress(table, n, len(chunks))
