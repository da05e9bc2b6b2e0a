"""Task materialization over the traces table: one pass of one shard, from its watermark.

A pass finds the tasks of its shard (`cityHash64(task_id) % N = K`, the task a trace resolves
to: its stored one, else its declared task.id, else its trace id) with a span that ended since
the shard's watermark minus the late-arrival window, plus the shard's unfinished tasks (a root
may still come; a rootless task turns lost at its deadline). It reads every span of
those tasks through the `spans` view, runs the same pure function as the DuckDB writer
(collector.tasks.materialize), and inserts task rows and per-span facts with a version, then
re-aggregates the rollups' minutes it touched (rollups.py), then moves the watermark. It marks
the findings evidence's minutes of those tasks dirty before its first insert and again after its
finding rows (queries/findings/evidence.py: shard 0 stores them). A crash
before the watermark moves replays the pass: the same spans give the same rows, ReplacingMergeTree
keeps one per key, and the replay re-aggregates every minute any attempt touched (journaled
before the first insert), so replays are idempotent.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from agentsla.collector.processing.normalize import _error_type  # the one set of reason rules
from agentsla.collector.store.clickhouse import rollups, schema
from agentsla.collector.store.clickhouse.ids import id_chunks
from agentsla.collector.store.evidence import changed_minutes
from agentsla.collector.tasks.links import first_followed, resolve_task
from agentsla.collector.tasks.materialize import materialize
from agentsla.config import TasksConfig

_STATUS_CODE = {"unset": 0, "ok": 1, "error": 2}
NS = 1_000_000_000


@dataclass(frozen=True)
class Shard:
    """Shard K of N (0 <= K < N): the tasks whose task id's hash modulo N is K."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """Parse `K/N`; raise ValueError saying what is wrong."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 0 <= int(match.group(1)) < int(match.group(2)):
        raise ValueError(f"bad shard {text!r}: expected K/N with 0 <= K < N, e.g. 0/4")
    return Shard(int(match.group(1)), int(match.group(2)))


@dataclass
class PassResult:
    """What one pass did: tasks written, spans read, the new watermark, whether it reached now."""

    tasks: int
    spans: int
    watermark_ns: int
    caught_up: bool


def run_pass(runner: Any, database: str, table: str, shard: Shard, config: TasksConfig,
             now_ns: int) -> PassResult:
    """Materialize the shard's tasks touched since its watermark; move the watermark on.

    One pass covers at most `materialize_max_window` of span end times, so a shard catching up
    on a backlog holds a bounded number of spans in memory; `caught_up` says it reached now.
    """
    mark = watermark(runner, database, shard) or _first_end(runner, database, table, now_ns)
    until = min(now_ns, mark + round(config.materialize_max_window * NS))
    since = max(0, mark - round(config.late_window * NS))
    task_traces, dropped, starts, keys = _task_traces(
        runner, database, table, shard, since, until,
        None if _replaying(runner, database, shard, mark) else mark,
        max(0, since - round(config.longest_span * NS)))
    traces = {t for ts in task_traces.values() for t in ts}
    # the spans of the tasks this shard drops that another shard's task took leave this
    # shard's hop rollups
    leaving = {t for ts in dropped.values() for t in ts}
    spans = _spans(runner, database, table, sorted(traces | leaving), starts)
    ours = pc.is_in(spans["trace_id"], value_set=pa.array(sorted(traces), pa.string()))
    left, spans = spans.filter(pc.invert(ours)), spans.filter(ours)
    rows = spans.to_pylist()
    by_task = _group(rows, task_traces)
    tasks, calls = [], {}
    for task_id, members in by_task.items():
        first_seen = min(r["end_ns"] for r in members)  # no receive time: spans end at export
        done = materialize(task_id, members, config, now_ns, first_seen)
        tasks.append({**done.row, "version": now_ns})
        calls.update(done.calls)
    judged = _judged(spans, rows, calls, now_ns)
    # the rollups' minutes: journaled, and every task written at its minute, before any row
    # moves
    replaced = rollups.stored_task_minutes(runner, database, [*by_task, *dropped])
    touched = rollups.journal(runner, database, str(shard), mark, {
        rollups.TASK: replaced | {rollups.task_minute(t) for t in tasks},
        rollups.SPAN: _minutes(judged["end_ns"]) | _minutes(left["end_ns"])})
    # the findings evidence's minutes (as DuckDB's writer marks them): dirty before any row
    # moves (readers take them raw meanwhile) and again once the finding rows are written (a
    # worker round between the two may have stored them from the old rows)
    dirty = changed_minutes(zip(by_task.values(), tasks), replaced)
    _mark_dirty(runner, database, f"{shard}/{now_ns}", dirty)
    rollups.index_tasks(runner, database, str(shard), tasks, dropped, touched[rollups.TASK],
                        now_ns)
    # a provisional task's key before any row of it: a pass finding its trace moving away
    # finds the task (a replay writes the same rows)
    runner.insert(f"{database}.agentsla_provisional_tasks", keys)
    # a task keyed by a trace id whose traces joined another task: drop the old rows. Span
    # facts go last: they tell a replay which traces moved (before them, it moves them again)
    tombstones = [{"task_id": t, "is_deleted": 1, "version": now_ns} for t in sorted(dropped)]
    runner.insert(f"{database}.agentsla_tasks", tasks + tombstones)
    runner.insert(f"{database}.agentsla_task_traces",
                  [{"task_id": task, "trace_id": trace, "version": now_ns}
                   for task in by_task for trace in sorted(task_traces[task])]
                  + [{"task_id": task, "trace_id": trace, "version": now_ns, "is_deleted": 1}
                     for task in sorted(dropped) for trace in sorted(dropped[task])])
    runner.insert_arrow(f"{database}.agentsla_hop_spans", judged.select(_HOP_COLUMNS))
    runner.insert_arrow(f"{database}.agentsla_finding_spans", judged.select(_FINDING_COLUMNS))
    _mark_dirty(runner, database, f"{shard}/{now_ns}", dirty)
    runner.insert_arrow(f"{database}.agentsla_span_facts", judged.select(_FACT_COLUMNS))
    rollups.refresh(runner, database, shard, touched, now_ns)
    runner.insert(f"{database}.agentsla_unfinished_tasks", [{
        "shard": str(shard), "version": now_ns,
        "tasks": [{"task_id": t["task_id"], "trace_id": trace} for t in tasks
                  if not t["finished"] for trace in sorted(task_traces[t["task_id"]])]}])
    runner.insert(f"{database}.agentsla_watermarks",
                  [{"shard": str(shard), "watermark_ns": until, "version": now_ns}])
    return PassResult(len(tasks), len(rows), until, until >= now_ns)


def _mark_dirty(runner: Any, database: str, mark: str, runs: list[tuple[int, int]]) -> None:
    """Mark the minute runs (inclusive bounds) dirty for the findings evidence worker, one row
    per run under an id of its own (the worker deletes the marks it saw: a replayed pass's
    marks must not share an id with one already deleted), with the time it marked them."""
    if runs:
        now = time.time_ns()
        runner.insert(f"{database}.agentsla_evidence_dirty",
                      [{"id": f"{mark}/{uuid.uuid4().hex}", "lo_ns": lo, "hi_ns": hi,
                        "marked_ns": now} for lo, hi in runs])


def _minutes(ends: pa.ChunkedArray) -> set[int]:
    """Return the minutes (unix ns) holding these span ends."""
    return set(pc.unique(pc.multiply(pc.divide(ends, rollups.MINUTE_NS),
                                     rollups.MINUTE_NS)).to_pylist())


def watermark(runner: Any, database: str, shard: Shard) -> int:
    """Return the shard's watermark (unix ns; 0 before its first pass)."""
    rows = runner.arrow(f"select watermark_ns from {database}.agentsla_watermarks final "
                        "where shard = {shard:String}", {"shard": str(shard)}).to_pylist()
    return rows[0]["watermark_ns"] if rows else 0


def _first_end(runner: Any, database: str, table: str, now_ns: int) -> int:
    """Return where a shard's first pass starts: the earliest span end (now if none)."""
    rows = runner.arrow(f"select min(toUnixTimestamp64Nano(Timestamp) + Duration) as first, "
                        f"count() as n from {database}.{table}", {}).to_pylist()
    return rows[0]["first"] if rows and rows[0]["n"] else now_ns


def _replaying(runner: Any, database: str, shard: Shard, mark: int) -> bool:
    """Tell whether an earlier attempt of this pass (same shard and watermark) crashed after
    journaling: it may have written some rows of its late spans and not others."""
    return bool(runner.arrow(
        f"select 1 from {database}.agentsla_rollup_journal where shard = {{shard:String}} "
        "and pass_ns = {mark:Int64} limit 1", {"shard": str(shard), "mark": mark}).num_rows)


def _task_traces(runner: Any, database: str, table: str, shard: Shard, since: int,
                 until: int, mark: int | None, oldest: int
                 ) -> tuple[dict[str, set[str]], dict[str, set[str]],
                            dict[str, tuple[int, int]] | None, list[dict[str, Any]]]:
    """Return task -> trace ids to (re)materialize, the trace-keyed tasks to drop (-> their
    stored traces, to delete), the first and last span starts of the window's traces
    (`_trace_starts`, for `_spans`) and the provisional tasks' keys to record.

    A task belongs to the shard of its task id (`rollups.owns`), and a trace's task is known
    only once resolved, so every trace with a new span in range (`_recent`; with `mark` None,
    a replay, every span in range counts as new) is resolved here (the stored mapping first,
    `links.resolve_task`) and the shard keeps its own tasks, with the traces stored earlier
    under them and its unfinished tasks' traces. A task keyed by a trace id moves whole when
    its trace resolves to another task (`_moving`): its traces go there, and its shard drops
    it.
    """
    params = {"k": shard.index, "n": shard.count, "since": since, "until": until,
              "mark": since if mark is None else mark, "oldest": oldest}
    recent = _recent(runner, database, params)
    unfinished = _unfinished(runner, database, shard)
    provisional = _provisional(runner, database, oldest)
    # this shard's trace-keyed tasks in progress: another shard's task may have taken them
    keyed = {r["task_id"] for r in unfinished
             if r["task_id"] == r["trace_id"] or r["task_id"] in provisional} - set(recent)
    starts = _trace_starts(runner, database, table, sorted(recent))
    linked = {r.linked for r in recent.values() if r.linked} - set(recent)
    stored = _stored_tasks(runner, database, sorted(
        {*_maybe_judged(recent, starts, since), *keyed, *linked, *(provisional & set(recent))}))
    declared = {t: r.declared for t, r in recent.items() if r.declared}
    linked_to = {t: r.linked for t, r in recent.items() if r.linked}
    task_of = {t: resolve_task(t, stored, declared, linked_to, recent.keys()) for t in recent}
    task_of.update({t: stored[t] for t in keyed if stored.get(t, t) != t})
    owned = _owned(runner, shard, {*task_of, *task_of.values()})
    tasks: dict[str, set[str]] = defaultdict(set)
    for trace, task in task_of.items():
        if task in owned:
            tasks[task].add(trace)
    moving = _moving(task_of, stored, provisional)
    # our trace-keyed tasks to drop: one moving to a task of ours (written by this pass), or
    # one another shard's task took, once its span facts say so (written last, after its
    # hop_spans: our re-aggregation then no longer finds the spans in our share)
    dropped: dict[str, set[str]] = {t: set() for t in moving
                                    if t in owned and task_of[t] in owned}
    taken = _taken(task_of, stored, owned)
    joining = {t for t in moving if task_of[t] in owned}
    for row in [*unfinished, *_stored_traces(runner, database, {*tasks, *taken, *joining})]:
        task, trace = row["task_id"], row["trace_id"]
        if task in taken:  # still there: drop it
            dropped.setdefault(task, set()).add(trace)
            continue
        if task in moving:  # its traces go where its trace goes
            if task in dropped:
                dropped[task].add(trace)
            task = task_of[task]
            if task not in owned:  # another shard's: it takes them, we leave them alone
                continue
        if trace not in task_of:
            tasks[task].add(trace)
    return tasks, dropped, starts, _provisional_keys(task_of, recent, stored, owned)


def _moving(task_of: dict[str, str], stored: dict[str, str], provisional: set[str]) -> set[str]:
    """Return the tasks keyed by a trace id whose trace resolves to another task in this pass:
    the trace was stored under its own id (other traces may have joined it by a link since),
    or is new and keys a provisional task (consumers' traces came first)."""
    return {t for t, task in task_of.items() if task != t and (
        stored.get(t) == t or (t not in stored and t in provisional))}


def _taken(task_of: dict[str, str], stored: dict[str, str], owned: set[str]) -> set[str]:
    """Return our tasks keyed by a trace id that another shard's pass already moved whole, as
    the trace's span facts say (written with its other traces'): to the task the trace
    resolves to, not ours, or to a provisional task that moves on now. A trace stored and
    resolved to a task of ours left nothing: the pass that moved it dropped its task."""
    return {t for t, task in task_of.items() if t in owned and task != t
            and stored.get(t) not in (None, t) and (task not in owned or stored[t] != task)}


def _provisional_keys(task_of: dict[str, str], recent: dict[str, _Recent],
                      stored: dict[str, str], owned: set[str]) -> list[dict[str, Any]]:
    """Return the rows of `agentsla_provisional_tasks` for our tasks keyed by a trace neither
    in the pass nor stored, that a trace of the pass joined by its link: one per such trace,
    at its entry's start."""
    return [{"start_ns": recent[t].entry_ns, "task_id": task} for t, task in task_of.items()
            if task in owned and t in recent and recent[t].linked == task
            and task not in stored and task not in recent]


def _stored_traces(runner: Any, database: str, tasks: set[str]) -> list[dict[str, str]]:
    """Return the (task_id, trace_id) stored for these tasks (`agentsla_task_traces`)."""
    return [row for chunk in id_chunks(sorted(tasks)) for row in runner.arrow(
        f"select task_id, trace_id from {database}.agentsla_task_traces final where task_id "
        f"in {{tasks:Array(String)}}", {"tasks": chunk}).to_pylist()]


def _provisional(runner: Any, database: str, oldest: int) -> set[str]:
    """Return the keys of provisional tasks a trace of this pass may arrive for: those whose
    consumer's entry started since the pass's oldest span. A pass finds a trace new only by a
    span started since then, and the linked trace's root started before the entry it caused
    (a trace seen before, stored under its own id, needs no key: `_moving`)."""
    return {r["task_id"] for r in runner.arrow(
        f"select distinct task_id from {database}.agentsla_provisional_tasks "
        "where start_ns >= {oldest:Int64}", {"oldest": oldest}).to_pylist()}


def _maybe_judged(recent: dict[str, _Recent],
                  starts: dict[str, tuple[int, int]] | None, since: int) -> list[str]:
    """Return the window's traces that a pass may have judged before, whose stored task the
    span facts tell: all but those with no `hop_spans` row in the window (`_recent`'s `seen`)
    whose spans all started in it (the trace-id lookup). Such a trace was never judged: a pass
    writes a `hop_spans` row for every span of its traces, and each of its spans ends in the
    window. Most traces of a pass are new, and each facts lookup reads a granule (0.58 s of
    CPU a 5 s pass at 100M spans, docs/scale-out.md)."""
    return [t for t, r in recent.items()
            if r.seen or starts is None or t not in starts or starts[t][0] * NS < since]


def _unfinished(runner: Any, database: str, shard: Shard) -> list[dict[str, str]]:
    """Return the (task_id, trace_id) of the shard's tasks in progress: as its last pass left
    them (every pass judges them all again, so its list is complete); before a first pass
    (an upgraded store, a new shard count), from a scan of every stored task."""
    listed = runner.arrow(f"select tasks from {database}.agentsla_unfinished_tasks final "
                          "where shard = {shard:String}", {"shard": str(shard)}).to_pylist()
    if listed:  # named tuples: {"task_id": ..., "trace_id": ...}
        return listed[0]["tasks"]
    return runner.arrow(
        f"select task_id, trace_id from {database}.agentsla_task_traces final where task_id "
        f"in (select task_id from {database}.agentsla_tasks final where not finished and "
        f"{rollups.owns('task_id')})", {"k": shard.index, "n": shard.count}).to_pylist()


def _stored_tasks(runner: Any, database: str, traces: list[str]) -> dict[str, str]:
    """Return trace -> the task its span facts hold it under (another task over its own id).

    Read without FINAL: a trace's task moves from its own id to another task once, or with a
    provisional task (keyed by the trace it followed a link to) to where that goes, each move
    at a later pass's version, so the newest version naming another task than its own id names
    the current one. FINAL made this lookup of random ids 3-8x dearer (0.52-0.56 against
    0.06-0.17 s of CPU for 728 traces at 10M spans; docs/scale-out.md, Measured).
    """
    return {r["trace_id"]: r["task_id"] for chunk in id_chunks(traces) for r in runner.arrow(
        f"select trace_id, argMax(task_id, (task_id != trace_id, version)) as task_id from "
        f"{database}.agentsla_span_facts where trace_id in {{traces:Array(String)}} "
        f"group by trace_id", {"traces": chunk}).to_pylist()}


def _owned(runner: Any, shard: Shard, task_ids: set[str]) -> set[str]:
    """Return the task ids of `task_ids` that the shard owns (ClickHouse's cityHash64)."""
    if shard.count == 1:
        return task_ids
    return {r["id"] for r in runner.arrow(
        f"select id from (select arrayJoin({{ids:Array(String)}}) as id) where "
        f"{rollups.owns('id')}", {"ids": sorted(task_ids), "k": shard.index,
                                  "n": shard.count}).to_pylist()}


#: The columns of `agentsla_typed_spans` that `followed_link` reads, and the start.
_ENTRY_COLUMNS = ("start_ns", "span_id", "trace_id", "span_kind", "parent_span_id", "links")
#: A trace's CONSUMER spans with links (a superset of the entries that follow one), as tuples
#: of those columns: SQL over agentsla_traces aliased t, aggregated by trace.
_ENTRIES_SQL = (
    f"groupArrayIf(tuple({', '.join(map(schema.span_column_sql, _ENTRY_COLUMNS))}), "
    f"notEmpty(t.`Links.TraceId`) and {schema.span_column_sql('span_kind')} = 'consumer')")


class _Recent(NamedTuple):
    """A trace with a new span in the pass's range (`_recent`)."""

    declared: str  # its first task.id among its spans in range ('' if none)
    seen: bool  # whether any shard wrote a `hop_spans` row of it in range
    linked: str | None  # the trace its entry follows a link to, if it declares no task.id
    entry_ns: int | None  # that entry's start


def _recent(runner: Any, database: str, params: dict) -> dict[str, _Recent]:
    """Return the traces (every shard's) with a new span in range: one ending at or after the
    watermark {mark}, or a late one ending before it that this shard has not judged (no
    `hop_spans` row under a task of its own). Over agentsla_traces: string attributes
    whichever the table's variant. Its consumer spans with links, read in the same scan,
    are the candidates of `_followed`.

    Without the second condition a pass would judge again every task with a span in its late
    window: at a 5 s interval and a 5 min late window, each task some 60 times. The spans
    read are those that started since {oldest} (`longest_span` before the late window): the
    table is sorted by start (within service and span name), and a range on the end alone
    would read every span stored (100M spans: half of them at mid-day, 1 s of CPU a pass).
    """
    end = "toUnixTimestamp64Nano(t.Timestamp) + t.Duration"
    rows = runner.arrow(
        f"select TraceId as trace_id, argMinIf(SpanAttributes['task.id'], {end}, "
        f"SpanAttributes['task.id'] != '') as declared, max(TraceId in (select trace_id from "
        f"{database}.agentsla_hop_spans where end_ns >= {{since:Int64}} and end_ns < "
        f"{{until:Int64}})) as seen, {_ENTRIES_SQL} as entries from "
        f"{database}.agentsla_traces as t"
        f" where {end} >= {{since:Int64}} and {end} < {{until:Int64}}"
        f" and Timestamp >= fromUnixTimestamp64Nano({{oldest:Int64}})"
        f" and Timestamp < fromUnixTimestamp64Nano({{until:Int64}}) group by TraceId"
        f" having max({end}) >= {{mark:Int64}} or countIf({end} < {{mark:Int64}} and "
        f"(TraceId, SpanId) not in (select trace_id, span_id from {database}.agentsla_hop_spans"
        f" where end_ns >= {{since:Int64}} and end_ns < {{mark:Int64}} and "
        f"{rollups.owns('task_id')})) > 0",
        params).to_pylist()
    return {r["trace_id"]: _Recent(r["declared"], bool(r["seen"]), *_followed(
        r["declared"], [dict(zip(_ENTRY_COLUMNS, e.values())) for e in r["entries"]]))
        for r in rows}


def _followed(declared: str, entries: list[dict[str, Any]]) -> tuple[str | None, int | None]:
    """Return the trace a trace's entry follows a link to and the entry's start (None, None if
    none or if the trace declares a task.id), by the rule of collector/tasks/links.py."""
    return (None, None) if declared else (first_followed(entries) or (None, None))


def _spans(runner: Any, database: str, table: str, trace_ids: list[str],
           starts: dict[str, tuple[int, int]] | None = None) -> pa.Table:
    """Every span of those traces as the traces table has them (the facts are what a pass
    decides): the columns materialization reads, and `provider`.

    The traces table is sorted by service, span name and time, so a filter on trace ids alone
    reads nearly all of it; bounded by the traces' start times (`_trace_bounds`), it reads the
    parts and granules of that time range only. `starts`: those already read.
    """
    where, params = "s.trace_id in {traces:Array(String)}", {}
    bounds = _trace_bounds(runner, database, table, trace_ids, starts)
    if bounds is not None:  # on the exporter's Timestamp: a range on start_ns prunes nothing
        where += (" and s.timestamp >= fromUnixTimestamp64Nano({lo:Int64})"
                  " and s.timestamp < fromUnixTimestamp64Nano({hi:Int64})")
        params.update(lo=bounds[0], hi=bounds[1])
    read = (f"select * except (resource, scope, links, timestamp), {schema.PROVIDER_SQL} as "
            f"provider from {database}.agentsla_typed_spans as s where {where}")
    # no traces: one read of none, for the table's columns
    return pa.concat_tables([runner.arrow(read, {**params, "traces": chunk})
                             for chunk in list(id_chunks(trace_ids)) or [[""]]])


def _trace_bounds(runner: Any, database: str, table: str, trace_ids: list[str],
                  known: dict[str, tuple[int, int]] | None = None) -> tuple[int, int] | None:
    """Return [lo, hi) in unix ns holding every span start of those traces (`_trace_starts`,
    but for those `known`); None without the lookup table, or if a trace is missing from it
    (its spans were written before the table existed): then the read is unbounded."""
    if not trace_ids:
        return None
    known = known or {}
    missing = sorted(set(trace_ids) - set(known))
    found = _trace_starts(runner, database, table, missing) if missing else {}
    if found is None:
        return None
    starts = {**known, **found}
    if any(t not in starts for t in trace_ids):
        return None
    # Start and End are whole seconds, floored
    return (min(starts[t][0] for t in trace_ids) * NS,
            (max(starts[t][1] for t in trace_ids) + 1) * NS)


def _trace_starts(runner: Any, database: str, table: str,
                  trace_ids: list[str]) -> dict[str, tuple[int, int]] | None:
    """Return trace -> its first and last span start (unix seconds, floored) for the traces
    the exporter's trace-id lookup `<table>_trace_id_ts` holds (a row per trace and insert);
    None without that table."""
    lookup = f"{table}_trace_id_ts"
    if not runner.arrow(
            "select 1 from system.tables where database = {db:String} and name = {tb:String}",
            {"db": database, "tb": lookup}).num_rows:
        return None
    return {row["trace"]: (row["lo"], row["hi"]) for chunk in id_chunks(trace_ids)
            for row in runner.arrow(
                f"select TraceId as trace, toInt64(toUnixTimestamp(min(Start))) as lo, "
                f"toInt64(toUnixTimestamp(max(End))) as hi from {database}.{lookup} "
                "where TraceId in {traces:Array(String)} group by TraceId",
                {"traces": chunk}).to_pylist()}


def _group(spans: list[dict[str, Any]], task_traces: dict[str, set[str]]) -> dict[str, list]:
    task_of = {trace: task for task, traces in task_traces.items() for trace in traces}
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        span["task_id"] = task = task_of[span["trace_id"]]
        _add_reason(span)
        by_task[task].append(span)
    return by_task


#: What a pass writes per span: its facts (the spans view joins them), its hop_spans row and
#: its finding_spans row.
_FACT_COLUMNS = ("trace_id", "span_id", "task_id", "error_type", "is_error", "call_id",
                 "attempt", "version")
_HOP_COLUMNS = (*schema.HOP_SPAN_COLUMNS, "version")
_FINDING_COLUMNS = (*schema.FINDING_SPAN_COLUMNS, "version")


def _judged(spans: pa.Table, rows: list[dict[str, Any]], calls: dict, version: int) -> pa.Table:
    """The spans as read, with what materialization decided per span (columns set-wise)."""
    call = [calls.get((r["trace_id"], r["span_id"])) or (None, None) for r in rows]
    decided = {
        "task_id": pa.array([r["task_id"] for r in rows], pa.string()),
        "error_type": pa.array([r["error_type"] for r in rows], pa.string()),
        "is_error": pa.array([r["is_error"] for r in rows], pa.bool_()),
        "call_id": pa.array([c[0] for c in call], pa.string()),
        "attempt": pa.array([c[1] for c in call], pa.int32()),
        "version": pa.array([version] * len(rows), pa.uint64()),
    }
    for name, values in decided.items():
        at = spans.schema.get_field_index(name)
        spans = spans.set_column(at, name, values) if at >= 0 else spans.append_column(
            name, values)
    return spans


def _add_reason(span: dict[str, Any]) -> None:
    """Set error_type and is_error by the normalizer's rules (strings: the Map variant)."""
    attrs = orjson.loads(span["attributes"])
    code = _STATUS_CODE.get(span["status_code"], 0)
    events = orjson.loads(span["events"]) or None
    span["error_type"] = _error_type(attrs, code, span["status_message"] or "",
                                     span["http_status"], events)
    span["is_error"] = code == 2 or span["error_type"] is not None
