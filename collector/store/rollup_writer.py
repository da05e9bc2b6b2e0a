"""RollupWriter: keeps the rollups current from inside the writer's transaction (docs/rollups.md).

Tasks change as spans arrive (re-materialization, the lost sweep, a trace moving to its declared
task), so the writer hands every replaced row to `replace_tasks`: the old row's contribution is
subtracted and the new one's added, in the same transaction. Spans are immutable except their
logical call numbers, which `calls_changed` corrects. A transaction's deltas are summed in Arrow
and appended to `rollup_pending` in one insert at `flush` (readers' views add them); every
MERGE_EVERY flushes the pending deltas are summed into the stored tiers, one row per minute and
key, as ClickHouse's SummingMergeTree does on merge.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from agentsla.collector.store.rollups import (
    BY_TABLE, HOUR_NS, PENDING, ROLLUPS, SPAN_COLUMNS_USED, SPAN_ROLLUPS, STORED,
    TASK_COLUMNS_USED, TASK_ROLLUPS, Rollup, insert, merge_range, pending_rows, signed_rows)

#: Flushed transactions between merges of the pending deltas into the stored tiers.
MERGE_EVERY = 50


def _ids_literal(ids: list[str]) -> str:
    # Literal IN lists probe task_store's primary-key index (writer._point_lookup's reason).
    return ", ".join("'" + i.replace("'", "''") + "'" for i in ids)


class RollupWriter:
    """Keeps the rollups current from inside the writer's transaction (one call per change)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, enabled: bool = True,
                 merge_every: int = MERGE_EVERY) -> None:
        self.con = con
        self.enabled = enabled
        self.merge_every = merge_every
        self._flushes = 0
        self._deltas: list[pa.Table] = []

    def replace_tasks(self, rows: pa.Table | None, replaced: list[str]) -> None:
        """Count new task rows; uncount the stored rows of `replaced` they replace."""
        if not self.enabled or not ((rows is not None and rows.num_rows) or replaced):
            return
        signed = []
        if rows is not None and rows.num_rows:
            signed.append(signed_rows(rows, "task", 1))
        if replaced:
            old = self.con.sql(f"select {', '.join(TASK_COLUMNS_USED)} from task_store "
                               f"where task_id in ({_ids_literal(replaced)})").to_arrow_table()
            signed.append(signed_rows(old, "task", -1))
        self._add(TASK_ROLLUPS, pa.concat_tables(signed))

    def remove_tasks(self, task_ids: list[str]) -> None:
        """Uncount stored tasks about to be deleted (a trace moving to its declared task)."""
        self.replace_tasks(None, task_ids)

    def add_spans(self, spans: pa.Table) -> None:
        """Count newly stored spans."""
        if self.enabled and spans.num_rows:
            self._add(SPAN_ROLLUPS, signed_rows(spans, "span", 1))

    def calls_changed(self, updates: str, lo_ns: int, hi_ns: int) -> None:
        """Correct logical calls and retries of stored spans renumbered by `updates`."""
        if not self.enabled:
            return
        stored = self.con.sql(
            f"select {', '.join(f's.{c}' for c in SPAN_COLUMNS_USED)}, u.call_id as new_call_id, "
            f"u.attempt as new_attempt from span_store s join {updates} u "
            f"on s.trace_id = u.trace_id and s.span_id = u.span_id "
            f"where s.start_ns between {lo_ns} and {hi_ns}").to_arrow_table()
        if not stored.num_rows:
            return
        new = stored
        for column in ("call_id", "attempt"):
            new = new.set_column(new.schema.get_field_index(column), column, new[f"new_{column}"])
        self._add(SPAN_ROLLUPS, pa.concat_tables([signed_rows(stored, "span", -1),
                                                  signed_rows(new, "span", 1)]))

    def flush(self) -> None:
        """Append the transaction's deltas to rollup_pending (call it just before the commit)."""
        if not self._deltas:
            return
        rollup_rows = pa.concat_tables(self._deltas)
        self._deltas = []
        insert(self.con, PENDING, rollup_rows)
        self._flushes += 1
        if self._flushes >= self.merge_every:
            self.merge()

    def discard(self) -> None:
        """Forget the deltas of a transaction rolled back."""
        self._deltas = []

    def merge(self) -> None:
        """Sum the pending deltas into the stored tiers (inside the caller's transaction)."""
        # the ranges come from the table, not memory: deltas left by a crashed process count too
        ranges = self.con.execute(f"select rollup, min(minute_ns), max(minute_ns) from {PENDING} "
                                  f"group by all").fetchall()
        for table, lo, hi in ranges:
            rollup = BY_TABLE.get(table)
            if rollup is not None:
                _merge(self.con, rollup, lo, hi)
        self.con.execute(f"delete from {PENDING}")
        self._flushes = 0

    def delete_before(self, cutoff_ns: int) -> None:
        """Delete rollup minutes before the cutoff (rollup retention, its own clock)."""
        self.merge()
        for rollup in ROLLUPS:
            minutes, hours = rollup.tiers()
            self.con.execute(f"delete from {minutes}{STORED} where minute_ns < ?", [cutoff_ns])
            # an hour is kept while any of its minutes is
            self.con.execute(f"delete from {hours}{STORED} where minute_ns < ?",
                             [cutoff_ns // HOUR_NS * HOUR_NS])

    def _add(self, rollups: tuple[Rollup, ...], signed: pa.Table) -> None:
        for rollup in rollups:
            minutes = rollup.deltas(signed)
            if minutes.num_rows:
                self._deltas.append(pending_rows(rollup, minutes))


def _merge(con: duckdb.DuckDBPyConnection, rollup: Rollup, lo: int, hi: int) -> None:
    minutes, hours = rollup.tiers()
    merge_range(con, rollup, minutes, lo, hi)
    merge_range(con, rollup, hours, lo // HOUR_NS * HOUR_NS, hi)
