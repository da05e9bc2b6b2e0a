-- queries.root_causes.root_cause_series: the first failing hops, bucket by bucket of step_ns
-- (a blamed task falls in the bucket holding its end). Over the tasks table: the roll_lo/roll_hi
-- split is not used.
with per_cause as (
    select
        {start_ns:Int64} + intDiv(end_ns - {start_ns:Int64}, {step_ns:Int64}) * {step_ns:Int64}
            as bucket_ns,
        ffh_kind, ffh_name, ffh_reason,
        count() as tasks,
        sum(round(coalesce(duration_ms, 0) * 1000)) / 1e6 as seconds_lost
    from tasks
    where finished and outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')
      and end_ns >= {start_ns:Int64} and end_ns < {end_ns:Int64}
{{task_filters}}
    group by bucket_ns, ffh_kind, ffh_name, ffh_reason
)
select *, tasks / sum(tasks) over (partition by bucket_ns) as share
from per_cause
order by bucket_ns, tasks desc, ffh_kind, ffh_name, ffh_reason
