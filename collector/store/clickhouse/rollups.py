"""Per-minute rollups on ClickHouse, kept by the materializer and idempotent under replays.

The same tables, keys, counts and exponential histograms (scale 5) as DuckDB's rollups
(collector/store/rollups.py: `task_minutes`, `task_histograms`, `cause_minutes`,
`budget_minutes`, `budget_hop_minutes`, `hop_minutes`, `hop_histograms`), so both engines give
the same answers. What differs is how they are kept (docs/scale-out.md, Rollups): each shard
*re-aggregates* the minutes a pass touched from the stored rows of its own tasks (by task id,
`owns`) and writes one row per (minute, shard, key) into a `ReplacingMergeTree(version,
is_deleted)`; a key that vanished from a minute (a task re-judged into another outcome or
minute) is written as a deleted row. A rollup row is thus a pure function of the stored tasks
and `hop_spans` rows, so a replayed pass (a crash before the watermark moved) rewrites the same
rows: the minutes every attempt of a pass touched are journaled before its first insert, and
each attempt re-aggregates all of them. Readers sum the FINAL rows over shards.

Task rows are keyed by task id, so each is written again into `agentsla_minute_tasks`, at
the minute it counts in (`index_tasks`, before the task rows): "the tasks of a minute" are a
range of that table, not a lookup of random ids.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from agentsla.collector.store import rollups as duck
from agentsla.collector.store.clickhouse.ids import id_chunks
# the conditions DuckDB's rollups count by: one definition for both engines
from agentsla.collector.store.rollups import (_BLAMED, _BUDGETED, _DURATION_US, _HOP_COUNTS,
                                              _IN_BUDGET, _RATED)
from agentsla.collector.store.schema import TASK_COLUMNS
from agentsla.errors import PermanentError

MINUTE_NS = duck.MINUTE_NS
#: the minute a task counts in: its end once finished, else its start (DuckDB's _TASK_MINUTE)
TASK_MINUTE = (f"intDiv(assumeNotNull(if(finished, end_ns, start_ns)), {MINUTE_NS}) "
               f"* {MINUTE_NS}")
SPAN_MINUTE = f"intDiv(end_ns, {MINUTE_NS}) * {MINUTE_NS}"
#: the exponential-histogram bucket of `value` (queries/sql/clickhouse/_hist_bucket.sql)
BUCKET = (f"if(value = 0, {duck.ZERO_BUCKET}, toInt32(ceil(log2(value) * {2 ** duck.SCALE}))"
          f" - 1)")
TASK, SPAN = "task", "span"


@dataclass(frozen=True)
class ChRollup:
    """One rollup table: DuckDB's definition, and the per-row select of its contributions."""

    duck: duck.Rollup
    source: str  # TASK (rows of `tasks`) or SPAN (rows of `hop_spans`)
    #: select list over one source row: keys (after minute_ns) then `v_<value>` columns
    per_row: str
    where: str = "true"
    #: an ARRAY JOIN of (metric, value, factor) tuples, for histograms
    array_join: str = ""

    @property
    def table(self) -> str:
        """The stored minute tier."""
        return f"agentsla_{self.duck.table}"

    @property
    def keys(self) -> tuple[str, ...]:
        return self.duck.keys[1:]

    def tiers(self) -> tuple[str, str]:
        """Return the stored tables: the minute tier and the hour tier (minute_ns holding the
        hour: a day is 24 rows a key instead of 1440, as on DuckDB)."""
        return self.table, self.table + duck.HOURLY

    def ddl(self, database: str) -> list[str]:
        """Return the create statements of both tiers and of their views (the FINAL rows;
        readers sum them over shards)."""
        kinds = [f"{k} {'Int32' if k == 'bucket' else 'Nullable(String)'}" for k in self.keys]
        kinds += [f"{v} {'Float64' if t == 'DOUBLE' else 'Int64'}"
                  for v, t in self.duck.value_types().items()]
        return [statement for tier in self.tiers() for statement in (
            f"create table if not exists {database}.{tier} (minute_ns Int64, shard String, "
            f"{', '.join(kinds)}, version UInt64, is_deleted UInt8) "
            f"ENGINE = ReplacingMergeTree(version, is_deleted) "
            f"ORDER BY (minute_ns, shard, {', '.join(self.keys)}) "
            f"SETTINGS allow_nullable_key = 1",
            f"create view if not exists {database}.{tier.removeprefix('agentsla_')} as "
            f"select * except (version, is_deleted) from {database}.{tier} final")]

    def aggregate(self, src: str) -> str:
        """Return the select of what the rows of `src` add, per minute and key (columns
        minute_ns, keys, v_<value>)."""
        minute = TASK_MINUTE if self.source == TASK else SPAN_MINUTE
        keys = ", ".join(self.keys)
        sums = ", ".join(f"sum(v_{v}) as v_{v}" for v in self.duck.values)
        return (f"select minute_ns, {keys}, {sums} from (select {minute} as minute_ns, "
                f"{self.per_row} from {src} {self.array_join} where {self.where}) "
                f"group by minute_ns, {keys}")

    def hourly(self, database: str) -> str:
        """Return the select of the shard's minute rows of the hours {minutes:Array(Int64)}
        (from {lo:Int64} to {hi:Int64}), summed per hour and key."""
        keys = ", ".join(self.keys)
        sums = ", ".join(f"sum({v}) as v_{v}" for v in self.duck.values)
        return (f"select intDiv(minute_ns, {duck.HOUR_NS}) * {duck.HOUR_NS} as hour_ns, {keys}, "
                f"{sums} from {database}.{self.table} final where shard = {{shard:String}} "
                f"and minute_ns >= {{lo:Int64}} and minute_ns < {{hi:Int64}} "
                f"group by hour_ns, {keys}")

    def refresh(self, database: str, tier: str, aggregate: str) -> str:
        """Return the insert that rewrites the touched minutes (hours) {minutes:Array(Int64)}
        of shard {shard:String} in `tier` from `aggregate` (columns minute_ns or hour_ns, keys,
        v_<value>), a deleted row for each key no longer there."""
        keys = ", ".join(self.keys)
        values = self.duck.values
        zeros = ", ".join(f"0 as v_{v}" for v in values)
        gone = " and ".join(f"v_{v} = 0" for v in values)
        return (f"insert into {database}.{tier} (minute_ns, shard, {keys}, "
                f"{', '.join(values)}, version, is_deleted) select minute_ns, {{shard:String}}, "
                f"{keys}, {', '.join(f'v_{v}' for v in values)}, {{version:UInt64}}, {gone} "
                f"from (select minute_ns, {keys}, "
                f"{', '.join(f'sum(v_{v}) as v_{v}' for v in values)} from ("
                f"{aggregate} union all select minute_ns, {keys}, {zeros} from "
                f"{database}.{tier} final where shard = {{shard:String}} and minute_ns in "
                f"{{minutes:Array(Int64)}}) group by minute_ns, {keys})")


def _counts(conditions: dict[str, str]) -> str:
    return ", ".join(f"toInt64(coalesce({cond}, false)) as v_{name}"
                     for name, cond in conditions.items())


def _histogram(metrics: dict[str, tuple[str, int]]) -> str:
    """ARRAY JOIN of metric name -> (value column, factor to millionths of the exposed unit)."""
    tuples = ", ".join(f"('{m}', toNullable(toFloat64({v})), {f})" for m, (v, f) in
                       metrics.items())
    return f"array join [{tuples}] as m"


_TASK_KEYS = "task_type, tenant_id, service_name, agent"
_HIST_VALUES = ("m.1 as metric, "
                f"{BUCKET.replace('value', 'm.2')} as bucket, 1 as v_count, "
                "toInt64(round(m.2 * m.3)) as v_sum_e6")
TASKS = ChRollup(duck.TASKS, TASK, f"{_TASK_KEYS}, {_counts(duck.TASK_COUNTS)}")
TASK_HISTOGRAMS = ChRollup(
    duck.TASK_HISTOGRAMS, TASK, f"{_TASK_KEYS}, {_HIST_VALUES}",
    f"({_RATED}) and m.2 is not null",
    _histogram({"latency_ms": ("duration_ms", duck._MS_E6),
                "budget_used": ("budget_used_ratio", 10**6)}))
CAUSES = ChRollup(
    duck.CAUSES, TASK,
    "task_type, tenant_id, service_name, ffh_kind, ffh_name, ffh_reason, 1 as v_tasks, "
    "round(coalesce(duration_ms, 0) * 1000) as v_lost_us, " + _counts(duck.CAUSE_COUNTS),
    _BLAMED)
HOPS = ChRollup(duck.HOPS, SPAN, "hop_kind, hop_name, " + _counts(_HOP_COUNTS)
                + ", coalesce(input_tokens, 0) as v_input_tokens, "
                "coalesce(output_tokens, 0) as v_output_tokens")
HOP_HISTOGRAMS = ChRollup(
    duck.HOP_HISTOGRAMS, SPAN, f"hop_kind, hop_name, {_HIST_VALUES}", "m.2 is not null",
    _histogram({"latency_ms": ("duration_ms", duck._MS_E6), "ttft_ms": ("ttft_ms", duck._MS_E6)}))
_BUDGETED_IF = f"coalesce({_BUDGETED}, false)"
BUDGET = ChRollup(
    duck.BUDGET, TASK,
    f"{_TASK_KEYS}, 1 as v_tasks, toInt64({_BUDGETED_IF}) as v_tasks_with_budget, "
    f"{_DURATION_US} as v_duration_us, "
    f"if({_BUDGETED_IF}, {_DURATION_US}, 0) as v_budgeted_duration_us, "
    f"if({_BUDGETED_IF}, round(budget_total_ms * 1000), 0) as v_budget_us", _IN_BUDGET)
#: the self times materialization stored on the task row (collector/tasks/self_time.py)
BUDGET_HOPS = ChRollup(
    duck.BUDGET_HOPS, TASK,
    f"{_TASK_KEYS}, hop.hop_kind as hop_kind, 1 as v_tasks_with_hop, "
    f"toFloat64(hop.self_us) as v_self_us, "
    f"if({_BUDGETED_IF}, toFloat64(hop.self_us), 0) as v_budgeted_self_us",
    _IN_BUDGET, "array join self_times as hop")
ROLLUPS = (TASKS, TASK_HISTOGRAMS, CAUSES, BUDGET, BUDGET_HOPS, HOPS, HOP_HISTOGRAMS)
#: the rollups of each source, re-aggregated from its rows
BY_SOURCE = {source: tuple(r for r in ROLLUPS if r.source == source) for source in (TASK, SPAN)}


def ddl(database: str) -> list[str]:
    """Return the statements creating the rollups, their views and the journal of the
    minutes each pass touches (the tasks by minute are agentsla.sql's, beside the tasks)."""
    return [*(statement for r in ROLLUPS for statement in r.ddl(database)),
            # the minutes a pass (shard, its starting watermark) re-aggregates, written before
            # its first insert, so a replay re-aggregates what a crashed attempt touched
            f"create table if not exists {database}.agentsla_rollup_journal (shard String, "
            f"pass_ns Int64, source String, minute_ns Int64, written DateTime DEFAULT now()) "
            f"ENGINE = ReplacingMergeTree ORDER BY (shard, pass_ns, source, minute_ns) "
            f"TTL written + INTERVAL 7 DAY"]  # a replay comes within minutes


def task_minute(row: dict[str, Any]) -> int:
    """Return the minute a task row counts in (TASK_MINUTE in Python)."""
    at = row["end_ns"] if row["finished"] else row["start_ns"]
    return at // MINUTE_NS * MINUTE_NS


def stored_task_minutes(runner: Any, database: str, task_ids: Iterable[str]) -> set[int]:
    """Return the minutes the stored rows of these tasks count in (before a pass rewrites
    them), for the journal."""
    return {r["minute_ns"] for chunk in id_chunks(sorted(task_ids)) for r in runner.arrow(
        f"select {TASK_MINUTE} as minute_ns from {database}.tasks where task_id in "
        "{ids:Array(String)}", {"ids": chunk}).to_pylist()}


def journal(runner: Any, database: str, shard: str, pass_ns: int,
            touched: dict[str, set[int]]) -> dict[str, set[int]]:
    """Record the minutes this attempt of the pass touches; return them with those of every
    earlier attempt of the same pass (a crashed one left rollups half-written there)."""
    runner.insert(f"{database}.agentsla_rollup_journal",
                  [{"shard": shard, "pass_ns": pass_ns, "source": source, "minute_ns": m}
                   for source, minutes in touched.items() for m in sorted(minutes)])
    found = runner.arrow(f"select source, minute_ns from {database}.agentsla_rollup_journal "
                         "where shard = {shard:String} and pass_ns >= {pass:Int64}",
                         {"shard": shard, "pass": pass_ns}).to_pylist()
    every = {source: set(minutes) for source, minutes in touched.items()}
    for row in found:
        every[row["source"]].add(row["minute_ns"])
    return every


def index_tasks(runner: Any, database: str, shard: str, rows: list[dict[str, Any]],
                dropped: Iterable[str], journaled: Iterable[int], version: int) -> None:
    """Write the task rows into `agentsla_minute_tasks` at the minute each counts in, and a
    deleted row wherever else one of them, or a `dropped` task, is counted there now (call it
    before the task rows are written).

    Where else: among the `journaled` minutes of the pass, which hold each task's stored minute
    (`stored_task_minutes`) and any minute an earlier, crashed attempt of the pass wrote it at:
    so after any replay a task counts once, at its current minute.
    """
    at = {r["task_id"]: task_minute(r) for r in rows}
    minutes = sorted(journaled)
    stale = [r for chunk in id_chunks(sorted({*at, *dropped})) for r in runner.arrow(
        f"select minute_ns, task_id from {database}.agentsla_minute_tasks final where "
        "shard = {shard:String} and minute_ns in {minutes:Array(Int64)} and task_id in "
        "{ids:Array(String)}", {"shard": shard, "minutes": minutes, "ids": chunk}).to_pylist()
        if at.get(r["task_id"]) != r["minute_ns"]] if minutes else []
    runner.insert(f"{database}.agentsla_minute_tasks",
                  [{**r, "minute_ns": at[r["task_id"]], "shard": shard, "version": version}
                   for r in rows]
                  + [{**r, "shard": shard, "version": version, "is_deleted": 1} for r in stale])


def index_stored_tasks(runner: Any, database: str, shard: Any) -> None:
    """Fill the shard's rows of `agentsla_minute_tasks` from the stored tasks, at version 0
    (columns by name: a column added later sits after `is_deleted` in the table)."""
    columns = ", ".join(name for name, *_ in TASK_COLUMNS)
    runner.execute(f"insert into {database}.agentsla_minute_tasks (minute_ns, shard, {columns}, "
                   f"version, is_deleted) select {TASK_MINUTE}, {{shard:String}}, {columns}, "
                   f"0, 0 from {database}.tasks as t where {_shard_of('t')}",
                   {"shard": str(shard), "k": shard.index, "n": shard.count})


def shards(runner: Any, database: str,
           table: str = "agentsla_minute_tasks") -> list[Any]:
    """Return the shards the rollups are kept for (those of the tasks by minute; `table`: an
    older store's minute index), by index."""
    from agentsla.collector.store.clickhouse.materializer import parse_shard  # imports us

    return sorted((parse_shard(r["shard"]) for r in runner.arrow(
        f"select distinct shard from {database}.{table}", {}).to_pylist()),
        key=lambda s: (s.count, s.index))


def owns(task_id: str) -> str:
    """Return the condition that shard {k:UInt64} of {n:UInt64} owns the task `task_id` (an
    SQL expression): a task, its rows, its spans' rows and their rollups belong to the shard
    of its task id's hash, whichever traces hold it (docs/scale-out.md, Materializer workers)."""
    return f"cityHash64({task_id}) % {{n:UInt64}} = {{k:UInt64}}"


def _shard_of(alias: str) -> str:
    return owns(f"{alias}.task_id")


def refresh(runner: Any, database: str, shard: Any, minutes: dict[str, set[int]],
            version: int) -> None:
    """Re-aggregate the touched minutes of the shard's rollups from its stored rows, then the
    hours holding them from its minutes."""
    for source, rollups in BY_SOURCE.items():
        touched = sorted(minutes.get(source, ()))
        if not touched:
            continue
        if source == TASK:
            src = (f"(select * from {database}.minute_tasks where shard = {{shard:String}} "
                   f"and minute_ns in {{minutes:Array(Int64)}})")
        else:
            src = (f"(select * from {database}.hop_spans as s where s.end_ns >= {{lo:Int64}} "
                   f"and s.end_ns < {{hi:Int64}} and {SPAN_MINUTE} in {{minutes:Array(Int64)}}"
                   f" and {_shard_of('s')})")
        hours = sorted({m // duck.HOUR_NS * duck.HOUR_NS for m in touched})
        shard_params = {"shard": str(shard), "k": shard.index, "n": shard.count,
                        "version": version}
        by_minute = {**shard_params, "minutes": touched, "lo": touched[0],
                     "hi": touched[-1] + MINUTE_NS}
        by_hour = {**shard_params, "minutes": hours, "lo": hours[0],
                   "hi": hours[-1] + duck.HOUR_NS}
        for rollup in rollups:
            minute_tier, hour_tier = rollup.tiers()
            runner.execute(rollup.refresh(database, minute_tier, rollup.aggregate(src)),
                           by_minute)
            runner.execute(rollup.refresh(database, hour_tier, _hour_as_minute(
                rollup.hourly(database), rollup)), by_hour)


def _hour_as_minute(select: str, rollup: ChRollup) -> str:
    values = ", ".join(f"v_{v}" for v in rollup.duck.values)
    return f"select hour_ns as minute_ns, {', '.join(rollup.keys)}, {values} from ({select})"


def rebuild(runner: Any, database: str, shard: Any,
            selected: tuple[ChRollup, ...] = ROLLUPS) -> None:
    """Fill the shard's rollups (`selected`; all of them with its tasks by minute) from every
    stored row (a store materialized before the rollups existed, or generated by
    bench/clickhouse.py), at version 0."""
    params = {"shard": str(shard), "k": shard.index, "n": shard.count}
    if selected == ROLLUPS:
        index_stored_tasks(runner, database, shard)
    for rollup in selected:
        table = "tasks" if rollup.source == TASK else "hop_spans"
        minute_tier, hour_tier = rollup.tiers()
        for tier, select, bounds in (
                (minute_tier, rollup.aggregate(
                    f"(select * from {database}.{table} as x where {_shard_of('x')})"), {}),
                (hour_tier, _hour_as_minute(rollup.hourly(database), rollup),
                 {"lo": -2**63, "hi": 2**63 - 1})):
            values = ", ".join(rollup.duck.values)
            runner.execute(f"insert into {database}.{tier} (minute_ns, shard, "
                           f"{', '.join(rollup.keys)}, {values}, version, is_deleted) select "
                           f"minute_ns, {{shard:String}}, {', '.join(rollup.keys)}, "
                           f"{', '.join(f'v_{v}' for v in rollup.duck.values)}, 0, 0 "
                           f"from ({select})", {**params, **bounds})


def check_shards(runner: Any, database: str, shard: Any) -> None:
    """Raise a PermanentError unless the rollups are kept for `shard`'s count by shards that
    own tasks: a worker of N shards next to rows labelled for M, or next to N > 1 shares cut
    by an earlier version's trace-id rule, would count tasks twice. Records the task rule
    for a store whose rollups it holds already (no rows yet, or one shard's)."""
    kept = shards(runner, database)
    other = sorted({str(s) for s in kept if s.count != shard.count})
    rebuild = (f"stop every materializer and run `agentsla rollups rebuild --store URL "
               f"--shards {shard.count}`")
    if other:
        raise PermanentError(
            f"the rollups of {database} are kept for shards {', '.join(other)}, not for "
            f"{shard.count} shard(s) as {shard} is: {rebuild} "
            "(docs/scale-out.md, Changing the shard count)")
    if _shard_rule(runner, database) == TASK_RULE:
        return
    if any(s.count > 1 for s in kept):
        raise PermanentError(
            f"the rollups of {database} were kept by {shard.count} shards of an earlier "
            f"agentsla, whose shards owned traces, not tasks: {rebuild} once "
            "(docs/scale-out.md, Changing the shard count)")
    _record_shard_rule(runner, database)


#: agentsla_shard_rule's value once the rollups are cut by `owns` (task ids).
TASK_RULE = "task"


def _shard_rule(runner: Any, database: str) -> str | None:
    rows = runner.arrow(f"select rule from {database}.agentsla_shard_rule final", {}).to_pylist()
    return rows[0]["rule"] if rows else None


def _record_shard_rule(runner: Any, database: str) -> None:
    runner.insert(f"{database}.agentsla_shard_rule",
                  [{"rule": TASK_RULE, "version": time.time_ns()}])


def reshard(runner: Any, database: str, count: int,
            progress: Callable[[str], None] = lambda line: None) -> None:
    """Rebuild every rollup for `count` shards (`agentsla rollups rebuild --shards`).

    Run it with no materializer running: the rollups, the tasks by minute, the journal and
    the lists of tasks in progress are emptied (every shard label; a list left from an
    earlier count of the same label would be stale), the first two rebuilt from the stored
    task and hop_spans rows for each shard K/count at version 0, and each new shard starts
    from the earliest watermark of the old ones (a pass re-judges from there; passes are
    idempotent). Tasks and spans are not sharded in storage, so they stay as they are.
    """
    from agentsla.collector.store.clickhouse.materializer import Shard, watermark  # imports us

    old = shards(runner, database)
    marks = [watermark(runner, database, s) for s in old]
    progress(f"rollups of {database}: kept for {', '.join(map(str, old)) or 'no shard'}; "
             f"rebuilding for {count}")
    for table in ("agentsla_minute_tasks", "agentsla_rollup_journal",
                  "agentsla_unfinished_tasks", *(tier for r in ROLLUPS for tier in r.tiers())):
        runner.execute(f"truncate table {database}.{table}")
    for k in range(count):
        rebuild(runner, database, Shard(k, count))
        progress(f"shard {k}/{count}: rollups rebuilt ({k + 1}/{count})")
    _record_shard_rule(runner, database)
    if any(marks):
        since = min(m for m in marks if m)
        runner.insert(f"{database}.agentsla_watermarks",  # over any older row of the label
                      [{"shard": str(Shard(k, count)), "watermark_ns": since,
                        "version": time.time_ns()} for k in range(count)])
        progress(f"new shards start from watermark {since} (the earliest of the old ones)")
