-- queries.root_causes.root_causes: which first failing hops caused the blamed tasks? (Pareto)
with {{blamed_tasks}},
per_cause as (
    select
        ffh_kind, ffh_name, ffh_reason,
        count(*) as tasks,
        coalesce(sum(duration_ms), 0) / 1000.0 as seconds_lost,
        count(*) filter (where outcome = 'failed') as failed,
        count(*) filter (where outcome = 'degraded') as degraded,
        count(*) filter (where outcome = 'budget_exhausted') as budget_exhausted,
        count(*) filter (where outcome = 'rejected') as rejected,
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
