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
                      finished tasks whose root ended (cancelled and lost excluded)
  budget_used_p50, budget_used_p95   duration / budget over the same tasks that have a budget
"""

from __future__ import annotations

from agentsla.queries._sql import TASK_FILTERS, check_dimension, fetch_dicts
from agentsla.queries.window import rfc3339

RATED_OUTCOMES = ("success", "degraded", "failed", "budget_exhausted", "rejected", "lost")

_SLA_SQL = """
with window_tasks as (
    -- a finished task belongs to the window holding its end, one in progress to its start
    select *
    from tasks
    where ((finished and end_ns >= $start_ns and end_ns < $end_ns)
        or (not finished and start_ns >= $start_ns and start_ns < $end_ns)){filters}
),
grouped as (
    select {group_expr} as grp, *
    from window_tasks
),
counted as (
    select
        grp,
        count(*) filter (where finished and outcome <> 'cancelled') as finished,
        {outcome_counts},
        count(*) filter (where finished and outcome = 'cancelled') as cancelled,
        count(*) filter (where not finished) as in_progress,
        count(*) filter (where finished and outcome not in ('cancelled', 'lost')
                         and gateway_ok is not null) as gateway_answered,
        count(*) filter (where finished and outcome not in ('cancelled', 'lost')
                         and gateway_ok) as gateway_ok,
        -- [p50, p95, p99] of task duration, tasks whose root ended
        quantile_cont(duration_ms, [0.5, 0.95, 0.99])
            filter (where finished and outcome not in ('cancelled', 'lost')) as latency,
        quantile_cont(budget_used_ratio, [0.5, 0.95])
            filter (where finished and outcome not in ('cancelled', 'lost')) as budget_used
    from grouped
    group by grp
),
groups as (
    {groups_sql}
)
select groups.grp, counted.* exclude (grp)
from groups
left join counted on counted.grp is not distinct from groups.grp
order by {order}
"""

_OUTCOME_COUNTS = ",\n        ".join(
    f"count(*) filter (where finished and outcome = '{o}') as {o}" for o in RATED_OUTCOMES)


def _run(cur, start_ns: int, end_ns: int, group_expr: str, groups_sql: str, order: str,
         filters: dict, extra: dict | None = None) -> list[dict]:
    sql = _SLA_SQL.format(filters=TASK_FILTERS, group_expr=group_expr, groups_sql=groups_sql,
                          order=order, outcome_counts=_OUTCOME_COUNTS)
    params = {"start_ns": start_ns, "end_ns": end_ns, **filters, **(extra or {})}
    return [_finish(row) for row in fetch_dicts(cur, sql, params)]


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
    latency = row.get("latency") or [None, None, None]
    budget = row.get("budget_used") or [None, None]
    out.update(latency_p50_ms=latency[0], latency_p95_ms=latency[1], latency_p99_ms=latency[2],
               budget_used_p50=budget[0], budget_used_p95=budget[1])
    return out


def sla_totals(cur, start_ns: int, end_ns: int, task_type: str | None = None,
               tenant_id: str | None = None, service_name: str | None = None) -> dict:
    """Answer: how did the tasks of the window fare, all together? One row (see module doc)."""
    filters = {"task_type": task_type, "tenant_id": tenant_id, "service_name": service_name}
    rows = _run(cur, start_ns, end_ns, "1", "select 1 as grp", "grp", filters)
    rows[0].pop("grp")
    return rows[0]


def sla_by(cur, start_ns: int, end_ns: int, dimension: str, task_type: str | None = None,
           tenant_id: str | None = None, service_name: str | None = None) -> list[dict]:
    """Answer: how did the tasks fare per task_type, tenant_id, service_name or agent?

    Rows: the dimension's column (null for tasks without it) plus the module's columns, the
    busiest group first.
    """
    column = check_dimension(dimension)
    filters = {"task_type": task_type, "tenant_id": tenant_id, "service_name": service_name}
    rows = _run(cur, start_ns, end_ns, column, "select distinct grp from counted",
                "counted.finished desc, counted.in_progress desc, groups.grp nulls last",
                filters)
    return [{column: row.pop("grp"), **row} for row in rows]


def sla_series(cur, start_ns: int, end_ns: int, step_ns: int, task_type: str | None = None,
               tenant_id: str | None = None, service_name: str | None = None) -> list[dict]:
    """Answer: how did the rates move over time, bucket by bucket of `step_ns`?

    Rows, oldest first, one per bucket (empty buckets included): bucket_ns (bucket start),
    bucket (RFC 3339) plus the module's columns. Finished tasks fall in the bucket holding
    their end, tasks in progress in the bucket holding their start.
    """
    group_expr = ("$start_ns + ((case when finished then end_ns else start_ns end) - $start_ns)"
                  " // $step_ns * $step_ns")
    groups_sql = "select range as grp from range($start_ns, $end_ns, $step_ns)"
    filters = {"task_type": task_type, "tenant_id": tenant_id, "service_name": service_name}
    rows = _run(cur, start_ns, end_ns, group_expr, groups_sql, "groups.grp", filters,
                {"step_ns": step_ns})
    out = []
    for row in rows:
        grp = row.pop("grp")
        out.append({"bucket_ns": grp, "bucket": rfc3339(grp), **row})
    return out
