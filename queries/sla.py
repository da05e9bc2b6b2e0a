"""SLA metrics over tasks: outcome counts and rates, gateway success, latency, budget use.

A finished task belongs to the window holding its end (`end_ns`; for a lost task, the moment
it was declared lost). A task still in progress belongs to the window holding its start.
Success, degraded (the fallback rate), failed, budget_exhausted, rejected and lost partition the
finished tasks; cancelled tasks are counted but left out of every denominator.

Every function returns rows with these columns (plus the group column):
  finished            finished tasks, cancelled excluded (the denominator of the rates)
  success, degraded, failed, budget_exhausted, rejected, lost   counts (sum to `finished`)
  <outcome>_rate      count / finished; null when nothing finished
  cancelled           finished tasks that were cancelled (in no denominator)
  in_progress         tasks started in the window and not finished
  gateway_answered    finished tasks (cancelled, lost excluded) whose root answered
  gateway_ok          of those, roots that were not ERROR, HTTP < 500 and not 429
  gateway_success_rate  gateway_ok / gateway_answered
  latency_p50_ms, latency_p95_ms, latency_p99_ms   task duration (linear interpolation) over
                      finished tasks whose root ended (cancelled and lost excluded), from
                      exponential histograms: within 1.1 % (docs/rollups.md)
  budget_used_p50, budget_used_p95   duration / budget over the same tasks that have a budget

Whole minutes are read from the rollups, the window's edges from `tasks`; `raw=True` asks the
same question over `tasks` only (the rollup check).
"""

from __future__ import annotations

from agentsla.queries._sql import check_dimension, task_filters
from agentsla.queries.rollup import split, split_series
from agentsla.queries.store import ReadStore
from agentsla.queries.window import rfc3339

RATED_OUTCOMES = ("success", "degraded", "failed", "budget_exhausted", "rejected", "lost")


def _finish(row: dict) -> dict:
    """Fill zeros for empty groups and derive the rates (null when nothing finished)."""
    out = {"grp": row["grp"]}
    for key in ("finished", *RATED_OUTCOMES, "cancelled", "in_progress", "gateway_answered",
                "gateway_ok"):
        out[key] = row.get(key) or 0
    for outcome in RATED_OUTCOMES:
        out[f"{outcome}_rate"] = out[outcome] / out["finished"] if out["finished"] else None
    out["gateway_success_rate"] = (out["gateway_ok"] / out["gateway_answered"]
                                   if out["gateway_answered"] else None)
    for key in ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "budget_used_p50",
                "budget_used_p95"):
        out[key] = row.get(key)
    return out


def sla_totals(store: ReadStore, start_ns: int, end_ns: int, task_type: str | None = None,
               tenant_id: str | None = None, service_name: str | None = None,
               raw: bool = False) -> dict:
    """Answer: how did the tasks of the window fare, all together? One row (see module doc)."""
    (row,) = store.rows("sla_totals", {**split(start_ns, end_ns, raw),
                                       **task_filters(task_type, tenant_id, service_name)})
    row = _finish(row)
    row.pop("grp")
    return row


def sla_by(store: ReadStore, start_ns: int, end_ns: int, dimension: str,
           task_type: str | None = None, tenant_id: str | None = None,
           service_name: str | None = None, raw: bool = False) -> list[dict]:
    """Answer: how did the tasks fare per task_type, tenant_id, service_name or agent?

    Rows: the dimension's column (null for tasks without it) plus the module's columns, the
    busiest group first.
    """
    column = check_dimension(dimension)
    rows = store.rows("sla_by", {**split(start_ns, end_ns, raw),
                                 **task_filters(task_type, tenant_id, service_name)},
                      dimension=column)
    return [{column: row.pop("grp"), **row} for row in map(_finish, rows)]


def sla_series(store: ReadStore, start_ns: int, end_ns: int, step_ns: int,
               task_type: str | None = None, tenant_id: str | None = None,
               service_name: str | None = None, raw: bool = False) -> list[dict]:
    """Answer: how did the rates move over time, bucket by bucket of `step_ns`?

    Rows, oldest first, one per bucket (empty buckets included): bucket_ns (bucket start),
    bucket (RFC 3339) plus the module's columns. Finished tasks fall in the bucket holding
    their end, tasks in progress in the bucket holding their start.
    """
    rows = store.rows("sla_series", {**split_series(start_ns, end_ns, step_ns, raw),
                                     "step_ns": step_ns,
                                     **task_filters(task_type, tenant_id, service_name)})
    out = []
    for row in map(_finish, rows):
        grp = row.pop("grp")
        out.append({"bucket_ns": grp, "bucket": rfc3339(grp), **row})
    return out
