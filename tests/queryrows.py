"""Build task and span rows for read-side tests and insert them straight into the store."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa

from agentsla.collector.store import rollups

from agentsla.collector.store.schema import (SPAN_ARROW_SCHEMA, SPAN_COLUMN_NAMES, TASK_ARROW_SCHEMA,
                                       TASK_COLUMN_NAMES, fill_self_times)

NS = 1_000_000_000
MS = 1_000_000
#: A fixed "now": 2023-11-14T22:13:20Z.
T0 = 1_700_000_000 * NS


def task(task_id: str, outcome: str = "success", end_s: float | None = 10.0,
         duration_ms: float = 1000.0, **overrides) -> dict:
    """A task row ending `end_s` seconds after T0 (None: in progress, started at T0)."""
    finished = outcome != "in_progress"
    end_ns = T0 + int(end_s * NS) if finished else None
    start_ns = (end_ns - int(duration_ms * MS)) if finished else T0 + int((overrides.pop(
        "start_s", 0.0)) * NS)
    row = {name: None for name in TASK_COLUMN_NAMES}
    row.update(task_id=task_id, trace_id=hashlib.md5(task_id.encode()).hexdigest(),
               root_span_id=None if outcome == "lost" else "a" * 16, task_type="chat",
               tenant_id="acme", service_name="gw", start_ns=start_ns, end_ns=end_ns,
               duration_ms=duration_ms if finished else None, outcome=outcome,
               finished=finished, gateway_ok=None if outcome == "lost" else True,
               span_count=1, first_seen_ns=start_ns, updated_ns=end_ns or start_ns)
    row.update(overrides)
    if row["budget_total_ms"] and row["duration_ms"] is not None and "budget_used_ratio" not in overrides:
        row["budget_used_ratio"] = row["duration_ms"] / row["budget_total_ms"]
    return row


def span(span_id: str, parent: str | None, start_ms: float, end_ms: float, task_id: str = "t1",
         hop_kind: str = "agent", hop_name: str | None = None, **overrides) -> dict:
    """A span row of `task_id` running from start_ms to end_ms after T0."""
    row = {name: None for name in SPAN_COLUMN_NAMES}
    row.update(trace_id=overrides.pop("trace_id", "f" * 32), span_id=span_id,
               parent_span_id=parent, task_id=task_id, name=hop_name or hop_kind,
               span_kind="internal", service_name="svc", start_ns=T0 + int(start_ms * MS),
               end_ns=T0 + int(end_ms * MS), duration_ms=float(end_ms - start_ms),
               status_code="unset", hop_kind=hop_kind, hop_name=hop_name or hop_kind,
               is_error=False, attributes=json.dumps({"k": span_id}), resource="{}",
               events="[]", links="[]", received_ns=T0)
    row.update(overrides)
    if row["error_type"] and "is_error" not in overrides:
        row["is_error"] = True
    return row


def insert(con, tasks=(), spans=()) -> None:
    """Insert rows into task_store and span_store, then rebuild the rollups from them.

    Tests only: queries read the views and the rollups, which the writer keeps in step. Task
    rows without `self_times` get them from their spans, as the writer would compute them.
    """
    for table, rows, schema in (("task_store", tasks, TASK_ARROW_SCHEMA),
                                ("span_store", spans, SPAN_ARROW_SCHEMA)):
        if rows:
            data = pa.Table.from_pylist(list(rows), schema=schema)
            con.register("_rows", data)
            con.execute(f"insert into {table} select * from _rows")
            con.unregister("_rows")
    fill_self_times(con)
    rollups.rebuild(con)
