"""Root causes: a Pareto of first failing hops over the blamed tasks of a window.

Blamed tasks are finished tasks whose outcome is failed, degraded, budget_exhausted or rejected
(agentsla.contract.BLAMED_OUTCOMES), belonging to the window holding their end. Each is counted
under its first failing hop (ffh_kind, ffh_name, ffh_reason); tasks whose hop could not be
determined fall under nulls.

`seconds_lost` is the summed duration (seconds) of the affected tasks: the wall-clock time users
spent on tasks that then failed or were degraded because of that hop.
"""

from __future__ import annotations

from agentsla.contract import BLAMED_OUTCOMES
from agentsla.queries._sql import TASK_FILTERS, fetch_dicts
from agentsla.queries.window import rfc3339

_BLAMED = "finished and outcome in ({})".format(", ".join(f"'{o}'" for o in BLAMED_OUTCOMES))
_BY_OUTCOME = ",\n        ".join(
    f"count(*) filter (where outcome = '{o}') as {o}" for o in BLAMED_OUTCOMES)

_PARETO_SQL = """
with blamed as (
    -- blamed tasks belonging to the window holding their end
    select *
    from tasks
    where {blamed}
      and end_ns >= $start_ns and end_ns < $end_ns{filters}
),
per_cause as (
    select
        ffh_kind, ffh_name, ffh_reason,
        count(*) as tasks,
        coalesce(sum(duration_ms), 0) / 1000.0 as seconds_lost,
        {by_outcome},
        list(task_id order by end_ns desc, task_id)[1:5] as example_task_ids
    from blamed
    group by ffh_kind, ffh_name, ffh_reason
),
ranked as (
    select *,
        tasks / sum(tasks) over () as share,
        sum(tasks) over (order by tasks desc, seconds_lost desc, ffh_kind, ffh_name, ffh_reason
                         rows unbounded preceding) / sum(tasks) over () as cumulative_share
    from per_cause
)
select *
from ranked
order by tasks desc, seconds_lost desc, ffh_kind, ffh_name, ffh_reason
limit $limit
"""

_SERIES_SQL = """
with blamed as (
    select *
    from tasks
    where {blamed}
      and end_ns >= $start_ns and end_ns < $end_ns{filters}
),
bucketed as (
    select $start_ns + (end_ns - $start_ns) // $step_ns * $step_ns as bucket_ns, *
    from blamed
),
per_cause as (
    select bucket_ns, ffh_kind, ffh_name, ffh_reason, count(*) as tasks,
        coalesce(sum(duration_ms), 0) / 1000.0 as seconds_lost
    from bucketed
    group by bucket_ns, ffh_kind, ffh_name, ffh_reason
)
select *, tasks / sum(tasks) over (partition by bucket_ns) as share
from per_cause
order by bucket_ns, tasks desc, ffh_kind, ffh_name, ffh_reason
"""


def root_causes(cur, start_ns: int, end_ns: int, task_type: str | None = None,
                tenant_id: str | None = None, service_name: str | None = None,
                limit: int = 50) -> list[dict]:
    """Answer: which first failing hops caused the window's failed and degraded tasks?

    Rows, most tasks first (a Pareto): ffh_kind, ffh_name, ffh_reason, tasks, share (of the
    blamed tasks), cumulative_share, seconds_lost, one count per blamed outcome (failed,
    degraded, budget_exhausted, rejected) and example_task_ids (up to 5, newest first).
    """
    sql = _PARETO_SQL.format(blamed=_BLAMED, filters=TASK_FILTERS, by_outcome=_BY_OUTCOME)
    return fetch_dicts(cur, sql, {"start_ns": start_ns, "end_ns": end_ns, "limit": limit,
                                  "task_type": task_type, "tenant_id": tenant_id,
                                  "service_name": service_name})


def root_cause_series(cur, start_ns: int, end_ns: int, step_ns: int,
                      task_type: str | None = None, tenant_id: str | None = None,
                      service_name: str | None = None) -> list[dict]:
    """Answer: how did the first failing hops change over time, bucket by bucket of `step_ns`?

    Rows (buckets without blamed tasks are absent), oldest bucket first: bucket_ns, bucket
    (RFC 3339), ffh_kind, ffh_name, ffh_reason, tasks, seconds_lost, share (of the bucket's
    blamed tasks).
    """
    sql = _SERIES_SQL.format(blamed=_BLAMED, filters=TASK_FILTERS)
    rows = fetch_dicts(cur, sql, {"start_ns": start_ns, "end_ns": end_ns, "step_ns": step_ns,
                                  "task_type": task_type, "tenant_id": tenant_id,
                                  "service_name": service_name})
    return [{"bucket": rfc3339(r["bucket_ns"]), **r} for r in rows]
