-- queries.root_causes.root_cause_series: the first failing hops, bucket by bucket of $step_ns
with {{blamed_tasks}},
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
