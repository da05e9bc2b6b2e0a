-- queries.root_causes.root_causes: which first failing hops caused the blamed tasks? (Pareto)
-- Over the tasks table (no rollups on ClickHouse yet: the roll_lo/roll_hi split is not used).
with per_cause as (
    select
        ffh_kind, ffh_name, ffh_reason,
        count() as tasks,
        sum(round(coalesce(duration_ms, 0) * 1000)) / 1e6 as seconds_lost,
        countIf(outcome = 'failed') as failed,
        countIf(outcome = 'degraded') as degraded,
        countIf(outcome = 'budget_exhausted') as budget_exhausted,
        countIf(outcome = 'rejected') as rejected
    from tasks
    where finished and outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')
      and end_ns >= {start_ns:Int64} and end_ns < {end_ns:Int64}
{{task_filters}}
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
limit {limit:UInt64}
