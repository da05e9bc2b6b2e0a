"""TaskWriter: the only code that writes spans and tasks, one transaction per batch.

Each batch: resolve every span's task (task.id of its trace, else the task of the trace a
queue consumer's entry links to, else the trace id: docs/tasks.md), drop spans the
task already holds (exporter retries), append the new spans as one Arrow table, and
re-materialize every task the batch changed (one that gained spans or a trace), all in one
transaction, so that tasks are always consistent with spans, even after a crash. A large task
still in progress is materialized again only as it grows (`_materialize_now`; docs/tasks.md).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import AbstractSet, Any, Iterable, Iterator

import duckdb
import pyarrow as pa

from agentsla.collector.store.evidence import mark_changed
from agentsla.collector.store.database import insert_arrow
from agentsla.collector.store.rollups import RollupWriter
from agentsla.collector.store.schema import SPAN_ARROW_SCHEMA, TASK_ARROW_SCHEMA
from agentsla.collector.tasks.links import first_followed, resolve_task
from agentsla.collector.tasks.materialize import materialize, span_reach
from agentsla.config import TasksConfig

Row = dict[str, Any]
#: How far past root_grace the sweep looks for SERVER spans still waiting for their parent.
_ROOT_LOOKBACK_NS = 600 * 10**9
#: Unfinished tasks due for re-materialization, and whether each is past its lost deadline.
_DUE_SQL = """
    with recent as (
        -- only recent spans: older tasks get their root from the lost sweep
        select task_id, trace_id, span_id, parent_span_id, span_kind, parent_remote,
               received_ns
        from span_store
        where received_ns > $now - $root_grace_ns - $lookback_ns
    ),
    waited as (
        -- a SERVER span that waited out root_grace for a parent of unknown
        -- remoteness becomes the root (docs/tasks.md, Root)
        select s.task_id
        from recent s
        where s.span_kind = 'server' and s.parent_remote is null
          and s.parent_span_id is not null and s.received_ns <= $now - $root_grace_ns
          and not exists (select 1 from recent p
                          where p.task_id = s.task_id and p.trace_id = s.trace_id
                            and p.span_id = s.parent_span_id)
    ),
    judged as (
        select task_id,
               first_seen_ns + (coalesce(budget_total_ms, $default_ms) * 1e6)::bigint
               + $grace_ns <= $now as lost
        from task_store
        where not finished
    )
    select task_id, lost
    from judged
    where lost or task_id in (select task_id from waited)
"""
#: How much a large task in progress grows before it is materialized again (a tenth).
_LARGE_TASK_GROWTH = 1.1
_LOOKUP_CHUNK = 1000  # ids per IN list: DuckDB probes the index up to index_scan_max_count (2048)


@dataclass
class TaskState:
    """Spans of one task held in memory, keyed by (trace_id, span_id); whether task_store has it."""

    first_seen_ns: int
    spans: dict[tuple[str, str], Row] = field(default_factory=dict)
    stored: bool = True
    finished: bool = False  # as last materialized: finished tasks are evicted first
    #: end_ns of the task's task_store row, as last read or written (None: no row, or no end):
    #: a replaced row's evidence minute moves, and memory saves reading the row again.
    stored_end_ns: int | None = None
    #: spans and time (ns) at the task's last materialization: a large task in progress is
    #: materialized again only once it grew enough or long enough ago (`_materialize_now`)
    materialized_spans: int = 0
    materialized_ns: int = 0
    #: the task_store row as this writer last wrote it (None: not written since read), which
    #: the rollups uncount from memory when it is replaced or deleted, instead of reading it
    written: Row | None = None


@dataclass(frozen=True)
class StoredTask:
    """What task_store says of a task: when it was first seen, where its spans can start."""

    first_seen_ns: int | None
    start_ns: int | None
    end_ns: int | None
    span_count: int | None


@dataclass
class Probed:
    """What the database said of the tasks it was asked about: the stored ones' rows."""

    asked: set[str]
    stored: dict[str, StoredTask] = field(default_factory=dict)


@dataclass
class WriteResult:
    """What one write stored: new spans, dropped duplicates, tasks it changed (a large task in
    progress may wait to be materialized: `_materialize_now`)."""

    accepted: int = 0
    duplicates: int = 0
    tasks: int = 0


class TaskCache:
    """Recently touched tasks, least recently used evicted first, bounded in spans."""

    def __init__(self, max_spans: int) -> None:
        self.max_spans = max_spans
        self.span_count = 0
        self._tasks: OrderedDict[str, TaskState] = OrderedDict()

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._tasks

    def get(self, task_id: str) -> TaskState | None:
        """Return a task's state and mark it recently used."""
        state = self._tasks.get(task_id)
        if state is not None:
            self._tasks.move_to_end(task_id)
        return state

    def put(self, task_id: str, state: TaskState) -> None:
        """Insert or replace a task's state."""
        old = self._tasks.pop(task_id, None)
        if old is not None:
            self.span_count -= len(old.spans)
        self._tasks[task_id] = state
        self.span_count += len(state.spans)

    def pop(self, task_id: str) -> TaskState | None:
        """Remove a task's state."""
        state = self._tasks.pop(task_id, None)
        if state is not None:
            self.span_count -= len(state.spans)
        return state

    def grew(self, added: int) -> None:
        """Account for spans added to a cached state in place."""
        self.span_count += added

    def evict(self, keep: Iterable[str] = ()) -> None:
        """Drop tasks until within the span bound: finished ones first, least recently used first.

        Unfinished tasks are the ones still receiving spans; a task evicted and then extended is
        read back from DuckDB, a scan of span_store.
        """
        if self.span_count <= self.max_spans:  # the usual case: no copy of the task list
            return
        keep = set(keep)
        for finished_only in (True, False):
            for task_id in list(self._tasks):
                if self.span_count <= self.max_spans:
                    return
                if task_id not in keep and (self._tasks[task_id].finished or not finished_only):
                    self.pop(task_id)


class TaskWriter:
    """Writes span batches and keeps the `tasks` table current, in one transaction per batch."""

    def __init__(self, con: duckdb.DuckDBPyConnection, config: TasksConfig,
                 rollups: bool = True) -> None:
        self.con = con
        self.config = config
        self.rollups = RollupWriter(con, enabled=rollups,  # off only to measure their cost
                                    merge_rows=config.rollup_merge_rows)
        self.cache = TaskCache(config.task_cache_spans)
        self._trace_task: OrderedDict[str, str] = OrderedDict()

    def write(self, rows: list[Row], now_ns: int | None = None) -> WriteResult:
        """Store a batch of normalized span rows and re-materialize the tasks they touch."""
        now_ns = now_ns or time.time_ns()
        self.con.execute("begin transaction")
        try:
            result = self._write(rows, now_ns)
            self.rollups.flush()  # the batch's new rollup rows, in one insert
            self.con.execute("commit")
        except BaseException:
            self.rollups.discard()
            self.con.execute("rollback")
            self.forget_memory()
            raise
        return result

    def sweep_lost(self, now_ns: int | None = None) -> int:
        """Re-materialize unfinished tasks whose lost deadline or root grace passed.

        Returns how many were past their lost deadline (the others found their root).
        """
        now_ns = now_ns or time.time_ns()
        found = self.con.execute(
            _DUE_SQL,
            {"default_ms": self.config.default_budget * 1000.0,
             "grace_ns": int(self.config.lost_grace * 1e9), "now": now_ns,
             "root_grace_ns": int(self.config.root_grace * 1e9),
             "lookback_ns": _ROOT_LOOKBACK_NS},
        ).fetchall()
        due = [task_id for task_id, _ in found]
        if not due:
            return 0
        self.con.execute("begin transaction")
        try:
            states = self._load_tasks(due)
            self._upsert_tasks({t: states[t] for t in due if t in states}, now_ns)
            self.rollups.flush()
            self.con.execute("commit")
        except BaseException:
            self.rollups.discard()
            self.con.execute("rollback")
            self.forget_memory()
            raise
        return sum(1 for _, lost in found if lost)

    def delete_before(self, cutoff_ns: int) -> int:
        """Delete finished tasks that ended before the cutoff, with their spans; return count."""
        self.con.execute("begin transaction")
        try:
            old = [r[0] for r in self.con.execute(
                "select task_id from task_store where finished and end_ns < ?", [cutoff_ns]
            ).fetchall()]
            if old:
                with self._registered("old_tasks", _ids_table(old)):
                    for table in ("span_store", "trace_task", "task_store"):
                        self.con.execute(
                            f"delete from {table} where task_id in (select id from old_tasks)")
            # rollups keep their own, longer clock: cutoff_ns is now - retention
            self.rollups.delete_before(
                cutoff_ns + int((self.config.retention - self.config.rollup_retention) * 1e9))
            self.con.execute("commit")
        except BaseException:
            self.con.execute("rollback")
            raise
        for task_id in old:
            self.cache.pop(task_id)
        if old:  # forget the deleted traces only: the rest of memory still matches the database
            gone = set(old)
            self._trace_task = OrderedDict(
                (trace, task) for trace, task in self._trace_task.items() if task not in gone)
        return len(old)

    # -- one batch ---------------------------------------------------------------------------

    def _write(self, rows: list[Row], now_ns: int) -> WriteResult:
        task_of_trace, rekeys, probed = self._resolve_tasks(rows)
        self._apply_rekeys(rekeys, now_ns, probed)
        by_task: dict[str, list[Row]] = {}
        for row in rows:
            row["task_id"] = task_of_trace[row["trace_id"]]
            by_task.setdefault(row["task_id"], []).append(row)
        states = self._load_tasks(list(by_task), now_ns, probed)
        new_rows = self._add_new_spans(by_task, states)
        self._record_traces(task_of_trace)
        # Only tasks the batch changed: a retried request's tasks are already current (what
        # time alone changes, the lost deadline and root grace, is the sweep's).
        rooted = {r["task_id"] for r in new_rows if _may_be_root(r)}
        rooted |= {new for _, new in rekeys.values()}
        changed = {r["task_id"] for r in new_rows} | rooted
        # Materialize before the insert: it numbers the new spans' logical calls and attempts
        # (a large task's spans left for later are numbered then: _update_calls).
        self._upsert_tasks({t: s for t, s in states.items()
                            if t in changed and self._materialize_now(s, t in rooted, now_ns)},
                           now_ns, unsaved={(r["trace_id"], r["span_id"]) for r in new_rows})
        if new_rows:
            spans = _arrow_table(new_rows, SPAN_ARROW_SCHEMA)
            self._insert("span_store", spans)
            self.rollups.add_spans(spans)
        self.cache.evict(keep=states)
        return WriteResult(len(new_rows), len(rows) - len(new_rows), len(changed))

    def _materialize_now(self, state: TaskState, rooted: bool, now_ns: int) -> bool:
        """Whether a task the batch changed is materialized in this batch.

        Materializing reads every span of the task, so a long agent run materialized at each
        of its batches costs time growing with its length each time (20,000 spans: 0.3 s of
        CPU a batch). A task in progress beyond `large_task_spans` waits until it grew by a
        tenth (total work linear in its spans) or `large_task_refresh` passed; never a task
        new to the store, finished, or given a span that may be its root.
        """
        spans = len(state.spans)
        if (rooted or state.finished or not state.stored
                or spans <= self.config.large_task_spans):
            return True
        return (spans >= state.materialized_spans * _LARGE_TASK_GROWTH
                or now_ns - state.materialized_ns >= self.config.large_task_refresh * 1e9)

    def _resolve_tasks(self, rows: list[Row]) -> tuple[dict[str, str], dict[str, tuple[str, str]],
                                                       Probed]:
        """Map each trace in the batch to its task; list traces whose task id changes.

        A trace that declares no task.id and whose entry follows a link (a queue consumer's
        own trace: collector/tasks/links.py) claims the linked trace's task; a linked trace
        not stored yet is mapped to its own id, a provisional task it joins when it arrives.
        Also returns what the database said of the tasks it was asked about, for `_load_tasks`.
        """
        declared: dict[str, str] = {}
        tops: dict[str, list[Row]] = {}  # trace -> its spans without a parent
        for row in rows:
            trace_id = row["trace_id"]
            if row["task_id"]:
                declared.setdefault(trace_id, row["task_id"])
            elif row["parent_span_id"] is None:
                tops.setdefault(trace_id, []).append(row)
        traces = {row["trace_id"] for row in rows}
        linked = {t: entry[0] for t, spans in tops.items()
                  if t not in declared and (entry := first_followed(spans))}
        wanted = traces | set(linked.values())
        known = {t: self._trace_task[t] for t in wanted if t in self._trace_task}
        missing = [t for t in wanted if t not in known]
        # The tasks the batch most likely goes to are asked in the same statement as the traces
        # memory does not hold: a batch of new traces costs one lookup, not two.
        likely = {resolve_task(t, known, declared, linked, traces) for t in traces}
        found, probed = self._probe(missing, [t for t in likely if t not in self.cache])
        known.update(found)
        self._trace_task.update(found)  # memory holds stored mappings only
        mapping = {t: resolve_task(t, known, declared, linked, traces) for t in traces}
        # a trace stored under another task moves (its provisional task, whole: _apply_rekeys)
        rekeys = {t: (known[t], task) for t, task in mapping.items()
                  if t in known and known[t] != task}
        # a linked trace neither stored nor in the batch whose task a trace joined: stored
        # under its own id, so that it finds that provisional task when it arrives (and moves
        # it, should it claim another)
        awaited = set(linked.values()) - traces - set(known)
        mapping.update({task: task for task in mapping.values() if task in awaited})
        return mapping, rekeys, probed

    def _probe(self, traces: list[str], tasks: list[str]) -> tuple[dict[str, str], Probed]:
        """Return the stored task of each trace among traces, and which of tasks are stored.

        One statement per chunk probes both primary-key indexes: literal IN lists let DuckDB
        probe the ART index (constant time per id, whatever the table's size), where a join
        against a registered table scans the whole table.
        """
        found: dict[str, str] = {}
        probed = Probed(set(tasks))
        for first in range(0, max(len(traces), len(tasks)), _LOOKUP_CHUNK):
            trace_chunk = traces[first:first + _LOOKUP_CHUNK]
            task_chunk = tasks[first:first + _LOOKUP_CHUNK]
            parts = []
            if trace_chunk:
                parts.append("select trace_id, task_id, null::bigint, null::bigint, null::bigint, "
                             f"null::integer from trace_task where trace_id in ({_marks(trace_chunk)})")
            if task_chunk:
                parts.append("select null, task_id, first_seen_ns, start_ns, end_ns, span_count "
                             f"from task_store where task_id in ({_marks(task_chunk)})")
            for trace_id, task_id, *task in self.con.execute(
                    " union all ".join(parts), trace_chunk + task_chunk).fetchall():
                if trace_id is None:
                    probed.stored[task_id] = StoredTask(*task)
                else:
                    found[trace_id] = task_id
        return found, probed

    def _apply_rekeys(self, rekeys: dict[str, tuple[str, str]], now_ns: int,
                      probed: Probed) -> None:
        """Move provisional tasks (keyed by a trace's id) to the task their trace now claims.

        A trace whose children were exported before its root (the usual order: a batch span
        processor exports spans as they end) is rekeyed once, when the root brings task.id. Its
        provisional task may hold other traces, consumers that followed a link to it
        (collector/tasks/links.py): the task moves whole. A batch's rekeys take a few
        statements together, whatever their number.
        """
        if not rekeys:
            return
        # each provisional task once (its own trace and the traces that joined it move with it)
        news = {old: new for old, new in rekeys.values()}
        olds = list(news)
        old_states = self._load_tasks(olds, now_ns)
        for old in olds:
            self.cache.pop(old)
        # every trace of each provisional task: its own and those its spans came in
        trace_of = {trace: old for old in olds for trace, _ in old_states[old].spans}
        trace_of.update((old, old) for old in olds)
        task_moves = pa.table({"old_task": pa.array(olds, pa.string()),
                               "new_task": pa.array(list(news.values()), pa.string())})
        trace_moves = pa.table({
            "trace_id": pa.array(list(trace_of), pa.string()),
            "new_task": pa.array([news[old] for old in trace_of.values()], pa.string())})
        with self._registered("task_moves", task_moves), \
                self._registered("trace_moves", trace_moves):
            self._move_spans(old_states)
            self.rollups.remove_tasks(*_remembered(old_states))
            mark_changed(self.con, (), _stored_ends(old_states.values()))
            for chunk in _chunks(olds):
                self.con.execute(f"delete from task_store where task_id in ({_marks(chunk)})",
                                 chunk)
            for chunk in _chunks(list(trace_of)):  # the IN list probes the primary key
                self.con.execute("update trace_task set task_id = m.new_task from trace_moves m "
                                 "where trace_task.trace_id = m.trace_id and trace_task.trace_id "
                                 f"in ({_marks(chunk)})", chunk)
        probed.asked.difference_update(olds)  # deleted since the probe
        targets = self._load_tasks(list(dict.fromkeys(news.values())), now_ns, probed)
        for trace_id, old in trace_of.items():
            self._trace_task[trace_id] = news[old]
        for old, new in news.items():
            source, target = old_states[old], targets[new]  # the target is in the cache
            target.first_seen_ns = min(target.first_seen_ns, source.first_seen_ns)
            before = len(target.spans)
            for key, row in source.spans.items():
                row["task_id"] = new  # the provisional task's state is gone: no copy needed
                target.spans.setdefault(key, row)
            self.cache.grew(len(target.spans) - before)

    def _move_spans(self, old_states: dict[str, TaskState]) -> None:
        """Store the provisional tasks' spans under their new task ids (the registered
        task_moves: each old task and its new one)."""
        update = ("update span_store set task_id = m.new_task from task_moves m "
                  "where span_store.task_id = m.old_task")
        stored = [state for state in old_states.values() if state.stored]
        if not stored:  # no span stored under them yet
            return
        starts = [row["start_ns"] for state in stored for row in state.spans.values()]
        if starts and None not in starts and all(state.spans for state in stored):
            # Memory holds every stored span of a task: their start range is a constant filter
            # DuckDB checks against its zone maps, as in _update_calls, not a whole-table scan.
            self.con.execute(update + " and span_store.start_ns between $lo and $hi",
                             {"lo": min(starts), "hi": max(starts)})
        else:  # memory does not tell where they are
            self.con.execute(update)

    def _load_tasks(self, task_ids: list[str], now_ns: int | None = None,
                    probed: Probed | None = None) -> dict[str, TaskState]:
        """Return the state of each task: from memory, else from the database, else new.

        The database is asked about the tasks `probed` did not ask it about already.
        """
        states = {t: s for t in task_ids if (s := self.cache.get(t)) is not None}
        missing = [t for t in task_ids if t not in states]
        if missing:
            states.update(self._read_tasks(missing, probed))
        for task_id in task_ids:
            if task_id not in states and now_ns is not None:
                states[task_id] = TaskState(first_seen_ns=now_ns, stored=False)
            if task_id in states:
                self.cache.put(task_id, states[task_id])
        return states

    def _read_tasks(self, task_ids: list[str], probed: Probed | None = None
                    ) -> dict[str, TaskState]:
        asked = probed.asked if probed else set()
        stored = {t: probed.stored[t] for t in task_ids
                  if t in asked and t in probed.stored} if probed else {}
        unasked = [t for t in task_ids if t not in asked]
        if unasked:
            stored.update(self._probe([], unasked)[1].stored)
        states = {t: TaskState(first_seen_ns=task.first_seen_ns, stored_end_ns=task.end_ns)
                  for t, task in stored.items()}
        if states:
            self._read_spans(states, stored)
        return states

    def _read_spans(self, states: dict[str, TaskState], stored: dict[str, StoredTask]) -> None:
        """Read the stored spans of tasks memory does not hold into their states.

        span_store has no index on task_id (appends would pay for it): at 10M spans a scan for
        a task id costs seconds. A task's spans start within its interval give or take
        SPAN_SLACK_NS, so they are read there first, from the row groups DuckDB's zone maps on
        start_ns keep (the same bound as the read side's task lookup); a task with fewer spans
        than its stored span_count has spans elsewhere and is read by the whole scan.
        """
        starts = [task.start_ns for task in stored.values()]
        ends = [task.end_ns for task in stored.values()]
        unread = list(states)
        if None not in starts:
            self._scan_spans(states, unread, *span_reach(starts, ends))
            unread = [t for t in unread if stored[t].span_count is None
                      or len(states[t].spans) < stored[t].span_count]
        if unread:
            self._scan_spans(states, unread)

    def _scan_spans(self, states: dict[str, TaskState], task_ids: list[str],
                    lo: int | None = None, hi: int | None = None) -> None:
        bounds = "" if lo is None else f"start_ns >= {int(lo)} and "
        bounds += "" if hi is None else f"start_ns <= {int(hi)} and "
        with self._registered("lookup_tasks", _ids_table(task_ids)):
            spans = self.con.sql(f"select * from span_store where {bounds}task_id in "
                                 "(select id from lookup_tasks)").to_arrow_table().to_pylist()
        for span in spans:
            states[span["task_id"]].spans[(span["trace_id"], span["span_id"])] = span

    def _add_new_spans(self, by_task: dict[str, list[Row]], states: dict[str, TaskState]) -> list[Row]:
        new_rows: list[Row] = []
        for task_id, task_rows in by_task.items():
            state = states[task_id]
            before = len(state.spans)
            for row in task_rows:
                key = (row["trace_id"], row["span_id"])
                if key not in state.spans:
                    state.spans[key] = row
                    new_rows.append(row)
            self.cache.grew(len(state.spans) - before)
        return new_rows

    def _record_traces(self, task_of_trace: dict[str, str]) -> None:
        """Store the traces new to the database; known ones are stored already (rekeys too)."""
        fresh = [t for t in task_of_trace if t not in self._trace_task]
        if fresh:
            table = pa.table({"trace_id": pa.array(fresh, pa.string()),
                              "task_id": pa.array([task_of_trace[t] for t in fresh], pa.string())})
            # A plain insert: a primary-key upsert costs several times more in DuckDB.
            self._insert("trace_task", table)
        for trace_id, task_id in task_of_trace.items():
            self._trace_task[trace_id] = task_id
            self._trace_task.move_to_end(trace_id)
        while len(self._trace_task) > max(1000, self.config.task_cache_spans // 4):
            self._trace_task.popitem(last=False)

    def _upsert_tasks(self, states: dict[str, TaskState], now_ns: int,
                      unsaved: AbstractSet[tuple[str, str]] = frozenset()) -> None:
        """Materialize the tasks; insert the new ones, replace those task_store holds."""
        new: list[Row] = []
        stored: list[Row] = []
        renumbered: list[Row] = []
        # a stored row that was finished may end outside its spans (a lost deadline)
        ended: list[int] = []
        replaced = _remembered({t: s for t, s in states.items() if s.spans})
        for task_id, state in states.items():
            if state.spans:
                done = materialize(task_id, list(state.spans.values()), self.config, now_ns,
                                   state.first_seen_ns)
                (stored if state.stored else new).append(done.row)
                if done.row["finished"]:
                    ended += _stored_ends((state,))
                renumbered += _set_calls(state.spans, done.calls, unsaved)
                state.stored, state.finished = True, bool(done.row["finished"])
                state.stored_end_ns = done.row["end_ns"]
                state.materialized_spans, state.materialized_ns = len(state.spans), now_ns
                state.written = done.row
        # One Arrow table of the rows, new ones first: the rollups count it, the stores slice it.
        table = _arrow_table(new + stored, TASK_ARROW_SCHEMA)
        self.rollups.replace_tasks(table, *replaced)
        mark_changed(self.con, ((states[r["task_id"]].spans.values(), r) for r in new + stored),
                     ended)
        # A primary-key upsert costs several times a plain insert: only stored tasks need it.
        if new:
            self._insert("task_store", table.slice(0, len(new)))
        if stored:
            self._insert("task_store", table.slice(len(new)), "insert or replace")
        self._update_calls(renumbered)

    def _update_calls(self, spans: list[Row]) -> None:
        """Store the calls and attempts a late span changed on spans already stored (rare)."""
        if not spans:
            return
        self.con.register("call_updates", pa.table({
            "trace_id": pa.array([s["trace_id"] for s in spans], pa.string()),
            "span_id": pa.array([s["span_id"] for s in spans], pa.string()),
            "call_id": pa.array([s["call_id"] for s in spans], pa.string()),
            "attempt": pa.array([s["attempt"] for s in spans], pa.int32())}))
        # The start range is a constant filter DuckDB checks against its zone maps, so the
        # scan skips row groups of other times instead of joining the whole table (random
        # trace ids give no key range): 7 ms instead of 935 ms at 10M spans, measured by
        # bench/late_siblings.py.
        lo, hi = min(s["start_ns"] for s in spans), max(s["start_ns"] for s in spans)
        self.rollups.calls_changed("call_updates", lo, hi)
        self.con.execute(
            "update span_store set call_id = u.call_id, attempt = u.attempt from call_updates u "
            "where span_store.start_ns between $lo and $hi "
            "and span_store.trace_id = u.trace_id and span_store.span_id = u.span_id",
            {"lo": lo, "hi": hi})
        self.con.unregister("call_updates")

    def _insert(self, table: str, arrow_rows: pa.Table, verb: str = "insert") -> None:
        """Insert an Arrow table whose columns are the table's, in its physical order."""
        if verb == "insert":
            insert_arrow(self.con, table, arrow_rows)
            return
        with self._registered("arrow_rows", arrow_rows):  # an upsert needs SQL
            self.con.execute(f"{verb} into {table} select * from arrow_rows")

    @contextmanager
    def _registered(self, name: str, table: pa.Table) -> Iterator[None]:
        """Let the statements inside read `table` as `name`. Registered, not found in a frame
        by a replacement scan, which costs less per statement but crashed `serve`'s writer
        thread in the kill -9 soak (docs/architecture.md, Few statements a batch)."""
        self.con.register(name, table)
        try:
            yield
        finally:
            self.con.unregister(name)

    def forget_memory(self) -> None:
        """Start afresh: after a rollback or an unexpected error, memory may differ from disk."""
        self.cache = TaskCache(self.config.task_cache_spans)
        self._trace_task.clear()


def _remembered(states: dict[str, TaskState]) -> tuple[list[str], pa.Table | None]:
    """Split the stored tasks among `states` into those whose row memory holds (as an Arrow
    table of task_store's columns, None if none) and the ids of the others, to be read."""
    unread = [t for t, s in states.items() if s.stored and s.written is None]
    rows = [s.written for s in states.values() if s.stored and s.written is not None]
    return unread, _arrow_table(rows, TASK_ARROW_SCHEMA) if rows else None


def _stored_ends(states: Iterable[TaskState]) -> list[int]:
    """The ends of these tasks' task_store rows (those stored with one)."""
    return [s.stored_end_ns for s in states if s.stored and s.stored_end_ns is not None]


def _arrow_table(rows: list[Row], schema: pa.Schema) -> pa.Table:
    """Return row dicts as a table of `schema` (a missing key is null).

    Converted as one struct array: pyarrow walks the dicts in C++, where `Table.from_pylist`
    builds a Python list per column (4.0-4.4 against 5.5-6.3 µs a 49-column span row, build
    machine, 2026-12-01).
    """
    struct = pa.array(rows, type=pa.struct(list(schema)))
    return pa.Table.from_batches([pa.RecordBatch.from_struct_array(struct)], schema=schema)


def _ids_table(ids: list[str]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.string())})


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    """Split ids into IN lists short enough for DuckDB to probe the index (_LOOKUP_CHUNK)."""
    for first in range(0, len(ids), _LOOKUP_CHUNK):
        yield ids[first:first + _LOOKUP_CHUNK]


def _marks(ids: list[str]) -> str:
    return ", ".join("?" * len(ids))


def _may_be_root(span: Row) -> bool:
    """Whether a span may be its task's root, which ends the task: one without a parent, or
    whose parent is remote (a SERVER span of unknown remoteness becomes a root only after
    root_grace, by the sweep)."""
    return span["parent_span_id"] is None or span["parent_remote"] is True


def _set_calls(spans: dict[tuple[str, str], Row], calls: dict[tuple[str, str], tuple[str, int]],
               unsaved: AbstractSet[tuple[str, str]]) -> list[Row]:
    """Set each span's call_id and attempt; return the stored spans whose values changed."""
    changed: list[Row] = []
    for key, (call_id, attempt) in calls.items():
        span = spans[key]
        if span.get("call_id") != call_id or span.get("attempt") != attempt:
            span["call_id"], span["attempt"] = call_id, attempt
            if key not in unsaved:
                changed.append(span)
    return changed
