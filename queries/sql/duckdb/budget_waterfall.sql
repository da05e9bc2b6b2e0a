-- queries.budget.budget_waterfall: each hop kind's self time in the window's tasks
with recursive {{budget_tasks}},
{{budget_task_spans}},
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
