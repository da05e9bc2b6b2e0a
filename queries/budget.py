"""Where the budget went: each hop kind's self time in the window's finished tasks (a waterfall).

Tasks: finished in the window (by end), root arrived, cancelled and lost excluded. Spans: those
reachable from the task's root through parent ids, each clipped to its parent's (clipped)
interval, the root to the task's; time after the root ended (ghost work) is not budget spent.
Self time of a span = its clipped duration minus the union of its children's clipped intervals
(exact, overlaps merged). Parallel children each keep their own self time, so with parallelism
the kinds' shares can sum past 1; without it they sum to exactly the task durations.
"""

from __future__ import annotations

from agentsla.queries._sql import TASK_FILTERS, fetch_dicts
from agentsla.queries.tasks import SPAN_SLACK_NS

_TASKS = """
window_tasks as (
    select task_id, trace_id, root_span_id, start_ns, end_ns, duration_ms, budget_total_ms,
        span_count
    from tasks
    where finished and outcome not in ('cancelled', 'lost') and root_span_id is not null
      and end_ns >= $start_ns and end_ns < $end_ns{filters}
)"""

#: The spans of the window's tasks: every span the walk can reach has the task's id. With
#: {bound}, only spans starting in [lo_ns, hi_ns] (the tasks' interval plus slack), which the
#: zone maps on start_ns answer from a few row groups; found_spans = expected_spans (the
#: tasks' span_count, written with the spans in one transaction) proves none was left out.
_TASK_SPANS = """
task_spans as (
    select s.task_id, s.trace_id, s.span_id, s.parent_span_id, s.hop_kind, s.start_ns, s.end_ns
    from spans s
    where s.task_id in (select task_id from window_tasks){bound}
)"""
_SPAN_BOUND = """
      and s.start_ns >= $lo_ns and s.start_ns <= $hi_ns"""

_WATERFALL_SQL = """
with recursive {tasks},
{task_spans},
clipped as (
    -- the root clipped to its task, then each child clipped to its clipped parent
    select s.task_id, s.trace_id, s.span_id, s.parent_span_id,
        coalesce(s.hop_kind, 'other') as hop_kind,
        greatest(s.start_ns, t.start_ns) as lo,
        greatest(greatest(s.start_ns, t.start_ns), least(s.end_ns, t.end_ns)) as hi,
        0 as depth
    from task_spans s
    join window_tasks t on s.task_id = t.task_id and s.trace_id = t.trace_id
                       and s.span_id = t.root_span_id
    union all
    select c.task_id, c.trace_id, c.span_id, c.parent_span_id,
        coalesce(c.hop_kind, 'other'),
        greatest(c.start_ns, p.lo),
        greatest(greatest(c.start_ns, p.lo), least(c.end_ns, p.hi)),
        p.depth + 1
    from task_spans c
    join clipped p on c.task_id = p.task_id and c.trace_id = p.trace_id
                  and c.parent_span_id = p.span_id
    where p.depth < 200  -- a malformed parent cycle must not recurse forever
),
children as (
    select task_id, trace_id, parent_span_id as parent_id, lo, hi
    from clipped
    where hi > lo and depth > 0
),
marked as (
    -- a child opens a new island when it starts after every earlier sibling has ended
    select *,
        case when lo > coalesce(max(hi) over (partition by task_id, trace_id, parent_id
                                              order by lo, hi rows between unbounded preceding
                                              and 1 preceding), lo - 1)
             then 1 else 0 end as opens_island
    from children
),
islands as (
    select task_id, trace_id, parent_id, min(lo) as lo, max(hi) as hi
    from (select *, sum(opens_island) over (partition by task_id, trace_id, parent_id
                                            order by lo, hi rows unbounded preceding) as island
          from marked)
    group by task_id, trace_id, parent_id, island
),
covered as (
    select task_id, trace_id, parent_id, sum(hi - lo) as covered_ns
    from islands
    group by task_id, trace_id, parent_id
),
self_time as (
    select c.task_id, c.hop_kind, (c.hi - c.lo) - coalesce(v.covered_ns, 0) as self_ns
    from clipped c
    left join covered v on v.task_id = c.task_id and v.trace_id = c.trace_id
                       and v.parent_id = c.span_id
),
per_kind as (
    select s.hop_kind,
        count(distinct s.task_id) as tasks_with_hop,
        sum(s.self_ns) / 1e6 as self_ms,
        coalesce(sum(s.self_ns) filter (where t.budget_total_ms > 0), 0) / 1e6 as budgeted_self_ms
    from self_time s
    join window_tasks t using (task_id)
    group by s.hop_kind
),
totals as (
    select count(*) as tasks, sum(duration_ms) as duration_ms,
        sum(budget_total_ms) filter (where budget_total_ms > 0) as budget_ms
    from window_tasks
)
select k.hop_kind, k.tasks_with_hop, k.self_ms,
    k.self_ms / t.tasks as avg_ms_per_task,
    k.self_ms / nullif(t.duration_ms, 0) as share_of_duration,
    k.budgeted_self_ms / t.budget_ms as share_of_budget,
    (select count(*) from task_spans) as found_spans,
    (select sum(span_count) from window_tasks) as expected_spans
from per_kind k
cross join totals t
order by k.self_ms desc, k.hop_kind
"""

_TOTALS_SQL = """
with {tasks}
select
    count(*) as tasks,
    count(*) filter (where budget_total_ms > 0) as tasks_with_budget,
    avg(duration_ms) as avg_duration_ms,
    avg(budget_total_ms) filter (where budget_total_ms > 0) as avg_budget_ms,
    1 - sum(duration_ms) filter (where budget_total_ms > 0)
        / sum(budget_total_ms) filter (where budget_total_ms > 0) as unused_budget_share,
    min(start_ns) as first_start_ns, max(end_ns) as last_end_ns, sum(span_count) as span_count
from window_tasks
"""


def budget_waterfall(cur, start_ns: int, end_ns: int, task_type: str | None = None,
                     tenant_id: str | None = None, service_name: str | None = None) -> dict:
    """Answer: where did the budget of the tasks that finished in the window go, by hop kind?

    Returns {tasks, tasks_with_budget, avg_duration_ms, avg_budget_ms, unused_budget_share
    (1 - duration/budget over budgeted tasks), by_hop_kind: rows of hop_kind, tasks_with_hop,
    self_ms (total), avg_ms_per_task (over all the tasks), share_of_duration, share_of_budget
    (self time in budgeted tasks / their budgets)}, biggest kind first.
    """
    tasks = _TASKS.format(filters=TASK_FILTERS)
    params = {"start_ns": start_ns, "end_ns": end_ns, "task_type": task_type,
              "tenant_id": tenant_id, "service_name": service_name}
    (totals,) = fetch_dicts(cur, _TOTALS_SQL.format(tasks=tasks), params)
    lo, hi, expected = (totals.pop(k) for k in ("first_start_ns", "last_end_ns", "span_count"))
    kinds = None
    if lo is not None and hi is not None and expected:
        # the tasks' spans start within their interval give or take skew and late work (see
        # queries.tasks._task_spans); trust the bounded read only if it found all of them
        bounded = _TASK_SPANS.format(bound=_SPAN_BOUND)
        kinds = fetch_dicts(cur, _WATERFALL_SQL.format(tasks=tasks, task_spans=bounded), {
            **params, "lo_ns": lo - SPAN_SLACK_NS, "hi_ns": hi + SPAN_SLACK_NS})
        if not kinds or kinds[0]["found_spans"] != kinds[0]["expected_spans"]:
            kinds = None
    if kinds is None:
        kinds = fetch_dicts(cur, _WATERFALL_SQL.format(
            tasks=tasks, task_spans=_TASK_SPANS.format(bound="")), params)
    for row in kinds:
        del row["found_spans"], row["expected_spans"]
    return {**totals, "by_hop_kind": kinds}
